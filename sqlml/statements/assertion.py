"""ASSERT: fail the run unless a SQL condition holds on the data."""

from sqlml import ir
from sqlml.grammar import ast
from sqlml.statements.kind import Effects, StatementKind

KINDS = (
    StatementKind(
        name="assert",
        ir=ir.AssertStatement,
        syntax=ast.AssertStatement,
        analysis="sqlml.semantics.analyze:lower_assert",
        step="assertion",
        handler="sqlml.runtime.assertion:check",
        effects=Effects(queries=("select",)),
    ),
)
