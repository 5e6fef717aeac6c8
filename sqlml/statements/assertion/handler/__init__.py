"""Run an ASSERT: a failed ``ASSERT ... WARN`` is a warning, the others fail their step."""

from __future__ import annotations

from sqlml import ir
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome
from sqlml.statements.assertion.handler.check import AssertionFailed
from sqlml.statements.assertion.handler.check import check as check_assertion

WARNING = "warning: "  # starts the summary (and so the step's result) of a warned assertion


def check(statement: ir.AssertStatement, context: Context) -> Outcome:
    """Check the assertion; if a WARN one fails, its failure is the summary, prefixed
    with :data:`WARNING`, and the step succeeds."""
    try:
        return check_assertion(statement, context)
    except AssertionFailed as failed:
        if not statement.warn:
            raise
        return Outcome(summary=f"{WARNING}line {statement.line}: {failed.message}")


def warned(statement: ir.Statement, result: str | None) -> str | None:
    """The warning a ``statement`` whose step's result is ``result`` reported, if any."""
    if not getattr(statement, "warn", False) or not result or not result.startswith(WARNING):
        return None
    return result[len(WARNING) :]
