"""Keras models, stored in the ``.keras`` format and loaded in safe mode (no code runs).

TensorFlow is imported here only, when a Keras model is trained or used.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.runtime.feature_arrays import FeatureArrays
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.model_store import StoredModel

FORMAT = "keras-v3"


def _keras():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import keras
    except ImportError:
        raise ModelError(
            "Keras models need TensorFlow, which is not installed",
            hint="pip install 'sqlml[tensorflow]'",
        ) from None
    return keras


def _reject_nulls(features: FeatureArrays) -> None:
    if np.isnan(features.numbers).any():
        raise ModelError(
            "the features hold NULL values, which a neural network cannot take",
            hint="filter them out or replace them with COALESCE in the SELECT",
        )


def train(
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Fit ``train.epoch`` epochs, from scratch or from the weights of ``base``."""
    _reject_nulls(features)
    keras = _keras()
    keras.utils.set_random_seed(attributes["train.seed"])
    if base is None:
        n_classes = _n_classes(labels, attributes)
        model = _dnn(keras, features, n_classes, attributes)
    else:
        n_classes = base.metadata["params"]["n_classes"]
        model = _load(keras, base.data)
    model.compile(
        optimizer=keras.optimizers.Adam(attributes["optimizer.learning_rate"]),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    history = model.fit(
        features.inputs(),
        y,
        epochs=attributes["train.epoch"],
        batch_size=attributes["train.batch_size"],
        verbose=0,
    )
    metrics = {f"train_{name}": float(values[-1]) for name, values in history.history.items()}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.keras"
        model.save(path)
        data = path.read_bytes()
    return data, {"params": {"n_classes": n_classes}, "metrics": metrics}


def _n_classes(labels: LabelEncoding, attributes: dict[str, Any]) -> int:
    """``model.n_classes``, or the number of classes of the label when it is omitted."""
    given, found = attributes.get("model.n_classes"), len(labels.classes)
    if given is not None and given < found:
        raise ModelError(
            f"model.n_classes is {given}, but the label has {found} classes",
            hint=f"set model.n_classes = {found} or leave it out",
        )
    return given or found


def _dnn(keras, features: FeatureArrays, n_classes: int, attributes: dict[str, Any]):
    """Numbers normalised with the training data's statistics and categories embedded or
    one-hot encoded, side by side, then dense layers.

    Only built-in layers, so the model loads in safe mode. An embedding is the weighted sum
    of its row's id vectors (``Dot`` with the weights, which carry the combiner).
    """
    inputs, parts = {}, []
    if features.numbers.shape[1]:
        inputs["numbers"] = keras.Input(shape=(features.numbers.shape[1],), name="numbers")
        normalize = keras.layers.Normalization(name="normalize")
        normalize.adapt(features.numbers)
        parts.append(normalize(inputs["numbers"]))
    for i, category in enumerate(features.categoricals):
        ids = inputs[f"ids_{i}"] = keras.Input(shape=(None,), dtype="int32", name=f"ids_{i}")
        weights = inputs[f"weights_{i}"] = keras.Input(shape=(None,), name=f"weights_{i}")
        if category.encoding == "embedding":
            vectors = keras.layers.Embedding(category.buckets, category.dimension)(ids)
            parts.append(keras.layers.Dot(axes=1)([weights, vectors]))
        else:
            encode = keras.layers.CategoryEncoding(category.buckets, output_mode="count")
            parts.append(encode(ids, count_weights=weights))
    hidden = parts[0] if len(parts) == 1 else keras.layers.Concatenate()(parts)
    for units in attributes["model.hidden_units"]:
        hidden = keras.layers.Dense(units, activation=attributes["model.activation"])(hidden)
        if attributes["model.dropout"]:
            hidden = keras.layers.Dropout(attributes["model.dropout"])(hidden)
    outputs = keras.layers.Dense(n_classes, activation="softmax", name="classes")(hidden)
    return keras.Model(inputs, outputs)


def predict_scores(
    data: bytes, features: FeatureArrays, metadata: dict[str, Any], batch_size: int
) -> np.ndarray:
    """Class probabilities (rows x classes)."""
    model = _load(_keras(), data)
    _reject_nulls(features)
    return model.predict(features.inputs(), batch_size=batch_size, verbose=0)


def _load(keras, data: bytes):
    """A stored model, loaded in safe mode: no code in it runs."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.keras"
        path.write_bytes(data)
        return keras.saving.load_model(path, compile=False, safe_mode=True)
