"""TO EXPLAIN: per-feature attributions of a stored model, shown or written to a table."""

from sqlml.statements.kind import Completion, Effects, StatementKind

KINDS = (
    StatementKind(
        name="explain",
        ir=f"{__name__}.ir:ExplainStatement",
        syntax=f"{__name__}.syntax:ExplainNode",
        grammar=f"{__name__}.syntax:FRAGMENT",
        keywords=("EXPLAIN",),
        analysis=f"{__name__}.analysis:lower",
        attributes=f"{__name__}.analysis:EXPLAIN_ATTRIBUTES",
        step="explain",
        handler="sqlml.statements.explain.handler:explain",
        effects=Effects(
            queries=("select",),
            reads_models=("model",),
            writes_tables=("table",),
            writes_files=("attributes.explain.plot",),
            replace="attributes.output.replace",
        ),
        completion=Completion(
            after={
                "EXPLAIN": "model",
                # tests/test_repl.py pins these two; the others are accepted all the same
                "USING": ("explainer", ("TreeExplainer", "PermutationExplainer")),
                "INTO": "table",
            }
        ),
    ),
)
