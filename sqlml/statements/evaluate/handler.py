"""TO EVALUATE: a stored model's metrics on the rows of a SELECT, into a table."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from sqlml import ir
from sqlml.errors import ModelError
from sqlml.metric_values import clustering_metrics, compute, outlier_metrics
from sqlml.metrics import NEEDS_LABEL, TASKS, described, misfit, split_names
from sqlml.models.applied import Applied, apply
from sqlml.runtime.context import Context
from sqlml.runtime.evaluate_plot import save_evaluation_plot
from sqlml.runtime.labels import queries
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.progress import Progress, format_metrics
from sqlml.runtime.rows import spelled
from sqlml.semantics.metric_names import evaluated_task, missing_label, stored_task
from sqlml.statements import kind_of


def evaluate(statement: ir.EvaluateStatement, context: Context) -> Outcome:
    """The model's metrics on the SELECT's rows, against the LABEL column; a clustering's of
    its clusters in the space it clusters in (:func:`_clustered_points`; with a LABEL, the
    adjusted Rand index too); without a LABEL, the share of rows an outlier detector flags."""
    datasource = context.datasource
    replace = kind_of(statement).effects.may_replace(statement)
    datasource.check_target(statement.table, replace)  # before any work
    applied = apply(statement.model, statement.select, context, statement.version)
    version = applied.model.version
    labelled = bool(statement.label)
    stored = stored_task(applied.metadata) or applied.labels.task
    if not labelled and (
        wrong := missing_label(stored, statement.model, applied.metadata["label"])
    ):
        raise ModelError(wrong[0], hint=wrong[1])
    task = evaluated_task(stored, labelled)
    chosen = statement.attributes.get("validation.metrics")
    defaults = [n for n in TASKS.get(task, ()) if labelled or n not in NEEDS_LABEL]
    names = split_names(chosen) if chosen else defaults
    if not names:
        raise ModelError(
            f"TO EVALUATE measures classifiers, regressors, rankers, clusterings and outlier "
            f"detectors; {statement.model} is {described(task)}",
            hint="measure it with a SELECT over its TO PREDICT results",
        )
    wrong = misfit(names, task, len(applied.labels.classes))
    if wrong is not None:
        raise ModelError(f"validation.metrics of {statement.model}: {wrong[0]}", hint=wrong[1])
    plot = statement.attributes.get("evaluate.plot")
    if plot is not None and task not in ("classifier", "regressor"):
        raise ModelError(
            f"evaluate.plot draws classifiers and regressors; {statement.model} is "
            f"{described(task)}",
            hint="remove evaluate.plot",
        )
    reporter = context.reporter
    with reporter.stage("scoring", total=applied.features.rows, unit="rows"):
        scores = applied.scores()
    if task in ("clustering", "outlier"):
        predicted = applied.labels.decode(scores.argmax(axis=1))
        if task == "outlier":
            metrics = outlier_metrics(predicted == -1, names)
        else:
            truth = _label_values(applied, statement.label) if labelled else None
            points = _clustered_points(applied)
            metrics = _measured(
                reporter, names, lambda some: clustering_metrics(points, predicted, some, truth)
            )
        return _write_metrics(statement, context, metrics, len(scores), "", replace, version)
    truth = applied.truth(statement.label)
    attributes = applied.metadata["attributes"]
    groups = queries(applied.columns, attributes, "the SELECT", applied.family.ranks(attributes))
    metrics = _measured(reporter, names, lambda some: compute(task, truth, scores, some, groups))
    saved = ""
    if plot is not None:
        path = datasource.program_file(plot)
        # Several values a row (model.n_out): each value a point of the regressor's scatter
        drawn = (truth.ravel(), scores.ravel()) if truth.ndim == 2 else (truth, scores)
        with reporter.stage("plotting", total=1, unit="plots"):
            save_evaluation_plot(path, task, *drawn, applied.class_names(), model=statement.model)
            reporter.advance(1)
        saved = f"; plot saved to {path}"
    return _write_metrics(statement, context, metrics, len(truth), saved, replace, version)


def _measured(
    reporter: Progress,
    names: Sequence[str],
    measure: Callable[[Sequence[str]], dict[str, float]],
) -> dict[str, float]:
    """``measure(names)``, reported as a stage of metrics: one metric at a time while it is
    shown (each redoes the work they share, as argmax of the scores), else all at once."""
    with reporter.stage("computing metrics", total=len(names), unit="metrics"):
        if not reporter.shown():
            return measure(names)
        metrics: dict[str, float] = {}
        for name in names:
            metrics.update(measure([name]))
            reporter.advance(1)
        return metrics


def _write_metrics(
    statement: ir.EvaluateStatement,
    context: Context,
    metrics: dict[str, float],
    rows: int,
    saved: str,
    replace: bool,
    version: int,
) -> Outcome:
    """The metrics written as the one row of the INTO table (which may ``replace`` one sqlml
    did not write), and the statement's summary; the outcome names the ``version``
    measured, with its metrics."""
    context.datasource.write_table(
        statement.table,
        {name: np.array([value]) for name, value in metrics.items()},
        replace,
        context.token,
    )
    shown = format_metrics(metrics)
    return Outcome(
        summary=f"evaluated {statement.model} on {rows} rows: {shown}{saved}",
        model=(statement.model, version),
        metrics=metrics,
    )


def _label_values(applied: Applied, label: str) -> np.ndarray:
    """The LABEL column as read (a clustering is compared with its partition of the rows,
    whatever its values); a :class:`ModelError` if it is not selected or has NULLs."""
    from sqlml.runtime.labels import check_label, check_not_null

    columns = spelled(applied.columns, [label])
    check_label(label, columns, "the SELECT")
    check_not_null(label, columns[label], "the SELECT")
    values = np.asarray(columns[label])
    return values.astype(str) if values.dtype == object else values


def _clustered_points(applied: Applied) -> np.ndarray:
    """The rows in the space the model clusters in, where its distances are measured: its
    trainer's ``points`` where it has one (a family that scales or imputes its features),
    else the features as selected, categories one-hot, NULL as the rows' mean."""
    points = getattr(applied.trainer, "points", None)
    if points is not None:
        return points(applied.model.data, applied.metadata, applied.features)
    x = applied.features.matrix(one_hot=True)[0].astype(np.float64)
    means = np.nanmean(np.where(np.isnan(x).all(axis=0), 0.0, x), axis=0)
    return np.where(np.isnan(x), means, x)
