"""TO EVALUATE: a stored model's metrics on the rows of a SELECT, into a table."""

from sqlml import ir
from sqlml.grammar import ast
from sqlml.statements.kind import Effects, StatementKind

KINDS = (
    StatementKind(
        name="evaluate",
        ir=ir.EvaluateStatement,
        syntax=ast.EvaluateStatement,
        analysis="sqlml.semantics.analyze:lower_evaluate",
        step="evaluate",
        handler="sqlml.runtime.inference:evaluate",
        effects=Effects(
            queries=("select",),
            reads_models=("model",),
            writes_tables=("table",),
            replace="attributes.output.replace",
        ),
    ),
)
