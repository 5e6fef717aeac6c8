"""TO PREDICT: a stored model's predictions for the rows of a SELECT, into a table."""

from sqlml import ir
from sqlml.grammar import ast
from sqlml.statements.kind import Effects, StatementKind

KINDS = (
    StatementKind(
        name="predict",
        ir=ir.PredictStatement,
        syntax=ast.PredictStatement,
        analysis="sqlml.semantics.analyze:lower_predict",
        step="predict",
        handler="sqlml.runtime.inference:predict",
        effects=Effects(
            queries=("select",),
            reads_models=("model",),
            writes_tables=("table",),
            replace="attributes.output.replace",
        ),
    ),
)
