"""Statements that apply a stored model to the rows of a SELECT: PREDICT, EVALUATE (and
what TO EXPLAIN's handler, :mod:`sqlml.statements.explain.handler`, shares with them)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml import ir
from sqlml.datasources import Columns, Datasource
from sqlml.datasources.base import closing_batches
from sqlml.errors import ModelError
from sqlml.metrics import (
    NEEDS_LABEL,
    TASKS,
    clustering_metrics,
    compute,
    described,
    misfit,
    outlier_metrics,
    split_names,
)
from sqlml.models import Family, Trainer, family
from sqlml.models.estimator import warn
from sqlml.models.store import ModelStore, StoredModel
from sqlml.runtime import label_lists
from sqlml.runtime.cells import value_texts
from sqlml.runtime.context import Context
from sqlml.runtime.evaluate_plot import save_evaluation_plot
from sqlml.runtime.features_apply import FeatureArrays, transform
from sqlml.runtime.labels import LabelEncoding, queries
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.progress import Progress, format_metrics
from sqlml.runtime.rows import SCORE_BATCH, check_rows, named_columns, spelled
from sqlml.semantics.metric_names import evaluated_task, missing_label, stored_task

MAX_COLUMN_NAME = 63  # PostgreSQL's limit (MySQL's is 64)
_PLAIN_CLASS = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class Applied:
    """A stored model next to the features of a SELECT's rows, for the statement running
    in ``context``."""

    context: Context
    model: StoredModel
    family: Family
    trainer: Trainer
    labels: LabelEncoding
    columns: Columns
    features: FeatureArrays

    @property
    def metadata(self) -> dict[str, Any]:
        return self.model.metadata

    def scores(
        self,
        features: FeatureArrays | None = None,
        batch_size: int = SCORE_BATCH,
        counted: bool = True,
    ) -> np.ndarray:
        """Class probabilities (classifiers) or values (regressors) for ``features`` or the
        rows, from the model loaded anew (a scorer may keep state across its batches); the
        rows scored advance the current progress stage if ``counted`` (an explainer scoring
        mixed or shuffled rows reports its own units)."""
        features = self.features if features is None else features
        context = self.context
        if not counted:
            context = dataclasses.replace(context, reporter=Progress())
        score = self.trainer.scorer(context, self.model.data, self.metadata)
        return score(features, batch_size)

    def truth(self, label: str) -> np.ndarray:
        """The label column encoded like the training labels (its text of several values a
        row read as numbers, rows x n, for a model of several)."""
        from sqlml.runtime.labels import check_label, encode_label

        columns = spelled(self.columns, [label])
        check_label(label, columns, "the SELECT")
        values, width = columns[label], label_lists.width(self.metadata["attributes"])
        if width > 1:
            values = label_lists.parse(label, values, width, "the SELECT")
        return encode_label(self.labels, label, values, "the SELECT")


def apply(model_name: str, select: str, context: Context) -> Applied:
    """Load ``model_name`` and the features of ``select``'s rows."""
    model = load_model(model_name, context.datasource)
    columns = spelled(context.datasource.read(select, context.reporter), model_columns(model))
    check_rows(columns)
    return Applied(
        context,
        model.stored,
        model.family,
        model.trainer,
        model.labels,
        columns,
        transform(columns, model.features),
    )


@dataclass(frozen=True)
class Model:
    """A stored model, ready to score: its family and trainer, feature columns and labels."""

    stored: StoredModel
    family: Family
    trainer: Trainer
    features: list[ir.FeatureColumn]
    labels: LabelEncoding


def model_columns(model: Model) -> list[str]:
    """The columns a stored model reads: its features', its label, its query column."""
    metadata = model.stored.metadata
    group = metadata["attributes"].get("train.group_column")
    return named_columns(model.features, metadata["label"], group)


def load_model(model_name: str, datasource: Datasource) -> Model:
    stored = ModelStore(datasource).load(model_name)
    model_family = family(stored.metadata["family"])
    if stored.metadata["format"] != model_family.format:
        raise ModelError(
            f"model {model_name} is stored as {stored.metadata['format']}, "
            "which this version of sqlml cannot read"
        )
    features = [ir.FeatureColumn.from_dict(f) for f in stored.metadata["features"]]
    labels = LabelEncoding.from_dict(stored.metadata["labels"])
    return Model(stored, model_family, model_family.trainer(), features, labels)


def predict(statement: ir.PredictStatement, context: Context) -> Outcome:
    """Score the SELECT's rows batch by batch, each batch written as it is scored: memory
    holds a batch, whatever the number of rows."""
    datasource, token = context.datasource, context.token
    model = load_model(statement.model, datasource)
    replace = _replace(statement)
    datasource.check_target(statement.table, replace)  # before any work
    extras = statement.attributes.get("predict.extra_outputs") or ""
    probabilities = "probabilities" in extras.split(",")
    classifier = model.labels.task == "classifier"
    if probabilities and not classifier:
        raise ModelError(
            f"predict.extra_outputs = 'probabilities' needs a classifier; {statement.model} "
            "predicts numbers",
            hint="remove predict.extra_outputs",
        )
    names = (
        probability_columns(statement.result_column, model.labels.classes) if probabilities else []
    )
    score = model.trainer.scorer(context, model.stored.data, model.stored.metadata)
    batch_rows = statement.attributes["predict.batch_size"]
    label = model.stored.metadata["label"]
    names_read = [*model_columns(model), statement.result_column]

    def predicted(batches: Iterator[Columns]) -> Iterator[Columns]:
        """The output batches; the read ends (its transaction too) when they end, not when
        the garbage collector gets to it."""
        with closing_batches(batches) as source:
            for index, read in enumerate(source):
                columns = spelled(read, names_read)
                if index == 0:
                    check_rows(columns)
                    _check_result_columns(statement, model, columns, names)
                token.check()
                scores = score(transform(columns, model.features), batch_rows)
                output = {
                    k: v for k, v in columns.items() if k not in (label, statement.result_column)
                }
                chosen = scores.argmax(axis=1) if classifier else scores
                values = np.asarray(model.labels.decode(chosen))
                listed = values.ndim == 2  # several values a row, written as one text
                output[statement.result_column] = label_lists.texts(values) if listed else values
                if probabilities:
                    output.update({name: scores[:, i] for i, name in enumerate(names)})
                yield output

    with (
        datasource.concurrent_reader() as reader,
        context.reporter.stage("predicting", unit="rows"),
    ):
        batches = predicted(reader.read_batches(statement.select, batch_rows))
        rows = datasource.write_batches(statement.table, batches, replace, token)
    return Outcome(
        summary=f"predicted {rows} rows into {'.'.join(statement.table)}."
        f"{statement.result_column} with {statement.model}"
    )


def _check_result_columns(
    statement: ir.PredictStatement, model: Model, columns: Columns, extra: list[str]
) -> None:
    """The result column takes the place of a selected column of its name, as in SQLFlow:
    the label's silently, another's with a warning. A :class:`ModelError` if an extra output
    (a class probability) would replace a selected column."""
    label = model.stored.metadata["label"]
    result = statement.result_column
    if result in columns and result != label:
        feature = " (a feature of the model)" if result in _feature_names(model) else ""
        warn(
            statement.line,
            statement.column,
            f"TO PREDICT {'.'.join(statement.table)}.{result}: the predictions replace the "
            f"SELECT's column {result}{feature}, as in SQLFlow; select it under another name "
            "to keep it",
        )
    taken = [name for name in extra if name in columns and name != label]
    if taken:
        features = _feature_names(model)
        what = [f"{name} (a feature of the model)" if name in features else name for name in taken]
        raise ModelError(
            f"TO PREDICT {'.'.join(statement.table)}.{result}: the SELECT already returns "
            f"{', '.join(what)}, which the class probabilities would replace",
            hint="name the result column differently, or leave those columns out of the SELECT",
        )


def _feature_names(model: Model) -> set[str]:
    return {feature.name for feature in model.features}


def probability_columns(result: str, classes: list[Any]) -> list[str]:
    """The names of the class probability columns, in the order of the classes.

    ``<result>_<class>`` when every class reads as lower-case letters, digits and ``_``
    (booleans as ``true``/``false``) and the names fit every database; else
    ``<result>_prob_<index>``.
    """
    texts = [
        str(c).lower() if isinstance(c, bool) else text
        for c, text in zip(classes, value_texts(np.array(classes, dtype=object)), strict=True)
    ]
    names = [f"{result}_{text}" for text in texts]
    plain = all(_PLAIN_CLASS.fullmatch(text) for text in texts)
    if plain and len(set(names)) == len(names) and max(map(len, names)) <= MAX_COLUMN_NAME:
        return names
    return [f"{result}_prob_{i}" for i in range(len(classes))]


def _replace(statement: ir.PredictStatement | ir.EvaluateStatement | ir.ExplainStatement) -> bool:
    """Whether the statement may replace a table sqlml did not write (``output.replace``)."""
    return bool(statement.attributes.get("output.replace", False))


def evaluate(statement: ir.EvaluateStatement, context: Context) -> Outcome:
    """The model's metrics on the SELECT's rows, against the LABEL column; a clustering's of
    its clusters in the space it clusters in (:func:`_clustered_points`; with a LABEL, the
    adjusted Rand index too); without a LABEL, the share of rows an outlier detector flags."""
    datasource = context.datasource
    datasource.check_target(statement.table, _replace(statement))  # before any work
    applied = apply(statement.model, statement.select, context)
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
        return _write_metrics(statement, context, metrics, len(scores), "")
    truth = applied.truth(statement.label)
    groups = queries(applied.columns, applied.metadata["attributes"], "the SELECT")
    metrics = _measured(reporter, names, lambda some: compute(task, truth, scores, some, groups))
    saved = ""
    if plot is not None:
        path = datasource.program_file(plot)
        # Several values a row (model.n_out): each value a point of the regressor's scatter
        drawn = (truth.ravel(), scores.ravel()) if truth.ndim == 2 else (truth, scores)
        with reporter.stage("plotting", total=1, unit="plots"):
            save_evaluation_plot(
                path, task, *drawn, _class_names(applied.labels), model=statement.model
            )
            reporter.advance(1)
        saved = f"; plot saved to {path}"
    return _write_metrics(statement, context, metrics, len(truth), saved)


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
) -> Outcome:
    """The metrics written as the one row of the INTO table, and the statement's summary."""
    context.datasource.write_table(
        statement.table,
        {name: np.array([value]) for name, value in metrics.items()},
        _replace(statement),
        context.token,
    )
    shown = format_metrics(metrics)
    return Outcome(summary=f"evaluated {statement.model} on {rows} rows: {shown}{saved}")


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


def _class_names(labels: LabelEncoding) -> list[str]:
    """The classes as the plots name them."""
    return [str(c) for c in value_texts(np.array(labels.classes, dtype=object))]
