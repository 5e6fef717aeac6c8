"""The analysis of TO PREDICT: its WITH attributes checked, the IR made."""

from __future__ import annotations

from sqlml.semantics.attributes import Attr, check_attributes, not_applied, pod_resources
from sqlml.semantics.lowering import OUTPUT_REPLACE, Output, error, lower_selecting, where
from sqlml.statements.predict import syntax
from sqlml.statements.predict.ir import PredictStatement

EXTRA_OUTPUTS = ("probabilities",)
PREDICT_ATTRIBUTES = {
    "predict.batch_size": Attr(
        "predict.batch_size", "int", 65536, "rows predicted and written per batch", minimum=1
    ),
    "predict.extra_outputs": Attr(
        "predict.extra_outputs",
        "string",
        None,
        "comma-separated extra result columns; 'probabilities' (classifiers): a column per "
        "class, <result>_<class> (or <result>_prob_<i>), holding its probability",
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
        names = [name.strip().lower() for name in extras.split(",") if name.strip()]
        unknown = [name for name in names if name not in EXTRA_OUTPUTS]
        if unknown or not names:
            attribute = next(a for a in statement.attributes if a.name == "predict.extra_outputs")
            raise error(
                f"unknown extra output {', '.join(unknown) or repr(extras)} in "
                "predict.extra_outputs",
                attribute.pos,
                "the extra outputs are " + ", ".join(EXTRA_OUTPUTS),
            )
        attributes["predict.extra_outputs"] = ",".join(dict.fromkeys(names))
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


def lower(statement: syntax.PredictNode, prefix: str, dialect: str) -> PredictStatement:
    """The IR of a TO PREDICT (its SELECT in sqlglot's ``dialect``)."""
    return lower_selecting(
        statement, prefix, dialect, "TO PREDICT", statement.target, _lower, _output
    )


def _output(statement: syntax.PredictNode, lowered: PredictStatement) -> Output:
    replace = lowered.attributes["output.replace"]
    return Output(lowered.table, statement.target.pos, replace, "TO PREDICT")
