"""TO EVALUATE: a stored model's metrics on the rows of a SELECT, into a table."""

from sqlml.statements.evaluate import syntax
from sqlml.statements.evaluate.ir import EvaluateStatement
from sqlml.statements.kind import Completion, Effects, StatementKind

KINDS = (
    StatementKind(
        name="evaluate",
        ir=EvaluateStatement,
        syntax=syntax.EvaluateStatement,
        grammar=syntax.FRAGMENT,
        analysis=f"{__name__}.analysis:lower",
        attributes=f"{__name__}.analysis:EVALUATE_ATTRIBUTES",
        step="evaluate",
        handler="sqlml.runtime.inference:evaluate",
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
