"""SHOW TRAIN, SHOW MODELS, DESCRIBE MODEL and DROP MODEL: statements on the model store."""

from sqlml.statements.kind import Completion, Effects, StatementKind

_HANDLERS = "sqlml.statements.model_admin.handler"
_ANALYSIS = f"{__name__}.analysis"

KINDS = (
    StatementKind(
        name="show_train",
        ir=f"{__name__}.ir:ShowTrainStatement",
        syntax=f"{__name__}.syntax:ShowTrainNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("TRAIN",),
        analysis=f"{_ANALYSIS}:lower_show_train",
        step="model_admin",
        handler=f"{_HANDLERS}:show_train",
        effects=Effects(reads_models=("model",)),
        completion=Completion(models_after=(("SHOW", "TRAIN"),)),
    ),
    StatementKind(
        name="show_models",
        ir=f"{__name__}.ir:ShowModelsStatement",
        syntax=f"{__name__}.syntax:ShowModelsNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("MODELS",),
        analysis=f"{_ANALYSIS}:lower_show_models",
        step="model_admin",
        handler=f"{_HANDLERS}:show_models",
        effects=Effects(reads_all_models=True),
    ),
    StatementKind(
        name="describe_model",
        ir=f"{__name__}.ir:DescribeModelStatement",
        syntax=f"{__name__}.syntax:DescribeModelNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("MODEL",),
        analysis=f"{_ANALYSIS}:lower_describe_model",
        step="model_admin",
        handler=f"{_HANDLERS}:describe_model",
        effects=Effects(reads_models=("model",)),
        completion=Completion(models_after=(("DESCRIBE", "MODEL"), ("DESC", "MODEL"))),
    ),
    StatementKind(
        name="drop_model",
        ir=f"{__name__}.ir:DropModelStatement",
        syntax=f"{__name__}.syntax:DropModelNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("MODEL",),
        analysis=f"{_ANALYSIS}:lower_drop_model",
        step="model_admin",
        handler=f"{_HANDLERS}:drop_model",
        effects=Effects(drops_models=("model",)),
        completion=Completion(models_after=(("DROP", "MODEL"), ("DROP", "MODEL", "IF", "EXISTS"))),
    ),
)
