"""TO TRAIN, in its stages, each called once and in order: read the rows, fit the labels,
derive the features, apply them, fit the model (or continue a base model), validate it,
store it. The stages that touch only data (labels, features, the validation metrics) are
:mod:`sqlml.runtime.training_data`'s, below the model families that share them.

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
(XGBoost's: :mod:`sqlml.models.xgboost.distributed`) hands back the trained model, which
this module stores.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Iterable
from typing import Any, cast

import numpy as np

import sqlml
from sqlml import ir
from sqlml.errors import ModelError
from sqlml.models import Family, StreamingTrainer, Trainer, family
from sqlml.models.store import ModelStore, StoredModel
from sqlml.runtime import external_memory, in_memory, label_lists, lineage
from sqlml.runtime.context import Context
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.progress import format_metrics
from sqlml.runtime.rows import SCORE_BATCH, blame
from sqlml.runtime.training_data import (
    Batch,
    Passes,
    Source,
    Trained,
    apply_features,
    chosen_metrics,
    derive_features,
    fit_labelled,
    validation_metrics,
)
from sqlml.runtime.workers import job_size


def train(statement: ir.TrainStatement, context: Context) -> Outcome:
    model_family = family(statement.family)
    distributed = model_family.distributed()
    if distributed and max(statement.attributes.get("train.workers") or 1, job_size()) > 1:
        # several processes: started here, or the pods of a training job
        tables = lineage.fingerprints(statement, context)
        trained = distributed.train(statement, context)
        if isinstance(trained, Outcome):  # a worker's part: another process stores the model
            return trained
        store = ModelStore(context.datasource)
        version, metadata = store_model(
            context, statement, store, model_family, None, trained, tables
        )
    else:
        version, metadata = train_and_save(statement, context)
    return Outcome(summary=summary(statement, metadata), model=(statement.model, version))


def train_and_save(
    statement: ir.TrainStatement,
    context: Context,
    extra_metadata: dict[str, Any] | None = None,
) -> tuple[int, dict[str, Any]]:
    """Train, validate and store the model with ``extra_metadata``; its version and
    metadata."""
    store = ModelStore(context.datasource)
    model_family = family(statement.family)
    trainer = model_family.trainer()
    base = _base(statement, store, model_family.format) if statement.base_model else None
    attributes = _attributes(statement, base)
    width = label_lists.width(attributes)
    _check_listed(statement, width)
    tables = lineage.fingerprints(statement, context)  # of the rows about to be read
    source = _read(statement, context)
    kept = None if base is None else LabelEncoding.from_dict(base.metadata["labels"])
    labels, rows = fit_labelled(statement, source, kept, width)
    chosen = chosen_metrics(statement, labels)
    if base is None:
        features = derive_features(statement, rows.sample)
    else:  # the base model's, vocabularies and all
        features = [ir.FeatureColumn.from_dict(f) for f in base.metadata["features"]]
    training, validation = apply_features(statement.label, rows, features, labels)
    held_out = None
    if _searches(trainer, statement.attributes, base, training):
        batches = list(validation)  # in memory, one batch: the search's choice, then validation
        held_out, validation = (batches[0] if batches else None), iter(batches)
    data, details = _fit(context, trainer, training, labels, statement.attributes, base, held_out)
    metrics, how = _validate(context, trainer, data, details, validation, rows.how, labels, chosen)
    trained = Trained(data, details, metrics, features, labels, training.rows, how, attributes)
    return store_model(
        context, statement, store, model_family, base, trained, tables, extra_metadata
    )


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


def store_model(
    context: Context,
    statement: ir.TrainStatement,
    store: ModelStore,
    model_family: Family,
    base: StoredModel | None,
    trained: Trained,
    tables: dict[str, str | None],
    extra_metadata: dict[str, Any] | None = None,
) -> tuple[int, dict[str, Any]]:
    """Store: the model and its metadata (with ``extra_metadata``); its version and metadata.
    Its lineage holds ``tables``, the fingerprints of the tables read."""
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
        lineage.KEY: lineage.lineage(statement, context, model_family.libraries, tables),
        **details,
        **(extra_metadata or {}),
    }
    return store.save(statement.model, metadata, trained.data, context.token), metadata


def _attributes(statement: ir.TrainStatement, base: StoredModel | None) -> dict[str, Any]:
    """The model's attributes: the statement's and, continuing ``base``, its architecture."""
    if base is None:
        return statement.attributes
    return {**_architecture(statement, base.metadata["attributes"]), **statement.attributes}


def _architecture(statement: ir.TrainStatement, base_attributes: dict[str, Any]) -> dict[str, Any]:
    """The architecture attributes of the base model that a continued training keeps: those
    of the base's stored attributes that the statement's leave out (the analysis drops
    them) and that the analysis did not find among the estimator's training attributes
    (a user model's own ``model.*`` is kept)."""
    training = set(statement.training_attributes or ())
    return {
        name: value
        for name, value in base_attributes.items()
        if name not in statement.attributes and name not in training
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
        base = store.load(statement.base_model, statement.base_version)
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
