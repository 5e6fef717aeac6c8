"""ASSERT: fail the run unless a SQL condition holds on the data."""

from sqlml.statements.assertion import syntax
from sqlml.statements.assertion.ir import AssertStatement
from sqlml.statements.kind import Effects, StatementKind

KINDS = (
    StatementKind(
        name="assert",
        ir=AssertStatement,
        syntax=syntax.AssertStatement,
        grammar=syntax.FRAGMENT,
        analysis=f"{__name__}.analysis:lower",
        step="assertion",
        handler="sqlml.runtime.assertion:check",
        effects=Effects(queries=("select",)),
    ),
)
