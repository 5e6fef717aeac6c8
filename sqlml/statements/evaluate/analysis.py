"""The analysis of TO EVALUATE: its WITH attributes checked (without LABEL, none that
needs one), the IR made."""

from __future__ import annotations

from sqlml.metrics import METRICS, SCIKIT_LEARN_CLUSTERING_METRICS, SQLFLOW_METRICS, split_names
from sqlml.semantics.attributes import Attr, check_attributes, pod_resources
from sqlml.semantics.lowering import (
    OUTPUT_REPLACE,
    Output,
    check_plot,
    error,
    lower_selecting,
    single_part,
    where,
)
from sqlml.semantics.metric_names import check_metrics, unlabelled_misfit
from sqlml.statements.evaluate import syntax
from sqlml.statements.evaluate.ir import EvaluateStatement

EVALUATE_ATTRIBUTES = {
    "validation.metrics": Attr(
        "validation.metrics",
        "string",
        None,
        "comma-separated metrics to compute, e.g. 'accuracy,auc' (default: all that apply): "
        + ", ".join(METRICS)
        + "; SQLFlow's scikit-learn and Keras names too, reported as written: "
        + ", ".join(SQLFLOW_METRICS)
        + "; and scikit-learn's names of the clustering metrics: "
        + ", ".join(SCIKIT_LEARN_CLUSTERING_METRICS),
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
    **pod_resources("evaluate"),
}


def _lower(statement: syntax.EvaluateNode, step_id: str, dialect: str) -> EvaluateStatement:
    attributes = check_attributes(statement.attributes, EVALUATE_ATTRIBUTES, "TO EVALUATE")
    given = next((a for a in statement.attributes if a.name == "validation.metrics"), None)
    if given is not None:
        attributes["validation.metrics"] = check_metrics(given, None, str(statement.model))
        wrong = statement.label is None and unlabelled_misfit(
            split_names(attributes["validation.metrics"]), str(statement.model)
        )
        if wrong:
            raise error(wrong[0], statement.into_pos, wrong[1])
    check_plot(statement, attributes, "evaluate.plot", "evaluation")
    return EvaluateStatement(
        id=step_id,
        text=statement.text,
        **where(statement.pos),
        select=statement.select,
        model=str(statement.model),
        version=statement.model.version,
        label=single_part(statement.label, "LABEL") if statement.label else "",
        table=list(statement.into.parts),
        attributes=attributes,
    )


def lower(statement: syntax.EvaluateNode, prefix: str, dialect: str) -> EvaluateStatement:
    """The IR of a TO EVALUATE (its SELECT in sqlglot's ``dialect``)."""
    return lower_selecting(
        statement, prefix, dialect, "TO EVALUATE", statement.model, _lower, _output
    )


def _output(statement: syntax.EvaluateNode, lowered: EvaluateStatement) -> Output:
    replace = lowered.attributes["output.replace"]
    return Output(lowered.table, statement.into.pos, replace, "TO EVALUATE")
