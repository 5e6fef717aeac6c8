"""The analysis of the statements on the model store: nothing to check, the IR made."""

from __future__ import annotations

from sqlml.semantics.lowering import common
from sqlml.statements.model_admin import ir, syntax


def lower_show_train(
    statement: syntax.ShowTrainNode, prefix: str, dialect: str
) -> ir.ShowTrainStatement:
    return ir.ShowTrainStatement(
        **common(statement, prefix, "show-train"),
        model=str(statement.model),
        version=statement.model.version,
    )


def lower_show_models(
    statement: syntax.ShowModelsNode, prefix: str, dialect: str
) -> ir.ShowModelsStatement:
    return ir.ShowModelsStatement(**common(statement, prefix, "show-models"))


def lower_show_model_versions(
    statement: syntax.ShowModelVersionsNode, prefix: str, dialect: str
) -> ir.ShowModelVersionsStatement:
    model = None if statement.model is None else str(statement.model)
    return ir.ShowModelVersionsStatement(
        **common(statement, prefix, "show-model-versions"), model=model
    )


def lower_describe_model(
    statement: syntax.DescribeModelNode, prefix: str, dialect: str
) -> ir.DescribeModelStatement:
    return ir.DescribeModelStatement(
        **common(statement, prefix, "describe-model"),
        model=str(statement.model),
        version=statement.model.version,
    )


def lower_drop_model(
    statement: syntax.DropModelNode, prefix: str, dialect: str
) -> ir.DropModelStatement:
    return ir.DropModelStatement(
        **common(statement, prefix, "drop-model"),
        model=str(statement.model),
        if_exists=statement.if_exists,
    )


def lower_alter_model(
    statement: syntax.AlterModelNode, prefix: str, dialect: str
) -> ir.AlterModelStatement:
    return ir.AlterModelStatement(
        **common(statement, prefix, "alter-model"),
        model=str(statement.model),
        action=statement.action,
        alias=statement.alias,
        version=statement.version,
        keep=statement.keep,
    )
