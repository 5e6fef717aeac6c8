"""TO EXPLAIN's handler: per-feature attributions of a stored model, its importance table and
summary plot.

Without USING, the model's family chooses (:attr:`~sqlml.models.Family.explainers`).
TreeExplainer: the family's own SHAP contributions of every row (per class for multiclass
models). A family's own explainer (:attr:`~sqlml.models.Family.own_explainers`): its
trainer's importance of each feature, by measure (XGBoost's: total gain, and the number of
splits as ``fscore``), one value a feature rather than a row. ShapleyExplainer: sampled
Shapley values of the model's output (:mod:`sqlml.runtime.shapley`; the probability of each
class for classifiers, of the second class for two), no label needed. PermutationExplainer:
per row, how much the loss grows when the feature's values are shuffled; needs the label,
with more than one value in the rows. A feature's importance is its mean absolute
attribution, summed over the classes (the mean loss growth for PermutationExplainer).

Progress: reading the rows, then "explaining" in batches of rows (TreeExplainer,
ShapleyExplainer) or feature by feature (PermutationExplainer, after "scoring" the rows as
they are), then "plotting"; each batch or feature checks the statement's token.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import numpy as np

from sqlml import errors, ir
from sqlml.datasources import ResultSet
from sqlml.errors import ModelError
from sqlml.models import TreeTrainer
from sqlml.models.applied import Applied, apply
from sqlml.models.interface import Explainer
from sqlml.runtime.context import Context
from sqlml.runtime.explain_plot import Summary, drawn_type, feature_values, save_summary_plot
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.shapley import shapley_values
from sqlml.statements import kind_of

BACKGROUND = 20  # ShapleyExplainer's background rows (explain.background)
PERMUTATIONS = 10  # and feature orders per row (explain.permutations)
MAX_ROWS = 1000  # and rows explained at most (explain.max_rows)


def explain(statement: ir.ExplainStatement, context: Context) -> Outcome:
    """Rank the features by importance: shown, or written INTO a table; with
    ``explain.plot`` or any ``summary.*``, also draw the attributions."""
    datasource, attributes = context.datasource, statement.attributes
    replace = kind_of(statement).effects.may_replace(statement)
    if statement.table is not None:
        datasource.check_target(statement.table, replace)  # before any work
    applied = apply(statement.model, statement.select, context, statement.version)
    explainer = _explainer(statement, applied)
    own = _own(applied, explainer)
    extra: dict[str, np.ndarray] = {}
    explained = applied.features
    if own is not None:
        extra = getattr(applied.trainer, own.method)(
            applied.model.data, applied.features, applied.metadata
        )
        ranked = extra.pop(next(iter(extra)))
        attributions = ranked[None, :]  # one importance per feature, not per row
        measure = own.measure
    elif explainer == "TreeExplainer":
        with context.reporter.stage("explaining", total=explained.rows, unit="rows"):
            attributions = cast(TreeTrainer, applied.trainer).contributions(
                context, applied.model.data, explained, applied.metadata
            )
        measure = "SHAP value (contribution to the raw score)"
    elif explainer == "ShapleyExplainer":
        explained = _sample(statement, applied.features)
        attributions, measure = _shapley(applied, explained, attributes)
    else:
        attributions = _permutation_effects(applied, statement, attributes.get("label_col"))
        measure = "loss increase when the feature is shuffled"
    if explainer == "PermutationExplainer":
        importance = attributions.mean(axis=0)
    else:
        importance = np.abs(attributions).mean(axis=0)
        if importance.ndim == 2:  # classes x features: sum over the classes
            importance = importance.sum(axis=0)
    if attributes.get("label_col") is not None and explainer != "PermutationExplainer":
        _warn(statement, f"label_col is not used: {explainer} explains the model's output")
    if attributes.get("plots") == "force":
        _warn(statement, "plots = force: sqlml draws the summary plot, not force plots")
    features = np.array(applied.features.names, dtype=object)
    order = np.argsort(-importance, kind="stable")
    table = {"feature": features[order], "importance": importance[order].astype(np.float64)}
    table.update({name: values[order].astype(np.float64) for name, values in extra.items()})
    saved = _plot(statement, applied, explained, attributions, measure, explainer)
    measured = (statement.model, applied.model.version)
    if statement.table is None:
        rows = list(zip(*(column.tolist() for column in table.values()), strict=True))
        return Outcome(result=ResultSet(list(table), rows), summary=saved, model=measured)
    datasource.write_table(statement.table, table, replace, context.token)
    into = f"explained {statement.model} with {explainer} into {'.'.join(statement.table)}"
    return Outcome(summary=into if saved is None else f"{into}; {saved}", model=measured)


def _explainer(statement: ir.ExplainStatement, applied: Applied) -> str:
    """USING's explainer, or the family's default; TreeExplainer on a model that is no
    tree model gives ShapleyExplainer, with a warning (SQLFlow names it for any model)."""
    offered = applied.family.explainers
    explainer = statement.explainer or offered[0]
    if explainer in offered:
        return explainer
    if explainer == "TreeExplainer":
        _warn(
            statement,
            f"TreeExplainer explains tree models; {statement.model} is "
            f"{applied.metadata['estimator']}: explained with ShapleyExplainer instead",
        )
        return "ShapleyExplainer"
    raise ModelError(
        f"{explainer} does not explain {statement.model}, a {applied.family.name} model "
        f"({applied.metadata['estimator']})",
        hint="use one of " + ", ".join(offered),
    )


def _own(applied: Applied, explainer: str) -> Explainer | None:
    """The model's family's own explainer called ``explainer``, if it is one."""
    return next((e for e in applied.family.own_explainers if e.name == explainer), None)


def _warn(statement: ir.ExplainStatement, message: str) -> None:
    """``file:line:column: warning: TO EXPLAIN: message`` on standard error."""
    errors.warn(f"TO EXPLAIN: {message}", statement.line, statement.column)


def _plot(
    statement: ir.ExplainStatement,
    applied: Applied,
    explained: FeatureArrays,
    attributions: np.ndarray,
    measure: str,
    explainer: str,
) -> str | None:
    """Draw the summary plot to ``explain.plot`` (which the analysis sets to
    ``<model>_explain.png`` when a ``summary.*`` asks for a plot without it), titled
    ``summary.title`` or by :func:`_title`. What it says of the plot, or None."""
    attributes = statement.attributes
    given = {k: v for k, v in attributes.items() if k.startswith("summary.") and v is not None}
    plot = attributes.get("explain.plot")
    if plot is None:
        return None
    context = applied.context
    path = context.datasource.program_file(plot)
    defaults = Summary()
    summary = Summary(
        plot_type=given.get("summary.plot_type"),
        sort=given.get("summary.sort", defaults.sort),
        alpha=given.get("summary.alpha", defaults.alpha),
        max_display=given.get("summary.max_display", defaults.max_display),
        title=given.get("summary.title"),
        color_bar=given.get("summary.color_bar", defaults.color_bar),
        log_scale=given.get("summary.use_log_scale", defaults.log_scale),
    )
    own = _own(applied, explainer)
    per_row = own is None
    if summary.title is None:
        bars = drawn_type(summary, attributions.ndim == 3, per_row)[0] == "bar"
        title = (
            f"{statement.model}: {own.title}"
            if own is not None
            else _title(statement.model, explainer, len(attributions), bars)
        )
        summary = replace(summary, title=title)
    with context.reporter.stage("plotting", total=1, unit="plots"):
        why = save_summary_plot(
            path,
            attributions,
            applied.features.names,
            feature_values(explained),
            applied.class_names(),
            measure,
            summary,
            per_row,
        )
        context.reporter.advance(1)
    if why is not None:
        _warn(statement, f"summary.plot_type = {summary.plot_type!r}: {why}")
    return f"plot of {statement.model} saved to {path}"


def _title(model: str, explainer: str, rows: int, bars: bool) -> str:
    """The model, what the plot shows (``bars``: means of the rows' attributions) and of how
    many rows."""
    permutation = explainer == "PermutationExplainer"
    if bars:
        what = "mean loss increase on" if permutation else "mean |SHAP| on"
    else:
        what = "loss increases of" if permutation else "SHAP values of"
    return f"{model}: {what} {rows:,} row{'s' if rows != 1 else ''}"


def _sample(statement: ir.ExplainStatement, features: FeatureArrays) -> FeatureArrays:
    """At most ``explain.max_rows`` of the rows, drawn with ``explain.seed`` (with a
    warning when some are left out): ShapleyExplainer's cost grows with the rows."""
    most = statement.attributes.get("explain.max_rows") or MAX_ROWS
    if features.rows <= most:
        return features
    _warn(
        statement,
        f"ShapleyExplainer explains {most:,} of the {features.rows:,} rows, drawn at random "
        "(explain.max_rows to change it)",
    )
    rng = np.random.default_rng(statement.attributes["explain.seed"])
    return features.take(np.sort(rng.choice(features.rows, most, replace=False)))


def _shapley(
    applied: Applied, features: FeatureArrays, attributes: dict[str, Any]
) -> tuple[np.ndarray, str]:
    """Shapley values of the model's output for ``features`` (rows x features, or rows x
    classes x features for more than two classes) against a sample of their rows, and what
    they measure."""
    seed = attributes["explain.seed"]
    rng = np.random.default_rng(seed)
    size = min(attributes.get("explain.background") or BACKGROUND, features.rows)
    background = features.take(np.sort(rng.choice(features.rows, size, replace=False)))
    classifier = applied.labels.task == "classifier"
    two = classifier and len(applied.labels.classes) == 2

    def output(rows: FeatureArrays) -> np.ndarray:
        scores = applied.scores(rows, counted=False).astype(np.float64)
        if two:
            return scores[:, 1:2]
        return scores if scores.ndim == 2 else scores[:, None]

    context = applied.context
    with context.reporter.stage("explaining", total=features.rows, unit="rows"):
        values, _ = shapley_values(
            output,
            features,
            background,
            attributes.get("explain.permutations") or PERMUTATIONS,
            seed,
            context.token,
            context.reporter,
        )
    if values.shape[1] == 1:
        values = values[:, 0, :]
    what = "probability" if classifier else "prediction"
    return values, f"SHAP value (contribution to the predicted {what})"


def _permutation_effects(
    applied: Applied, statement: ir.ExplainStatement, label_col: str | None
) -> np.ndarray:
    """Rows x features: how much each row's loss grows when a feature's values (all its
    arrays) are shuffled. The loss is the log loss for classifiers, the squared error else.
    A :class:`ModelError` when the label (``label_col``, else the model's) has one value in
    the rows: the loss growth would then say nothing of the features."""
    label = label_col or applied.metadata["label"]
    if not label:
        raise ModelError(
            f"PermutationExplainer scores a model against its label; {statement.model} was "
            "trained without one",
            hint="use ShapleyExplainer, which explains the model's output and needs no label",
        )
    truth = applied.truth(label)
    if len(truth) > 1 and np.all(truth == truth[0]):
        value = applied.columns[label][0]
        shown = repr(value) if isinstance(value, str) else str(value)
        raise ModelError(
            f"PermutationExplainer scores {statement.model} against its label {label}, which "
            f"is {shown} in every row of the SELECT: shuffling a feature "
            "would measure nothing useful (importances could even be negative)",
            hint="explain rows with more than one label value, or use ShapleyExplainer, "
            "which explains the model's output and needs no label",
        )
    rng = np.random.default_rng(statement.attributes["explain.seed"])

    def losses(features: FeatureArrays, counted: bool) -> np.ndarray:
        predicted = applied.scores(features, counted=counted)
        if applied.labels.task == "classifier":
            chosen = predicted[np.arange(len(truth)), truth].astype(np.float64)
            return -np.log(np.clip(chosen, 1e-15, 1))
        return (predicted.astype(np.float64) - truth.astype(np.float64)) ** 2

    features, token, reporter = applied.features, applied.context.token, applied.context.reporter
    with reporter.stage("scoring", total=features.rows, unit="rows"):
        baseline = losses(features, counted=True)
    effects = []
    with reporter.stage("explaining", total=len(features.names), unit="features"):
        for j in range(len(features.names)):
            token.check()
            shuffled = features.permuted(j, rng.permutation(features.rows))
            effects.append(losses(shuffled, counted=False) - baseline)
            reporter.advance(1)
    return np.column_stack(effects)
