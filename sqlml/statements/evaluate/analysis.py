"""The analysis of TO EVALUATE: its WITH attributes checked, the IR made."""

from __future__ import annotations

from sqlml.metrics import METRICS
from sqlml.semantics.attributes import Attr, check_attributes
from sqlml.semantics.lowering import (
    OUTPUT_REPLACE,
    Output,
    check_plot,
    error,
    lower_selecting,
    single_part,
    where,
)
from sqlml.statements.evaluate import syntax
from sqlml.statements.evaluate.ir import EvaluateStatement

EVALUATE_ATTRIBUTES = {
    "validation.metrics": Attr(
        "validation.metrics",
        "string",
        None,
        "comma-separated metrics to compute, e.g. 'accuracy,auc' (default: all that apply): "
        + ", ".join(METRICS),
    ),
    "evaluate.plot": Attr(
        "evaluate.plot",
        "string",
        None,
        "also save a plot to this PNG file (relative paths: from the program's folder): ROC "
        "and precision-recall curves for binary classifiers, a confusion matrix for more "
        "classes, predicted against actual values for regressors; needs the plot extra",
    ),
    "output.replace": OUTPUT_REPLACE,
}


def _lower(statement: syntax.EvaluateStatement, step_id: str, dialect: str) -> EvaluateStatement:
    attributes = check_attributes(statement.attributes, EVALUATE_ATTRIBUTES, "TO EVALUATE")
    metrics = attributes.get("validation.metrics")
    if metrics is not None:
        unknown = [m for m in _metric_names(metrics) if m not in METRICS]
        if unknown:
            raise error(
                f"unknown metric {', '.join(unknown)} in validation.metrics",
                statement.attributes[0].pos,
                "the metrics are " + ", ".join(METRICS),
            )
        attributes["validation.metrics"] = ",".join(_metric_names(metrics))
    check_plot(statement, attributes, "evaluate.plot", "evaluation")
    return EvaluateStatement(
        id=step_id,
        text=statement.text,
        **where(statement.pos),
        select=statement.select,
        model=str(statement.model),
        label=single_part(statement.label, "LABEL"),
        table=list(statement.into.parts),
        attributes=attributes,
    )


def _metric_names(text: str) -> list[str]:
    aliases = {"f1score": "f1", "logloss": "log_loss"}
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    return [aliases.get(name, name) for name in names]


def lower(statement: syntax.EvaluateStatement, prefix: str, dialect: str) -> EvaluateStatement:
    """The IR of a TO EVALUATE (its SELECT in sqlglot's ``dialect``)."""
    return lower_selecting(
        statement, prefix, dialect, "TO EVALUATE", statement.model, _lower, _output
    )


def _output(statement: syntax.EvaluateStatement, lowered: EvaluateStatement) -> Output:
    replace = lowered.attributes["output.replace"]
    return Output(lowered.table, statement.into.pos, replace, "TO EVALUATE")
