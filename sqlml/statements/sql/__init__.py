"""Standard SQL: passed to the database as written."""

from sqlml.statements.kind import Effects, StatementKind
from sqlml.statements.sql import syntax
from sqlml.statements.sql.ir import SqlStatement

KINDS = (
    StatementKind(
        name="sql",
        ir=SqlStatement,
        syntax=syntax.SqlStatement,
        grammar=syntax.FRAGMENT,
        analysis=f"{__name__}.analysis:lower",
        step="sql",
        handler="sqlml.runtime.standard_sql:run",
        effects=Effects(standard_sql=True),
    ),
)
