"""SHOW TRAIN, SHOW MODELS, DESCRIBE MODEL and DROP MODEL: statements on the model store."""

from sqlml import ir
from sqlml.grammar import ast
from sqlml.statements.kind import Effects, StatementKind

_HANDLERS = "sqlml.runtime.model_admin"
_ANALYSIS = "sqlml.semantics.analyze"

KINDS = (
    StatementKind(
        name="show_train",
        ir=ir.ShowTrainStatement,
        syntax=ast.ShowTrainStatement,
        analysis=f"{_ANALYSIS}:lower_show_train",
        step="model_admin",
        handler=f"{_HANDLERS}:show_train",
        effects=Effects(reads_models=("model",)),
    ),
    StatementKind(
        name="show_models",
        ir=ir.ShowModelsStatement,
        syntax=ast.ShowModelsStatement,
        analysis=f"{_ANALYSIS}:lower_show_models",
        step="model_admin",
        handler=f"{_HANDLERS}:show_models",
        effects=Effects(reads_all_models=True),
    ),
    StatementKind(
        name="describe_model",
        ir=ir.DescribeModelStatement,
        syntax=ast.DescribeModelStatement,
        analysis=f"{_ANALYSIS}:lower_describe_model",
        step="model_admin",
        handler=f"{_HANDLERS}:describe_model",
        effects=Effects(reads_models=("model",)),
    ),
    StatementKind(
        name="drop_model",
        ir=ir.DropModelStatement,
        syntax=ast.DropModelStatement,
        analysis=f"{_ANALYSIS}:lower_drop_model",
        step="model_admin",
        handler=f"{_HANDLERS}:drop_model",
        effects=Effects(drops_models=("model",)),
    ),
)
