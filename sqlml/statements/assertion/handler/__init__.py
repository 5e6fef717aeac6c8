"""Run an ASSERT: a failed ``ASSERT ... WARN`` is a warning, the others fail their step."""

from __future__ import annotations

from sqlml import ir
from sqlml.errors import WARNING_SUMMARY, SqlmlWarning, summary_warning
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome
from sqlml.statements.assertion.handler.check import AssertionFailed
from sqlml.statements.assertion.handler.check import check as check_assertion


def check(statement: ir.AssertStatement, context: Context) -> Outcome:
    """Check the assertion; if a WARN one fails, its failure is the summary, a warning
    (:func:`sqlml.errors.summary_warning` reads it), and the step succeeds."""
    try:
        return check_assertion(statement, context)
    except AssertionFailed as failed:
        if not statement.warn:
            raise
        return Outcome(summary=f"{WARNING_SUMMARY}line {statement.line}: {failed.message}")


def warned(statement: ir.Statement, result: str | None) -> SqlmlWarning | None:
    """The warning a ``statement`` whose step's result is ``result`` reported, if any."""
    if not getattr(statement, "warn", False):
        return None
    return summary_warning(result, statement.line, statement.column)
