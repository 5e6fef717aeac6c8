"""TO EXPLAIN: per-feature attributions of a stored model, shown or written to a table."""

from sqlml.statements.explain import syntax
from sqlml.statements.explain.ir import EXPLAINERS, ExplainStatement
from sqlml.statements.kind import Completion, Effects, StatementKind

KINDS = (
    StatementKind(
        name="explain",
        ir=ExplainStatement,
        syntax=syntax.ExplainStatement,
        grammar=syntax.FRAGMENT,
        analysis=f"{__name__}.analysis:lower",
        attributes=f"{__name__}.analysis:EXPLAIN_ATTRIBUTES",
        step="explain",
        handler="sqlml.runtime.inference:explain",
        effects=Effects(
            queries=("select",),
            reads_models=("model",),
            writes_tables=("table",),
            replace="attributes.output.replace",
        ),
        completion=Completion(
            after={"EXPLAIN": "model", "USING": ("explainer", EXPLAINERS), "INTO": "table"}
        ),
    ),
)
