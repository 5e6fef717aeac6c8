"""TO TRAIN: read the SELECT, fit the estimator (or continue a base model), validate, store.

The validation rows are those of ``validation.select``, or a seeded draw of
``validation.split`` of the SELECT's rows (per class for classifiers, whole queries for
rankers), held out of training.
Features are derived from the training rows only; the validation metrics are TO EVALUATE's,
computed on the trained model's scores for the validation rows and stored with the model.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

import sqlml
from sqlml import ir
from sqlml.errors import ModelError
from sqlml.metrics import classifier_metrics, ranker_metrics, regressor_metrics
from sqlml.models import Trainer, family
from sqlml.runtime import progress
from sqlml.runtime.cache import cached_read
from sqlml.runtime.datasource import Columns, Datasource
from sqlml.runtime.feature_arrays import transform
from sqlml.runtime.feature_columns import check_columns, derive
from sqlml.runtime.features import check_rows
from sqlml.runtime.fitted import Fitted, base_features, blame
from sqlml.runtime.inference import SCORE_BATCH
from sqlml.runtime.labels import (
    LabelEncoding,
    check_label,
    encode_label,
    fit_labels,
    query_ids,
)
from sqlml.runtime.model_store import ModelStore, StoredModel
from sqlml.runtime.outcome import Outcome


@dataclass(frozen=True)
class _Rows:
    """Rows to train on or to validate with: their columns, encoded labels and, for rankers,
    the query of each row (as ids)."""

    columns: Columns
    y: np.ndarray
    groups: np.ndarray | None

    def take(self, index: np.ndarray) -> _Rows:
        return _Rows(
            {name: values[index] for name, values in self.columns.items()},
            self.y[index],
            None if self.groups is None else self.groups[index],
        )


def train(statement: ir.TrainStatement, datasource: Datasource) -> Outcome:
    metadata = train_and_save(statement, datasource)
    return Outcome(summary=_summary(statement, metadata))


def train_and_save(
    statement: ir.TrainStatement,
    datasource: Datasource,
    extra_metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train, validate and store the model with ``extra_metadata``; its metadata."""
    store = ModelStore(datasource)
    model_family = family(statement.family)
    trainer = model_family.trainer()
    base = _base(statement, store, model_family.format) if statement.base_model else None
    if statement.attributes.get("train.external_memory"):
        from sqlml.runtime.external_memory import fit_batches

        fitted = fit_batches(statement, datasource, trainer, base)
    else:
        fitted = _fit(statement, datasource, trainer, base)
    details = fitted.details
    if fitted.validation_scores is not None:
        details["metrics"].update(_validation_metrics(fitted))
    metadata = {
        "estimator": statement.estimator,
        "family": statement.family,
        "format": model_family.format,
        "attributes": statement.attributes,
        "features": [dataclasses.asdict(feature) for feature in fitted.features],
        "label": statement.label,
        "labels": fitted.labels.to_dict(),
        "statement": statement.text,
        "rows": fitted.rows,
        "validation": fitted.how,
        "base_model": None if base is None else {"name": base.name, "version": base.version},
        "trained_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "sqlml_version": sqlml.__version__,
        **details,
        **(extra_metadata or {}),
    }
    store.save(statement.model, metadata, fitted.data)
    return metadata


def _fit(
    statement: ir.TrainStatement,
    datasource: Datasource,
    trainer: Trainer,
    base: StoredModel | None,
) -> Fitted:
    """Train on the SELECT's rows, read at once (through the input cache)."""
    columns = cached_read(datasource, statement.select)
    check_rows(columns)
    check_label(statement.label, columns, "the SELECT")
    group = statement.attributes.get("train.group_column")
    labels, y = _labels(statement, columns[statement.label], base)
    rows = _Rows(columns, y, query_ids(columns, group, "the SELECT") if group else None)
    training, validation, how = _validation_rows(statement, datasource, rows, labels)
    del columns, rows  # the training rows are a copy when some are held out
    if base is None:
        features = derive(training.columns, statement.features, statement.label, group)
    else:  # the base model's, vocabularies and all
        features = base_features(base)
    arrays = transform(training.columns, features)
    ranking = {} if training.groups is None else {"groups": training.groups}
    data, details = trainer.train(arrays, training.y, labels, statement.attributes, base, **ranking)
    fitted = Fitted(data, details, features, labels, arrays.rows, how)
    if validation is None:
        return fitted
    source = "validation.select" if "select" in how else None
    if source:
        check_columns(validation.columns, features, source)
    with blame(source):
        validation_arrays = transform(validation.columns, features)
    scores = trainer.predict_scores(data, validation_arrays, details, SCORE_BATCH)
    return dataclasses.replace(
        fitted,
        validation_y=validation.y,
        validation_scores=scores,
        validation_groups=validation.groups,
    )


def check_base_estimator(statement: ir.TrainStatement, estimator: str) -> None:
    """A :class:`ModelError` unless the base model was trained by the statement's estimator."""
    if estimator != statement.estimator:
        raise ModelError(
            f"USING {statement.base_model}: the base model was trained by {estimator}; "
            f"TO TRAIN {statement.estimator} cannot continue it",
            hint=f"continue it with TO TRAIN {estimator}, or leave out USING to train anew",
        )


def _base(statement: ir.TrainStatement, store: ModelStore, model_format: str) -> StoredModel:
    """The base model named by USING, checked to be one the statement can continue."""
    with blame(f"USING {statement.base_model}"):
        base = store.load(statement.base_model)
    check_base_estimator(statement, base.metadata["estimator"])
    if base.metadata["format"] != model_format:
        raise ModelError(
            f"USING {statement.base_model}: the base model is stored as "
            f"{base.metadata['format']}, which this version of sqlml cannot continue",
            hint="leave out USING to train anew",
        )
    return base


def _labels(
    statement: ir.TrainStatement, values: np.ndarray, base: StoredModel | None
) -> tuple[LabelEncoding, np.ndarray]:
    """The label encoding (fitted, or the base model's) and the encoded LABEL column."""
    if base is not None:
        labels = LabelEncoding.from_dict(base.metadata["labels"])
        return labels, encode_label(labels, statement.label, values, "the SELECT")
    objective = statement.attributes.get("objective")
    labels = fit_labels(statement.label, values, statement.task, objective)
    return labels, labels.encode(values)


def _validation_rows(
    statement: ir.TrainStatement, datasource: Datasource, rows: _Rows, labels: LabelEncoding
) -> tuple[_Rows, _Rows | None, dict[str, Any] | None]:
    """The training rows, the validation rows (None: no validation) and how they were chosen."""
    attributes = statement.attributes
    select = attributes.get("validation.select")
    if select is not None:
        with blame("validation.select"):
            columns = cached_read(datasource, select)
            check_rows(columns)
        check_label(statement.label, columns, "validation.select")
        y = encode_label(labels, statement.label, columns[statement.label], "validation.select")
        group = attributes.get("train.group_column")
        groups = query_ids(columns, group, "validation.select") if group else None
        return rows, _Rows(columns, y, groups), {"select": select, "rows": len(y)}
    share, seed = attributes["validation.split"], attributes["validation.seed"]
    if not share:
        return rows, None, None
    if rows.groups is None:
        kept, held = split(rows.y, labels.task == "classifier", share, seed)
    else:
        kept, held = split_queries(rows.groups, share, seed)
    if not len(held):
        return rows, None, None
    return rows.take(kept), rows.take(held), {"split": share, "seed": seed, "rows": len(held)}


def split(y: np.ndarray, stratify: bool, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the training and the held-out rows: ``share`` of the rows, drawn with
    ``seed`` (of each class's rows with ``stratify``), in their original order.

    Every class (and any set of rows) keeps at least one training row.
    """
    order = np.random.default_rng(seed).permutation(len(y))
    bounds = np.zeros(0, dtype=np.int64)
    if stratify:  # by class, in random order within each class
        order = order[np.argsort(y[order], kind="stable")]
        bounds = np.flatnonzero(np.diff(y[order])) + 1
    held = np.zeros(len(y), dtype=bool)
    for group in np.split(order, bounds):
        held[group[: min(round(share * len(group)), len(group) - 1)]] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


def split_queries(groups: np.ndarray, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the training and the held-out rows: those of ``share`` of the queries,
    drawn with ``seed``, in their original order. At least one query is kept for training."""
    queries = np.random.default_rng(seed).permutation(np.unique(groups))
    count = min(round(share * len(queries)), len(queries) - 1)
    held = np.isin(groups, queries[:count])
    return np.flatnonzero(~held), np.flatnonzero(held)


def _validation_metrics(fitted: Fitted) -> dict[str, float]:
    """TO EVALUATE's metrics on the validation rows, named ``validation_<metric>``.

    Metrics the rows leave undefined (AUC of a single class) are left out.
    """
    y, scores = fitted.validation_y, fitted.validation_scores
    if fitted.validation_groups is not None:
        metrics = ranker_metrics(y, scores, fitted.validation_groups)
    elif fitted.labels.task == "classifier":
        metrics = classifier_metrics(y, scores)
    else:
        metrics = regressor_metrics(y, scores)
    return {f"validation_{name}": v for name, v in metrics.items() if math.isfinite(v)}


def _summary(statement: ir.TrainStatement, metadata: dict[str, Any]) -> str:
    base = f" from {statement.base_model}" if statement.base_model else ""
    how = metadata["validation"]
    if how is None:
        validated = ""
    else:
        source = "validation.select" if "select" in how else "held-out"
        validated = f", validated on {how['rows']} {source} rows"
    shown = progress.format_metrics(metadata["metrics"])
    return (
        f"trained {statement.model} ({statement.estimator}){base} on {metadata['rows']} rows"
        f"{validated}: {shown}"
    )
