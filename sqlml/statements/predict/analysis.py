"""The analysis of TO PREDICT: its WITH attributes checked, the IR made."""

from __future__ import annotations

from sqlml.models import PROBABILITIES, families
from sqlml.semantics.attributes import Attr, check_attributes, not_applied, pod_resources
from sqlml.semantics.lowering import OUTPUT_REPLACE, Output, error, lower_selecting, where
from sqlml.statements.predict import syntax
from sqlml.statements.predict.ir import PredictStatement

PREDICT_ATTRIBUTES = {
    "predict.batch_size": Attr(
        "predict.batch_size", "int", 65536, "rows predicted and written per batch", minimum=1
    ),
    "predict.extra_outputs": Attr(
        "predict.extra_outputs",
        "string",
        None,
        "comma-separated extra result columns the model offers: 'probabilities' "
        "(classifiers): a column per class, <result>_<class> (or <result>_prob_<i>), holding "
        "its probability; 'score' (outlier detectors): a column score, the decision function",
    ),
    "predict.confidence_level": Attr(
        "predict.confidence_level",
        "float",
        None,
        "forecasting models: the probability that the prediction interval holds the value, "
        "its bounds in the columns <result>_lower and <result>_upper",
        minimum=0,
        maximum=0.999,
        exclusive_minimum=True,
    ),
    "output.replace": OUTPUT_REPLACE,
    "predict.num_workers": not_applied(
        "predict.num_workers",
        "int",
        "SQLFlow on PAI: workers that predict",
        "sqlml predicts in one process, predict.batch_size rows at a time",
        minimum=1,
    ),
    **pod_resources("predict"),
}


def _lower(statement: syntax.PredictNode, step_id: str, dialect: str) -> PredictStatement:
    """The IR; a target of one part is the table, its result column named at run time after
    the model's label (SQLFlow's ``TO PREDICT <table>``)."""
    target = statement.target
    table, column = (
        (target.parts[:-1], target.parts[-1]) if len(target.parts) > 1 else (target.parts, None)
    )
    attributes = check_attributes(statement.attributes, PREDICT_ATTRIBUTES, "TO PREDICT")
    extras = attributes.get("predict.extra_outputs")
    if extras is not None:
        attributes["predict.extra_outputs"] = _extra_outputs(statement, extras)
    return PredictStatement(
        id=step_id,
        text=statement.text,
        **where(statement.pos),
        select=statement.select,
        table=list(table),
        result_column=column,
        model=str(statement.using),
        version=statement.using.version,
        attributes=attributes,
    )


def extra_outputs_known() -> list[str]:
    """The extra outputs some family's models offer: class probabilities, and the families'
    own (which the model used offers is known at run time)."""
    own = (name for each in families().values() for name in each.own_extra_outputs)
    return list(dict.fromkeys([PROBABILITIES, *own]))


def _extra_outputs(statement: syntax.PredictNode, extras: str) -> str:
    """``predict.extra_outputs``'s names, lower case, once each; an error at the attribute
    for none, or for one no family's models offer."""
    names = [name.strip().lower() for name in extras.split(",") if name.strip()]
    known = extra_outputs_known()
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        attribute = next(a for a in statement.attributes if a.name == "predict.extra_outputs")
        raise error(
            f"unknown extra output {', '.join(unknown) or repr(extras)} in predict.extra_outputs",
            attribute.pos,
            "the extra outputs models offer are " + ", ".join(known),
        )
    return ",".join(dict.fromkeys(names))


def lower(statement: syntax.PredictNode, prefix: str, dialect: str) -> PredictStatement:
    """The IR of a TO PREDICT (its SELECT in sqlglot's ``dialect``)."""
    return lower_selecting(
        statement, prefix, dialect, "TO PREDICT", statement.target, _lower, _output
    )


def _output(statement: syntax.PredictNode, lowered: PredictStatement) -> Output:
    replace = lowered.attributes["output.replace"]
    return Output(lowered.table, statement.target.pos, replace, "TO PREDICT")
