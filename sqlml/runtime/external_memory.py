"""TO TRAIN with ``train.external_memory = true``: the rows stream through in batches, so
data larger than memory trains (XGBoost from ``xgboost.DataIter`` with its cache files in a
temporary folder; Keras from ``tf.data``).

Each pass over the data reads the SELECT again, batch by batch; nothing is cached locally.
- Feature columns (kinds, vocabularies, shapes) and Keras's normalisation are derived from a
  sample: the first ``SAMPLE_ROWS`` rows. Category values not in the sample fall in the
  out-of-vocabulary bucket.
- The classes of a classifier's label come from the database: ``SELECT DISTINCT`` label.
- ``validation.split`` holds out a seeded draw of each batch's rows (not stratified);
  ``validation.select`` streams too. The held-out rows are scored after training, in one
  more pass; only their labels and scores are kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing

import numpy as np

from sqlml import ir
from sqlml.errors import ModelError
from sqlml.models import Trainer
from sqlml.runtime.datasource import Columns, Datasource
from sqlml.runtime.datasource.base import join_batches
from sqlml.runtime.feature_arrays import FeatureArrays, transform
from sqlml.runtime.feature_columns import check_columns, derive
from sqlml.runtime.features import check_rows
from sqlml.runtime.fitted import Fitted, base_features, blame
from sqlml.runtime.inference import SCORE_BATCH
from sqlml.runtime.labels import (
    LabelEncoding,
    check_label,
    decide_task,
    encode_label,
    fit_labels,
)
from sqlml.runtime.model_store import StoredModel

SAMPLE_ROWS = 100_000
# Rows per batch, and so per XGBoost page: memory holds about one batch; bigger pages train
# faster (1,000,000 rows x 10 columns: 30 s of CPU with 262,144-row pages, 47 s with 65,536).
BATCH_ROWS = 262_144


def fit_batches(
    statement: ir.TrainStatement,
    datasource: Datasource,
    trainer: Trainer,
    base: StoredModel | None,
) -> Fitted:
    """Train on the SELECT's rows, batch by batch."""
    attributes, label = statement.attributes, statement.label
    if attributes.get("train.group_column"):
        raise ModelError(
            "train.external_memory cannot train rankers (train.group_column): each query's "
            "rows must be together in memory",
            hint="leave out train.external_memory",
        )
    sample = _sample(datasource, statement.select)
    check_rows(sample)
    check_label(label, sample, "the SELECT")
    labels = _labels(statement, datasource, sample[label], base)
    features = derive(sample, statement.features, label) if base is None else base_features(base)
    select = attributes.get("validation.select")
    share = 0.0 if select else attributes["validation.split"]
    seed = attributes["validation.seed"]
    rows = [0]  # training rows counted by the latest pass

    def training() -> Iterator[tuple[FeatureArrays, np.ndarray]]:
        rows[0] = 0
        with closing(datasource.read_batches(statement.select, BATCH_ROWS)) as stream:
            for index, columns in enumerate(stream):
                kept = _rows(columns, ~_held(index, columns, share, seed))
                if len(kept[label]):
                    rows[0] += len(kept[label])
                    yield _arrays(kept, features, labels, label, "the SELECT")

    sample_y = encode_label(labels, label, sample[label], "the SELECT")
    data, details = trainer.train_batches(
        training, transform(sample, features), sample_y, labels, attributes, base
    )
    fitted = Fitted(data, details, features, labels, rows[0])
    if select:
        batches = _validation(datasource.read_batches(select, BATCH_ROWS), features, labels, label)
        how = {"select": select}
    elif share:
        held = (
            (_rows(columns, _held(index, columns, share, seed)), "the SELECT")
            for index, columns in enumerate(datasource.read_batches(statement.select, BATCH_ROWS))
        )
        batches = _scored(held, features, labels, label)
        how = {"split": share, "seed": seed}
    else:
        return fitted
    ys, scores = [], []
    for arrays, y in batches:
        ys.append(y)
        scores.append(trainer.predict_scores(data, arrays, details, SCORE_BATCH))
    if not ys:
        return fitted
    how["rows"] = sum(map(len, ys))
    return Fitted(
        data,
        details,
        features,
        labels,
        rows[0],
        how,
        np.concatenate(ys),
        np.concatenate(scores),
    )


def _sample(datasource: Datasource, select: str) -> Columns:
    """The first ``SAMPLE_ROWS`` rows of ``select``: its columns, empty if it has no rows."""
    batches, rows = [], 0
    with closing(datasource.read_batches(select, BATCH_ROWS)) as stream:
        for batch in stream:
            batches.append(batch)
            rows += len(next(iter(batch.values())))
            if rows >= SAMPLE_ROWS:
                break
    return {name: values[:SAMPLE_ROWS] for name, values in join_batches(batches).items()}


def _labels(
    statement: ir.TrainStatement,
    datasource: Datasource,
    sample: np.ndarray,
    base: StoredModel | None,
) -> LabelEncoding:
    """The base model's label encoding, or one fitted to every distinct label value."""
    if base is not None:
        return LabelEncoding.from_dict(base.metadata["labels"])
    objective = statement.attributes.get("objective")
    task = decide_task(sample, statement.task, objective)
    if task == "classifier":
        column = datasource.quote([statement.label])
        distinct = datasource.read(
            f"SELECT DISTINCT {column} FROM ({statement.select}) AS sqlml_rows"
        )
        sample = next(iter(distinct.values()))
    return fit_labels(statement.label, sample, task, objective)


def _held(index: int, columns: Columns, share: float, seed: int) -> np.ndarray:
    """Which rows of batch ``index`` are held out: a draw seeded by ``seed`` and the batch."""
    rows = len(next(iter(columns.values())))
    if not share:
        return np.zeros(rows, dtype=bool)
    return np.random.default_rng([seed, index]).random(rows) < share


def _rows(columns: Columns, chosen: np.ndarray) -> Columns:
    return {name: values[chosen] for name, values in columns.items()}


def _arrays(
    columns: Columns,
    features: list[ir.FeatureColumn],
    labels: LabelEncoding,
    label: str,
    source: str,
) -> tuple[FeatureArrays, np.ndarray]:
    check_label(label, columns, source)
    return transform(columns, features), encode_label(labels, label, columns[label], source)


def _validation(
    batches: Iterator[Columns], features: list[ir.FeatureColumn], labels: LabelEncoding, label: str
) -> Iterator[tuple[FeatureArrays, np.ndarray]]:
    """The validation.select's batches, checked and named in errors."""
    for columns in batches:
        with blame("validation.select"):
            check_columns(columns, features, "validation.select")
            if len(next(iter(columns.values()))):
                yield _arrays(columns, features, labels, label, "validation.select")


def _scored(
    batches: Iterator[tuple[Columns, str]],
    features: list[ir.FeatureColumn],
    labels: LabelEncoding,
    label: str,
) -> Iterator[tuple[FeatureArrays, np.ndarray]]:
    for columns, source in batches:
        if len(columns[label]):
            yield _arrays(columns, features, labels, label, source)
