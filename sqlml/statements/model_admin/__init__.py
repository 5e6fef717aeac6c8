"""SHOW TRAIN, SHOW MODELS, DESCRIBE MODEL and DROP MODEL: statements on the model store."""

from sqlml.statements.kind import Completion, Effects, StatementKind
from sqlml.statements.model_admin import ir, syntax

_HANDLERS = "sqlml.runtime.model_admin"
_ANALYSIS = f"{__name__}.analysis"

KINDS = (
    StatementKind(
        name="show_train",
        ir=ir.ShowTrainStatement,
        syntax=syntax.ShowTrainStatement,
        grammar=syntax.FRAGMENT,
        analysis=f"{_ANALYSIS}:lower_show_train",
        step="model_admin",
        handler=f"{_HANDLERS}:show_train",
        effects=Effects(reads_models=("model",)),
        completion=Completion(models_after=(("SHOW", "TRAIN"),)),
    ),
    StatementKind(
        name="show_models",
        ir=ir.ShowModelsStatement,
        syntax=syntax.ShowModelsStatement,
        grammar=syntax.FRAGMENT,
        analysis=f"{_ANALYSIS}:lower_show_models",
        step="model_admin",
        handler=f"{_HANDLERS}:show_models",
        effects=Effects(reads_all_models=True),
    ),
    StatementKind(
        name="describe_model",
        ir=ir.DescribeModelStatement,
        syntax=syntax.DescribeModelStatement,
        grammar=syntax.FRAGMENT,
        analysis=f"{_ANALYSIS}:lower_describe_model",
        step="model_admin",
        handler=f"{_HANDLERS}:describe_model",
        effects=Effects(reads_models=("model",)),
        completion=Completion(models_after=(("DESCRIBE", "MODEL"), ("DESC", "MODEL"))),
    ),
    StatementKind(
        name="drop_model",
        ir=ir.DropModelStatement,
        syntax=syntax.DropModelStatement,
        grammar=syntax.FRAGMENT,
        analysis=f"{_ANALYSIS}:lower_drop_model",
        step="model_admin",
        handler=f"{_HANDLERS}:drop_model",
        effects=Effects(drops_models=("model",)),
        completion=Completion(models_after=(("DROP", "MODEL"), ("DROP", "MODEL", "IF", "EXISTS"))),
    ),
)
