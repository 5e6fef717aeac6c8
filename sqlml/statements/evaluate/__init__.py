"""TO EVALUATE: a stored model's metrics on the rows of a SELECT, into a table."""

from sqlml.statements.kind import Completion, Effects, StatementKind

KINDS = (
    StatementKind(
        name="evaluate",
        ir=f"{__name__}.ir:EvaluateStatement",
        syntax=f"{__name__}.syntax:EvaluateNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("EVALUATE",),
        analysis=f"{__name__}.analysis:lower",
        attributes=f"{__name__}.analysis:EVALUATE_ATTRIBUTES",
        step="evaluate",
        handler="sqlml.statements.evaluate.handler:evaluate",
        effects=Effects(
            queries=("select",),
            reads_models=("model",),
            writes_tables=("table",),
            writes_files=("attributes.evaluate.plot",),
            replace="attributes.output.replace",
        ),
        completion=Completion(after={"EVALUATE": "model", "INTO": "table"}),
    ),
)
