"""Standard SQL: passed to the database as written."""

from sqlml import ir
from sqlml.grammar import ast
from sqlml.statements.kind import Effects, StatementKind

KINDS = (
    StatementKind(
        name="sql",
        ir=ir.SqlStatement,
        syntax=ast.SqlStatement,
        analysis="sqlml.semantics.analyze:lower_sql",
        step="sql",
        handler="sqlml.runtime.standard_sql:run",
        effects=Effects(standard_sql=True),
    ),
)
