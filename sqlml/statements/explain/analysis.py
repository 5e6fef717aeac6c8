"""The analysis of TO EXPLAIN: its explainer and WITH attributes checked, the IR made."""

from __future__ import annotations

from sqlml.semantics.attributes import Attr, check_attributes
from sqlml.semantics.lowering import (
    OUTPUT_REPLACE,
    Output,
    check_plot,
    error,
    lower_selecting,
    where,
)
from sqlml.statements.explain import syntax
from sqlml.statements.explain.ir import EXPLAINERS, ExplainStatement

EXPLAIN_ATTRIBUTES = {
    "explain.seed": Attr("explain.seed", "int", 0, "seed for PermutationExplainer's shuffles"),
    "explain.plot": Attr(
        "explain.plot",
        "string",
        None,
        "also save a summary plot of the attributions to this PNG file (relative paths: from "
        "the program's folder); needs the plot extra",
    ),
    "output.replace": OUTPUT_REPLACE,
}


def _lower(statement: syntax.ExplainStatement, step_id: str, dialect: str) -> ExplainStatement:
    attributes = check_attributes(statement.attributes, EXPLAIN_ATTRIBUTES, "TO EXPLAIN")
    explainer = None
    if statement.explainer is not None:
        explainer = next(
            (e for e in EXPLAINERS if e.lower() == str(statement.explainer).lower()), None
        )
        if explainer is None:
            raise error(
                f"unknown explainer {statement.explainer}",
                statement.explainer.pos,
                "the explainers are " + ", ".join(EXPLAINERS),
            )
    check_plot(statement, attributes, "explain.plot", "explain")
    given = next((a for a in statement.attributes if a.name == "output.replace"), None)
    if statement.into is None and given is not None:
        raise error(
            "TO EXPLAIN without INTO writes no table: output.replace has nothing to replace",
            given.pos,
            "remove it, or add INTO <table>",
        )
    return ExplainStatement(
        id=step_id,
        text=statement.text,
        **where(statement.pos),
        select=statement.select,
        model=str(statement.model),
        explainer=explainer,
        table=list(statement.into.parts) if statement.into else None,
        attributes=attributes,
    )


def lower(statement: syntax.ExplainStatement, prefix: str, dialect: str) -> ExplainStatement:
    """The IR of a TO EXPLAIN (its SELECT in sqlglot's ``dialect``)."""
    return lower_selecting(
        statement, prefix, dialect, "TO EXPLAIN", statement.model, _lower, _output
    )


def _output(statement: syntax.ExplainStatement, lowered: ExplainStatement) -> Output | None:
    if lowered.table is None or statement.into is None:
        return None
    replace = lowered.attributes["output.replace"]
    return Output(lowered.table, statement.into.pos, replace, "TO EXPLAIN")
