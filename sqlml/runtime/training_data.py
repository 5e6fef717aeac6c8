"""A training's data, stage by stage, for TO TRAIN's handler and the trainers that run its
stages in several processes (:mod:`sqlml.models.xgboost.distributed`): the labels fitted,
the features derived from the training rows and applied to them, the metrics of the
validation rows, and what a fitted model's metadata records (:class:`Trained`).

The rows come from :mod:`sqlml.runtime.in_memory` (read at once) or
:mod:`sqlml.runtime.external_memory` (streamed in batches, applied lazily pass after pass).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml import ir
from sqlml.datasources import Columns
from sqlml.errors import ModelError
from sqlml.metric_values import compute
from sqlml.metrics import TASKS, misfit, split_names
from sqlml.models.estimator import warn
from sqlml.models.registry import family
from sqlml.runtime import external_memory, in_memory, label_lists
from sqlml.runtime.features_apply import FeatureArrays, transform
from sqlml.runtime.features_derive import derive, left_out, left_out_warning, not_features
from sqlml.runtime.features_expand import check_columns
from sqlml.runtime.labels import (
    LabelEncoding,
    check_label,
    decide_task,
    encode_label,
    fit_labels,
    unlabelled,
)
from sqlml.runtime.rows import blame

Source = in_memory.InMemory | external_memory.Stream
Labelled = in_memory.Split | external_memory.Batches


@dataclass(frozen=True)
class Batch:
    """Features applied to rows, their encoded labels and, for rankers, each row's query."""

    arrays: FeatureArrays
    y: np.ndarray
    groups: np.ndarray | None = None

    @property
    def rows(self) -> int:
        """The number of rows."""
        return self.arrays.rows


@dataclass(frozen=True)
class Passes:
    """Streamed training rows: ``batches()`` makes one pass over them; ``sample`` is applied
    features of the first rows, labelled ``sample_y``."""

    batches: Callable[[], Iterator[tuple[FeatureArrays, np.ndarray]]]
    sample: FeatureArrays
    sample_y: np.ndarray
    source: external_memory.Batches

    @property
    def rows(self) -> int:
        """The training rows counted by the latest pass."""
        return self.source.rows


@dataclass(frozen=True)
class Trained:
    """A fitted model and what its metadata records."""

    data: bytes
    details: dict[str, Any]
    validation_metrics: dict[str, float]
    features: list[ir.FeatureColumn]
    labels: LabelEncoding
    rows: int
    how: dict[str, Any] | None
    attributes: dict[str, Any]  # the statement's, and a base model's architecture


def fit_labelled(
    statement: ir.TrainStatement, source: Source, base: LabelEncoding | None, width: int
) -> tuple[LabelEncoding, Labelled]:
    """Labels: the encoding (``base``, a base model's, or fitted to the LABEL column, its text of
    ``width`` numbers a row read as numbers when several), and the rows it labels, the
    validation rows set apart."""
    if not statement.label:
        return _unlabelled(statement, source, base)
    label = statement.label
    if width > 1 and isinstance(source, in_memory.InMemory):  # else refused by the handler
        listed = label_lists.parse(label, source.sample[label], width, "the SELECT")
        source = dataclasses.replace(source, sample={**source.sample, label: listed})
    if base is not None:
        labels = base
    else:
        objective = statement.attributes.get("objective")
        task = decide_task(source.sample[label], statement.task, objective)
        labels = fit_labels(label, source.label_values(task), task, objective)
    return labels, source.split(labels)


def _unlabelled(
    statement: ir.TrainStatement, source: Source, base: LabelEncoding | None
) -> tuple[LabelEncoding, Labelled]:
    """Labels of a training without LABEL (clustering, outliers): the ids it predicts (the
    base model's), every row for training (y all 0, unused), no validation rows (there is
    nothing to check)."""
    if not isinstance(source, in_memory.InMemory):
        raise ModelError(
            f"{statement.estimator} learns without a LABEL from rows in memory only",
            hint="remove train.external_memory",
        )
    y = np.zeros(len(next(iter(source.sample.values()))), dtype=np.int32)
    rows = in_memory.Rows(source.sample, y, None)
    labels = unlabelled(statement.attributes) if base is None else base
    return labels, in_memory.Split(rows, None, None)


def derive_features(statement: ir.TrainStatement, sample: Columns) -> list[ir.FeatureColumn]:
    """Features derived: COLUMN's (or every column's) kinds and vocabularies, from the
    training rows (``sample``), warning of the columns left out."""
    group = statement.attributes.get("train.group_column")
    excluded = not_features(statement.attributes)
    features = derive(sample, statement.features, statement.label, group, excluded)
    rest = left_out(sample, statement.features, statement.label, group, excluded)
    if rest:
        warn(statement.line, statement.column, *left_out_warning(rest))
    return features


def apply_features(
    label: str, rows: Labelled, features: list[ir.FeatureColumn], labels: LabelEncoding
) -> tuple[Batch | Passes, Iterator[Batch]]:
    """Features applied: to the training rows, and (lazily, once the model is fitted) to the
    validation rows."""
    if isinstance(rows, external_memory.Batches):
        return _apply_streamed(label, rows, features, labels)
    training = rows.training
    arrays = transform(training.columns, features)
    return Batch(arrays, training.y, training.groups), _apply_validation(rows, features)


def _apply_validation(rows: in_memory.Split, features: list[ir.FeatureColumn]) -> Iterator[Batch]:
    """The validation rows in memory as one batch (none without them)."""
    if rows.validation is None:
        return
    source = "validation.select" if "select" in (rows.how or {}) else None
    if source:
        check_columns(rows.validation.columns, features, source)
    with blame(source):
        arrays = transform(rows.validation.columns, features)
    yield Batch(arrays, rows.validation.y, rows.validation.groups)


def _apply_streamed(
    label: str,
    rows: external_memory.Batches,
    features: list[ir.FeatureColumn],
    labels: LabelEncoding,
) -> tuple[Passes, Iterator[Batch]]:
    """Features applied to each batch as it streams by, its labels encoded with them."""

    def one_pass() -> Iterator[tuple[FeatureArrays, np.ndarray]]:
        for columns in rows.training():
            yield _labelled(label, columns, features, labels, "the SELECT")

    def validation() -> Iterator[Batch]:
        source = "validation.select" if "select" in (rows.how or {}) else None
        for columns in rows.validation():
            with blame(source):
                if source:
                    check_columns(columns, features, source)
                if len(next(iter(columns.values()))):
                    yield Batch(
                        *_labelled(label, columns, features, labels, source or "the SELECT")
                    )

    sample = transform(rows.sample, features)
    return Passes(one_pass, sample, rows.sample_y, rows), validation()


def _labelled(
    label: str,
    columns: Columns,
    features: list[ir.FeatureColumn],
    labels: LabelEncoding,
    source: str,
) -> tuple[FeatureArrays, np.ndarray]:
    """A streamed batch's features and encoded labels."""
    check_label(label, columns, source)
    return transform(columns, features), encode_label(labels, label, columns[label], source)


def validation_metrics(
    y: np.ndarray,
    score: np.ndarray,
    grouped: np.ndarray | None,
    how: dict[str, Any],
    labels: LabelEncoding,
    chosen: list[str],
) -> tuple[dict[str, float], dict[str, Any]]:
    """TO EVALUATE's metrics, then the ``chosen`` ones, named ``validation_<metric>`` (those
    the rows leave undefined left out), from the validation rows' labels ``y``, scores and,
    for rankers, queries; and ``how`` with the rows' count."""
    task = labels.task if grouped is None else "ranker"
    metrics = compute(task, y, score, [*TASKS.get(task, ()), *chosen], grouped)
    validation = {f"validation_{name}": v for name, v in metrics.items() if math.isfinite(v)}
    return validation, {**how, "rows": len(y)}


def chosen_metrics(statement: ir.TrainStatement, labels: LabelEncoding) -> list[str]:
    """``validation.metrics``, checked against the task and classes the labels settled."""
    names = split_names(statement.attributes.get("validation.metrics") or "")
    task = "ranker" if family(statement.family).ranks(statement.attributes) else labels.task
    wrong = misfit(names, task, len(labels.classes))
    if wrong is not None:
        raise ModelError(f"validation.metrics of {statement.model}: {wrong[0]}", hint=wrong[1])
    return names
