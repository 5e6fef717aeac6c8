"""Standard SQL: passed to the database as written."""

from sqlml.statements.kind import Effects, StatementKind

KINDS = (
    StatementKind(
        name="sql",
        ir=f"{__name__}.ir:SqlStatement",
        syntax=f"{__name__}.syntax:SqlNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        analysis=f"{__name__}.analysis:lower",
        step="sql",
        handler="sqlml.statements.sql.handler:run",
        effects=Effects(reads_models=("models[]",), standard_sql=True),
    ),
)
