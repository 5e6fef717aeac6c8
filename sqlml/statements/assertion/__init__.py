"""ASSERT: fail the run unless a SQL condition holds on the data (WARN: warn instead)."""

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
        handler=f"{__name__}.handler:check",
        effects=Effects(queries=("select",)),
    ),
)
