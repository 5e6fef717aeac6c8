"""The Keras family's trainer: it trains (in memory or streamed) and scores Keras models,
built, fitted and stored by :mod:`.network` (the ``.keras`` format, loaded in safe mode: no
code runs); sqlflow_models.AutoClassifier searches its network (:mod:`.search`).

TensorFlow is imported (by :mod:`sqlml.models.keras.library`) only when a Keras model is
trained or used.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from sqlml.errors import ModelError, SqlmlError
from sqlml.models.checks import TAMPERED_HINT
from sqlml.models.keras import library
from sqlml.models.keras.model import network
from sqlml.models.keras.size import check_network
from sqlml.models.store import StoredModel
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays, check_column_types
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.spool import Page, Spool


def _reject_nulls(features: FeatureArrays) -> None:
    if np.isnan(features.numbers).any():
        raise ModelError(
            "the features hold NULL values, which a neural network cannot take",
            hint="filter them out or replace them with COALESCE in the SELECT",
        )


def _check_size(features: FeatureArrays, attributes: dict[str, Any]) -> None:
    """Refuse a network that holds more weights than a model may, before TensorFlow is
    imported (it would allocate it first)."""
    embeddings = [c for c in features.categoricals if c.encoding == "embedding"]
    width = features.numbers.shape[1] + sum(
        c.dimension if c.encoding == "embedding" else c.buckets for c in features.categoricals
    )
    check_network(width, sum(c.buckets * c.dimension for c in embeddings), attributes)


def train(
    context: Context,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
    validation: tuple[FeatureArrays, np.ndarray] | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Fit ``train.epoch`` epochs, from scratch or from the weights of ``base`` (checking
    ``context``'s token after each batch and reporting each epoch to its reporter).

    Classifiers learn the cross-entropy of their class probabilities, regressors the mean
    squared error of their values (``y`` rows x n: n values a row). An AutoClassifier
    (:func:`searches`) trained anew searches its network (:mod:`sqlml.models.keras.model.tuning`),
    choosing on the ``validation`` rows.
    """
    _reject_nulls(features)
    _check_size(features, attributes)
    keras = _keras(context)
    if searches(attributes):
        from sqlml.models.keras.model import tuning

        if base is None:
            return tuning.search(context, keras, features, y, labels, attributes, validation)
        attributes = tuning.continued(attributes, base)
    model, details = network.trained(context, keras, features, y, labels, attributes, base)
    return network.saved(model), details


def _keras(context: Context) -> Any:
    """The ``keras`` module; its first import (seconds) is a stage of its own of
    ``context``'s progress, ``loading TensorFlow``."""
    if library.loaded():
        return library.keras()
    with context.reporter.stage("loading TensorFlow", unit=""):
        return library.keras()


def searches(attributes: dict[str, Any]) -> bool:
    """Whether a training of ``attributes`` searches its network (sqlflow_models.AutoClassifier),
    choosing on the validation rows the trainer is given."""
    return attributes.get("architecture") == "auto"


def train_batches(
    context: Context,
    batches: Callable[[], Iterator[tuple[FeatureArrays, np.ndarray]]],
    sample: FeatureArrays,
    sample_y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Fit like :func:`train`, on training rows that ``batches()`` yields pass after pass
    (one pass an epoch; the epochs after the first read the first's batches from a
    temporary folder: :mod:`sqlml.runtime.spool`), through a ``tf.data`` pipeline of whole
    gradient-step batches.

    The network (input widths, normalisation, a regressor's output scale) is built from
    the ``sample`` rows; each batch's rows are shuffled within it.
    """
    if searches(attributes):
        raise ModelError(
            "sqlflow_models.AutoClassifier searches its network on rows in memory",
            hint="remove train.external_memory",
        )
    _reject_nulls(sample)
    _check_size(sample, attributes)
    keras = _keras(context)
    tf = library.tensorflow()

    model, params = network.compiled(keras, sample, sample_y, labels, attributes, base)
    size = attributes["train.batch_size"]
    shuffle = np.random.default_rng(attributes["train.seed"])
    folder = tempfile.TemporaryDirectory(prefix="sqlml-keras-")  # the first epoch's batches
    spool = Spool(Path(folder.name))

    def pages() -> Iterator[Page]:
        for features, y in batches():
            _reject_nulls(features)
            yield features.inputs(), y

    def steps() -> Iterator[tuple[dict[str, np.ndarray], np.ndarray]]:
        for inputs, y in spool.passed(pages()):
            order = shuffle.permutation(len(y))
            for start in range(0, len(y), size):
                rows = order[start : start + size]
                yield {name: values[rows] for name, values in inputs.items()}, y[rows]

    signature = (
        {
            name: tf.TensorSpec((None, values.shape[1] if name.startswith("numbers") else None),
                                tf.as_dtype(values.dtype))
            for name, values in sample.inputs().items()
        },
        tf.TensorSpec((None,), tf.as_dtype(sample_y.dtype)),
    )  # fmt: skip
    dataset = tf.data.Dataset.from_generator(steps, output_signature=signature)
    with folder:
        history = network.fit(
            context,
            keras,
            model,
            dataset.prefetch(tf.data.AUTOTUNE),
            epochs=attributes["train.epoch"],
            max_steps=attributes.get("train.max_steps"),
            shuffle=False,  # shuffled batch by batch above
        )
    return network.saved(model), network.details(params, history, sample)


def loaded(data: bytes) -> Any:
    """The stored network, loaded as :func:`scorer` loads it (safe mode: no code runs), for
    its layers to be read (:mod:`sqlml.models.keras.sql`)."""
    return network.load(library.keras(), data)


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """The stored model, loaded once, as a function of features and a batch size that
    returns class probabilities (rows x classes) for classifiers, values for regressors (rows
    x n for n values a row); it stops between batches once ``context``'s token is cancelled,
    and reports the rows scored to its reporter."""
    keras = _keras(context)
    model = network.load(keras, data)

    def score(features: FeatureArrays, batch_size: int) -> np.ndarray:
        check_column_types(features, metadata)
        _reject_nulls(features)
        try:
            scores = _predicted(context, keras, model, features, batch_size)
        except SqlmlError:  # cancelled
            raise
        except Exception as error:  # Keras reports inputs that do not fit in many ways
            reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise ModelError(
                f"the stored Keras model does not take its features: "
                f"{type(error).__name__}: {reason[:300]}",
                hint=TAMPERED_HINT,
            ) from None
        # A classifier's probabilities and several values a row (model.n_out) as they are
        return scores[:, 0] if scores.shape[1] == 1 else scores

    return score


def _predicted(context: Context, keras, model, features: FeatureArrays, batch_size: int):
    """The model's outputs of ``features``. Rows that fit in one batch are scored by
    ``predict_on_batch``, the same compiled function as ``predict`` without its set-up of
    about 0.2 s a call: a query on SQLite calls the model a row at a time."""
    if 0 < features.rows <= batch_size:
        context.token.check()
        scores = model.predict_on_batch(features.inputs())
        context.reporter.advance(features.rows)
        return scores
    callbacks = network.predict_callbacks(context, keras, features.rows, batch_size)
    return model.predict(features.inputs(), batch_size=batch_size, verbose=0, callbacks=callbacks)
