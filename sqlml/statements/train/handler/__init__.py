"""TO TRAIN, in its stages, each called once and in order: read the rows, fit the labels,
derive the features, apply them, fit the model (or continue a base model), validate it,
store it.

The rows come from one of two sources, the same stages running on either:
:mod:`sqlml.runtime.in_memory` reads them at once, :mod:`sqlml.runtime.external_memory`
(``train.external_memory``) streams them in batches. Where the two differ:

- applying the features: streamed batches are applied (and their labels encoded) lazily,
  pass after pass; in memory, once, and the labels before (the split draws by class);
- fitting: the trainer takes rows in memory whole (``Trainer.train``), and streamed ones as a
  function that starts a new pass (``StreamingTrainer.train_batches``, of the families that
  stream; the others refuse ``train.external_memory`` before reading): XGBoost's
  external-memory iterator reads the data again for each of its passes, and Keras
  normalises by a sample.

Features are derived from the training rows only (streamed: from a sample of them); the
validation metrics are TO EVALUATE's, computed on the trained model's scores for the
validation rows and stored with the model.

XGBoost with ``train.workers`` above 1 (or in the pods of an XGBoostJob) runs these stages
in several processes, each on its part of the rows: the family's ``distributed_module``
(XGBoost's: :mod:`sqlml.models.xgboost.distributed`).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

import sqlml
from sqlml import ir
from sqlml.datasources import Columns
from sqlml.errors import ModelError
from sqlml.metrics import TASKS, compute, misfit, split_names
from sqlml.models import Family, StreamingTrainer, Trainer, family
from sqlml.models.estimator import warn
from sqlml.models.store import ModelStore, StoredModel
from sqlml.runtime import external_memory, in_memory, label_lists
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays, transform
from sqlml.runtime.features_derive import check_columns, derive, left_out, left_out_warning
from sqlml.runtime.labels import (
    LabelEncoding,
    check_label,
    decide_task,
    encode_label,
    fit_labels,
    unlabelled,
)
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.progress import format_metrics
from sqlml.runtime.rows import SCORE_BATCH, blame
from sqlml.runtime.workers import job_size
from sqlml.semantics.estimators import find_estimator, user_estimator

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


def train(statement: ir.TrainStatement, context: Context) -> Outcome:
    distributed = family(statement.family).distributed()
    if distributed and max(statement.attributes.get("train.workers") or 1, job_size()) > 1:
        # several processes: started here, or the pods of a training job
        return cast(Outcome, distributed.train(statement, context))
    metadata = train_and_save(statement, context)
    return Outcome(summary=summary(statement, metadata))


def train_and_save(
    statement: ir.TrainStatement,
    context: Context,
    extra_metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train, validate and store the model with ``extra_metadata``; its metadata."""
    store = ModelStore(context.datasource)
    model_family = family(statement.family)
    trainer = model_family.trainer()
    base = _base(statement, store, model_family.format) if statement.base_model else None
    attributes = _attributes(statement, base)
    width = label_lists.width(attributes)
    _check_listed(statement, width)
    labels, rows = fit_labelled(statement, _read(statement, context), base, width)
    chosen = chosen_metrics(statement, labels)
    features = derive_features(statement, rows.sample, base)
    training, validation = apply_features(statement.label, rows, features, labels)
    held_out = None
    if _searches(trainer, statement.attributes, base, training):
        batches = list(validation)  # in memory, one batch: the search's choice, then validation
        held_out, validation = (batches[0] if batches else None), iter(batches)
    data, details = _fit(context, trainer, training, labels, statement.attributes, base, held_out)
    metrics, how = _validate(context, trainer, data, details, validation, rows.how, labels, chosen)
    trained = Trained(data, details, metrics, features, labels, training.rows, how, attributes)
    return store_model(context, statement, store, model_family, base, trained, extra_metadata)


def _read(statement: ir.TrainStatement, context: Context) -> Source:
    """Read: the SELECT's rows, whole or (``train.external_memory``) as a stream."""
    if statement.attributes.get("train.external_memory"):
        return external_memory.read(statement, context)
    return in_memory.read(statement, context)


def _check_listed(statement: ir.TrainStatement, width: int) -> None:
    """A :class:`ModelError` unless a LABEL of ``width`` values a row, several, comes from
    rows in memory, validated on held-out ones."""
    if width == 1:
        return
    if statement.attributes.get("train.external_memory"):
        raise ModelError(
            f"model.n_out is {width}: a LABEL of several values trains on rows in memory only",
            hint="remove train.external_memory",
        )
    if statement.attributes.get("validation.select") is not None:
        raise ModelError(
            f"model.n_out is {width}: the LABEL of validation.select's rows is not read as "
            "several values yet",
            hint="leave out validation.select; validation.split holds out rows of the SELECT",
        )


def fit_labelled(
    statement: ir.TrainStatement, source: Source, base: StoredModel | None, width: int
) -> tuple[LabelEncoding, Labelled]:
    """Labels: the encoding (the base model's, or fitted to the LABEL column, its text of
    ``width`` numbers a row read as numbers when several), and the rows it labels, the
    validation rows set apart."""
    if not statement.label:
        return _unlabelled(statement, source, base)
    label = statement.label
    if width > 1 and isinstance(source, in_memory.InMemory):  # else refused by _check_listed
        listed = label_lists.parse(label, source.sample[label], width, "the SELECT")
        source = dataclasses.replace(source, sample={**source.sample, label: listed})
    if base is not None:
        labels = _base_labels(base)
    else:
        objective = statement.attributes.get("objective")
        task = decide_task(source.sample[label], statement.task, objective)
        labels = fit_labels(label, source.label_values(task), task, objective)
    return labels, source.split(labels)


def _unlabelled(
    statement: ir.TrainStatement, source: Source, base: StoredModel | None
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
    labels = unlabelled(statement.attributes) if base is None else _base_labels(base)
    return labels, in_memory.Split(rows, None, None)


def _base_labels(base: StoredModel) -> LabelEncoding:
    return LabelEncoding.from_dict(base.metadata["labels"])


def derive_features(
    statement: ir.TrainStatement, sample: Columns, base: StoredModel | None
) -> list[ir.FeatureColumn]:
    """Features derived: COLUMN's (or every column's) kinds and vocabularies, from the
    training rows, or the base model's, vocabularies and all."""
    if base is not None:
        return [ir.FeatureColumn.from_dict(f) for f in base.metadata["features"]]
    group = statement.attributes.get("train.group_column")
    features = derive(sample, statement.features, statement.label, group)
    rest = left_out(sample, statement.features, statement.label, group)
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


def _fit(
    context: Context,
    trainer: Trainer,
    training: Batch | Passes,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None,
    held_out: Batch | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Fit: the model's bytes and details (its training metrics among them); a searching
    trainer (:func:`_searches`) gets the ``held_out`` validation rows as ``validation``."""
    if isinstance(training, Passes):
        streaming = cast(StreamingTrainer, trainer)  # the family streams (checked by the analysis)
        return streaming.train_batches(
            context, training.batches, training.sample, training.sample_y, labels, attributes, base
        )
    extra: dict[str, Any] = {} if training.groups is None else {"groups": training.groups}
    if held_out is not None:
        extra["validation"] = (held_out.arrays, held_out.y)
    return trainer.train(context, training.arrays, training.y, labels, attributes, base, **extra)


def _searches(
    trainer: Trainer, attributes: dict[str, Any], base: StoredModel | None, training: Batch | Passes
) -> bool:
    """Whether the trainer chooses among candidate models on the validation rows (its
    ``searches(attributes)`` says so: sqlflow_models.AutoClassifier), training anew on rows
    in memory: it then gets them, when there are any."""
    searches = getattr(trainer, "searches", None)
    return base is None and isinstance(training, Batch) and bool(searches and searches(attributes))


def _validate(
    context: Context,
    trainer: Trainer,
    data: bytes,
    details: dict[str, Any],
    batches: Iterable[Batch],
    how: dict[str, Any] | None,
    labels: LabelEncoding,
    chosen: list[str],
) -> tuple[dict[str, float], dict[str, Any] | None]:
    """Validate: TO EVALUATE's metrics, then the ``chosen`` ones, on the validation rows'
    scores, named ``validation_<metric>`` (those the rows leave undefined, as AUC of a single
    class, left out), and how the rows were chosen, with their count; no metrics and None
    without rows."""
    ys, scores, groups = [], [], []
    scorer = None
    with context.reporter.stage("validating", unit="rows"):  # the scorer advances it
        for batch in batches:
            if scorer is None:  # the model loaded once, if there are validation rows
                scorer = trainer.scorer(context, data, details)
            ys.append(batch.y)
            scores.append(scorer(batch.arrays, SCORE_BATCH))
            groups.append(batch.groups)
    if not ys or how is None:
        return {}, None
    grouped = None if groups[0] is None else np.concatenate(groups)
    return validation_metrics(
        np.concatenate(ys), np.concatenate(scores), grouped, how, labels, chosen
    )


def validation_metrics(
    y: np.ndarray,
    score: np.ndarray,
    grouped: np.ndarray | None,
    how: dict[str, Any],
    labels: LabelEncoding,
    chosen: list[str],
) -> tuple[dict[str, float], dict[str, Any]]:
    """The metrics of :func:`_validate` from the validation rows' labels ``y``, scores and,
    for rankers, queries, and ``how`` with the rows' count."""
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


def store_model(
    context: Context,
    statement: ir.TrainStatement,
    store: ModelStore,
    model_family: Family,
    base: StoredModel | None,
    trained: Trained,
    extra_metadata: dict[str, Any] | None,
) -> dict[str, Any]:
    """Store: the model and its metadata (with ``extra_metadata``), which is returned."""
    details = trained.details
    if trained.how is not None:
        details = {**details, "metrics": {**details["metrics"], **trained.validation_metrics}}
    metadata = {
        "estimator": statement.estimator,
        "family": statement.family,
        "format": model_family.format,
        "attributes": trained.attributes,
        "features": [dataclasses.asdict(feature) for feature in trained.features],
        "label": statement.label,
        "labels": trained.labels.to_dict(),
        "statement": statement.text,
        "rows": trained.rows,
        "validation": trained.how,
        "base_model": None if base is None else {"name": base.name, "version": base.version},
        "trained_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "sqlml_version": sqlml.__version__,
        **details,
        **(extra_metadata or {}),
    }
    store.save(statement.model, metadata, trained.data, context.token)
    return metadata


def _attributes(statement: ir.TrainStatement, base: StoredModel | None) -> dict[str, Any]:
    """The model's attributes: the statement's and, continuing ``base``, its architecture."""
    if base is None:
        return statement.attributes
    return {**_architecture(statement, base.metadata["attributes"]), **statement.attributes}


def _architecture(statement: ir.TrainStatement, base_attributes: dict[str, Any]) -> dict[str, Any]:
    """The architecture attributes of the base model that a continued training keeps: those
    of the base's stored attributes that the statement's leave out (the analysis drops
    them) and that the estimator declares as architecture, under their stored names, or does
    not declare (a user model's own ``model.*``)."""
    estimator = find_estimator(statement.estimator) or user_estimator(statement.estimator)
    schema = {} if estimator is None else estimator.attributes
    renamed = {} if estimator is None else estimator.renamed
    architecture = {renamed.get(name, name): attr.architecture for name, attr in schema.items()}
    return {
        name: value
        for name, value in base_attributes.items()
        if name not in statement.attributes and architecture.get(name, True)
    }


def check_base_estimator(statement: ir.TrainStatement, estimator: str) -> None:
    """A :class:`ModelError` unless the base model was trained by the statement's estimator."""
    if estimator != statement.estimator:
        raise ModelError(
            f"USING {statement.base_model}: the base model was trained by {estimator}; "
            f"TO TRAIN {statement.estimator} cannot continue it",
            hint=f"continue it with TO TRAIN {estimator}, or leave out USING to train anew",
        )


def check_repeated(statement: ir.TrainStatement, base_attributes: dict[str, Any]) -> None:
    """A :class:`ModelError` at the attribute unless each of the base model's architecture
    attributes the statement repeats (USING) equals the base's; one the base's metadata does
    not hold (a base that an older sqlml stored from a continued training) is not known,
    and passes."""
    for name, given in (statement.repeated or {}).items():
        if name in base_attributes and base_attributes[name] != given["value"]:
            raise ModelError(
                f"attribute {given['written']} = {json.dumps(given['value'])} differs from "
                f"the base model {statement.base_model}'s "
                f"{json.dumps(base_attributes[name])}",
                line=given["line"],
                column=given["column"],
                hint=f"leave {given['written']} out to continue {statement.base_model} "
                "(USING keeps its architecture), or leave out USING to train anew",
            )


def _base(statement: ir.TrainStatement, store: ModelStore, model_format: str) -> StoredModel:
    """The base model named by USING, checked to be one the statement can continue."""
    with blame(f"USING {statement.base_model}"):
        base = store.load(statement.base_model)
    check_base_estimator(statement, base.metadata["estimator"])
    check_repeated(statement, base.metadata["attributes"])
    if base.metadata["format"] != model_format:
        raise ModelError(
            f"USING {statement.base_model}: the base model is stored as "
            f"{base.metadata['format']}, which this version of sqlml cannot continue",
            hint="leave out USING to train anew",
        )
    return base


def summary(statement: ir.TrainStatement, metadata: dict[str, Any]) -> str:
    base = f" from {statement.base_model}" if statement.base_model else ""
    how = metadata["validation"]
    if how is None:
        validated = ""
    else:
        source = "validation.select" if "select" in how else "held-out"
        validated = f", validated on {how['rows']} {source} rows"
    shown = format_metrics(metadata["metrics"])
    return (
        f"trained {statement.model} ({statement.estimator}){base} on {metadata['rows']} rows"
        f"{validated}: {shown}"
    )
