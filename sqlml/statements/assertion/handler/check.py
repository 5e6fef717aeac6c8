"""Run an ASSERT: evaluate its condition in the database and fail the step unless it holds."""

from __future__ import annotations

from typing import Any

from sqlml import ir
from sqlml.datasources import Datasource
from sqlml.errors import SqlmlError
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome

_SHOWN_CHARS = 200  # of the condition, in messages


class AssertionFailed(SqlmlError):
    """An ASSERT's condition is false or NULL on the data."""


def check(statement: ir.AssertStatement, context: Context) -> Outcome:
    """Pass if the condition is true; else raise :class:`AssertionFailed` with the values of
    its scalar subqueries."""
    datasource = context.datasource
    result = datasource.execute(statement.select)
    holds = result.rows[0][0] if result is not None and result.rows else None
    condition = _shown(statement.condition)
    if holds is not None and int(holds) == 1:
        return Outcome(summary=f"assertion holds: {condition}")
    outcome = "is NULL (counted as false)" if holds is None else "is false"
    observed = _observed(statement, datasource)
    why = f"{statement.message}: " if statement.message else ""
    raise AssertionFailed(
        f"ASSERT failed: {why}{condition} {outcome}{observed}",
        hint="the data breaks the condition: check the statements that write the tables it reads",
    )


def _observed(statement: ir.AssertStatement, datasource: Datasource) -> str:
    """``; accuracy was 0.87``: the values of the condition's scalar subqueries, if any."""
    if not statement.observed:
        return ""
    try:
        result = datasource.execute("SELECT " + ", ".join(sql for _, sql in statement.observed))
    except SqlmlError:  # the values are a courtesy: the failure is reported without them
        return ""
    if result is None or not result.rows:
        return ""
    values = [
        f"{label} was {_value(value)}"
        for (label, _), value in zip(statement.observed, result.rows[0], strict=False)
    ]
    return "; " + ", ".join(values)


def _value(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value) if isinstance(value, str) else str(value)


def _shown(condition: str) -> str:
    text = " ".join(condition.split())
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."
