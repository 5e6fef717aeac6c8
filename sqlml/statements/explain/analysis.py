"""The analysis of TO EXPLAIN: its explainer and WITH attributes checked, the IR made."""

from __future__ import annotations

from typing import Any

from sqlml.models.registry import families
from sqlml.semantics.attributes import Attr, check_attributes, pod_resources
from sqlml.semantics.lowering import (
    OUTPUT_REPLACE,
    Output,
    check_plot,
    error,
    lower_selecting,
    where,
)
from sqlml.statements.explain import syntax
from sqlml.statements.explain.ir import ExplainStatement

# SQLFlow explains its neural networks with SHAP's KernelExplainer: Shapley values too.
ALIASES = {"kernelexplainer": "ShapleyExplainer"}

# summary.plot_type: the plot types of SHAP's summary_plot that SQLFlow passes through, and
# SQLFlow's decision plot.
PLOT_TYPES = ("dot", "bar", "violin", "layered_violin", "compact_dot", "decision")

EXPLAIN_ATTRIBUTES = {
    "explain.seed": Attr(
        "explain.seed", "int", 0, "seed for the shuffles and samples of the explainers"
    ),
    "explain.background": Attr(
        "explain.background",
        "int",
        None,
        "ShapleyExplainer: how many of the rows (sampled) stand for the average input (default 20)",
        minimum=1,
    ),
    "explain.permutations": Attr(
        "explain.permutations",
        "int",
        None,
        "ShapleyExplainer: feature orders sampled per row (all of them when fewer; default 10)",
        minimum=2,
    ),
    "explain.max_rows": Attr(
        "explain.max_rows",
        "int",
        None,
        "ShapleyExplainer: rows explained at most, drawn at random beyond (default 1000)",
        minimum=1,
    ),
    "summary.plot_type": Attr(
        "summary.plot_type",
        "string",
        None,
        "the summary plot's type (as SHAP's summary_plot; decision: SHAP's decision plot); "
        "any summary.* draws the plot (to explain.plot, else to the model's name + _explain.png)",
        choices=PLOT_TYPES,
    ),
    "summary.sort": Attr(
        "summary.sort", "bool", None, "order the plot's features by importance (default TRUE)"
    ),
    "summary.alpha": Attr(
        "summary.alpha",
        "float",
        None,
        "opacity of the plot's dots, violins or bars (default 1)",
        minimum=0,
        maximum=1,
    ),
    "summary.max_display": Attr(
        "summary.max_display",
        "int",
        None,
        "how many features the plot shows (default 20)",
        minimum=1,
    ),
    "summary.title": Attr("summary.title", "string", None, "the plot's title"),
    "summary.color_bar": Attr(
        "summary.color_bar", "bool", None, "draw the feature-value colour bar (default TRUE)"
    ),
    "summary.use_log_scale": Attr(
        "summary.use_log_scale", "bool", None, "a symmetric log scale for the attributions"
    ),
    "label_col": Attr(
        "label_col",
        "string",
        None,
        "the label column PermutationExplainer scores against (default: the model's label); "
        "the other explainers need no label",
        former=("label_column",),  # SQLFlow's for PAI's random forests
    ),
    "plots": Attr(
        "plots",
        "string",
        None,
        "SQLFlow's early plot choice (force, summary): sqlml draws the summary plot",
        choices=("summary", "force"),
    ),
    "explain.plot": Attr(
        "explain.plot",
        "string",
        None,
        "also save a summary plot of the attributions to this PNG file (relative paths: from "
        "the program's folder); needs the plot extra",
    ),
    "output.replace": OUTPUT_REPLACE,
    **pod_resources("explain"),
}


def explainers() -> tuple[str, ...]:
    """The explainers TO EXPLAIN ... USING names: those the families offer, in their order
    (sqlml's SHAP values of trees, sampled Shapley values of any model's output, no label
    needed, and the loss growth when a feature is shuffled, which needs the label; the
    families' own, as XGBoost's feature importance)."""
    offered = (name for known in families().values() for name in known.explainers)
    return tuple(dict.fromkeys(offered))


def _lower(statement: syntax.ExplainNode, step_id: str, dialect: str) -> ExplainStatement:
    attributes = check_attributes(statement.attributes, EXPLAIN_ATTRIBUTES, "TO EXPLAIN")
    explainer = None
    if statement.explainer is not None:
        given = str(statement.explainer).lower()
        known = explainers()
        explainer = next((e for e in known if e.lower() == given), ALIASES.get(given))
        if explainer is None:
            raise error(
                f"unknown explainer {statement.explainer}",
                statement.explainer.pos,
                "the explainers are " + ", ".join(known),
            )
    check_plot(statement, attributes, "explain.plot", "explain")
    if attributes.get("explain.plot") is None and _asks_for_a_plot(attributes):
        attributes["explain.plot"] = f"{statement.model}_explain.png"
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
        version=statement.model.version,
        explainer=explainer,
        table=list(statement.into.parts) if statement.into else None,
        attributes=attributes,
    )


def _asks_for_a_plot(attributes: dict[str, Any]) -> bool:
    """Whether a ``summary.*`` or ``plots`` attribute asks for the summary plot."""
    return attributes.get("plots") is not None or any(
        value is not None for name, value in attributes.items() if name.startswith("summary.")
    )


def lower(statement: syntax.ExplainNode, prefix: str, dialect: str) -> ExplainStatement:
    """The IR of a TO EXPLAIN (its SELECT in sqlglot's ``dialect``)."""
    return lower_selecting(
        statement, prefix, dialect, "TO EXPLAIN", statement.model, _lower, _output
    )


def _output(statement: syntax.ExplainNode, lowered: ExplainStatement) -> Output | None:
    if lowered.table is None or statement.into is None:
        return None
    replace = lowered.attributes["output.replace"]
    return Output(lowered.table, statement.into.pos, replace, "TO EXPLAIN")
