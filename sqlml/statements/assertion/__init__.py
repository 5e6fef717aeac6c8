"""ASSERT: fail the run unless a SQL condition holds on the data (WARN: warn instead)."""

from sqlml.statements.kind import Effects, StatementKind

KINDS = (
    StatementKind(
        name="assert",
        ir=f"{__name__}.ir:AssertStatement",
        syntax=f"{__name__}.syntax:AssertNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("ASSERT",),
        analysis=f"{__name__}.analysis:lower",
        step="assertion",
        handler=f"{__name__}.handler:check",
        effects=Effects(queries=("select",)),
    ),
)
