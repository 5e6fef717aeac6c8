"""SHOW TRAIN, SHOW MODELS, SHOW MODEL VERSIONS, DESCRIBE MODEL, DROP MODEL and ALTER MODEL:
statements on the model store."""

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
        name="show_model_versions",
        ir=f"{__name__}.ir:ShowModelVersionsStatement",
        syntax=f"{__name__}.syntax:ShowModelVersionsNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("VERSIONS",),
        analysis=f"{_ANALYSIS}:lower_show_model_versions",
        step="model_admin",
        handler=f"{_HANDLERS}:show_model_versions",
        effects=Effects(reads_all_models=True),
        completion=Completion(models_after=(("SHOW", "MODEL", "VERSIONS"),)),
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
    StatementKind(
        name="alter_model",
        ir=f"{__name__}.ir:AlterModelStatement",
        syntax=f"{__name__}.syntax:AlterModelNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("MODEL",),
        analysis=f"{_ANALYSIS}:lower_alter_model",
        step="model_admin",
        handler=f"{_HANDLERS}:alter_model",
        effects=Effects(alters_models=("model",)),
        completion=Completion(models_after=(("ALTER", "MODEL"),)),
    ),
)
