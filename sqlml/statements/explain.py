"""TO EXPLAIN: per-feature attributions of a stored model, shown or written to a table."""

from sqlml import ir
from sqlml.grammar import ast
from sqlml.statements.kind import Effects, StatementKind

KINDS = (
    StatementKind(
        name="explain",
        ir=ir.ExplainStatement,
        syntax=ast.ExplainStatement,
        analysis="sqlml.semantics.analyze:lower_explain",
        step="explain",
        handler="sqlml.runtime.inference:explain",
        effects=Effects(
            queries=("select",),
            reads_models=("model",),
            writes_tables=("table",),
            replace="attributes.output.replace",
        ),
    ),
)
