"""TO PREDICT: a stored model's predictions for the rows of a SELECT, into a table."""

from sqlml.statements.kind import Completion, Effects, StatementKind

KINDS = (
    StatementKind(
        name="predict",
        ir=f"{__name__}.ir:PredictStatement",
        syntax=f"{__name__}.syntax:PredictNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("PREDICT",),
        analysis=f"{__name__}.analysis:lower",
        attributes=f"{__name__}.analysis:PREDICT_ATTRIBUTES",
        step="predict",
        handler="sqlml.statements.predict.handler:predict",
        effects=Effects(
            queries=("select",),
            reads_models=("model",),
            writes_tables=("table",),
            replace="attributes.output.replace",
        ),
        completion=Completion(after={"PREDICT": "table", "USING": "model"}),
    ),
)
