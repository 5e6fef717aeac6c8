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
from sqlml.runtime.labels import LabelEncoding

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


def _reject_nulls(x: np.ndarray) -> None:
    if np.isnan(x).any():
        raise ModelError(
            "the features hold NULL values, which a neural network cannot take",
            hint="filter them out or replace them with COALESCE in the SELECT",
        )


def train(
    x: np.ndarray, y: np.ndarray, labels: LabelEncoding, attributes: dict[str, Any]
) -> tuple[bytes, dict[str, Any]]:
    _reject_nulls(x)
    keras = _keras()
    keras.utils.set_random_seed(attributes["train.seed"])
    n_classes = max(attributes.get("model.n_classes") or 0, len(labels.classes))
    if attributes.get("model.n_classes") and attributes["model.n_classes"] < len(labels.classes):
        raise ModelError(
            f"model.n_classes is {attributes['model.n_classes']}, "
            f"but the label has {len(labels.classes)} classes",
            hint=f"set model.n_classes = {len(labels.classes)} or leave it out",
        )
    model = _dnn(keras, x, n_classes, attributes)
    model.compile(
        optimizer=keras.optimizers.Adam(attributes["optimizer.learning_rate"]),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    history = model.fit(
        x,
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


def _dnn(keras, x: np.ndarray, n_classes: int, attributes: dict[str, Any]):
    """Inputs normalised with the training data's statistics, then dense layers."""
    inputs = keras.Input(shape=(x.shape[1],), name="features")
    normalize = keras.layers.Normalization(name="normalize")
    normalize.adapt(x)
    hidden = normalize(inputs)
    for units in attributes["model.hidden_units"]:
        hidden = keras.layers.Dense(units, activation=attributes["model.activation"])(hidden)
        if attributes["model.dropout"]:
            hidden = keras.layers.Dropout(attributes["model.dropout"])(hidden)
    outputs = keras.layers.Dense(n_classes, activation="softmax", name="classes")(hidden)
    return keras.Model(inputs, outputs)


def predict_scores(
    data: bytes, x: np.ndarray, metadata: dict[str, Any], batch_size: int
) -> np.ndarray:
    """Class probabilities (rows x classes)."""
    keras = _keras()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.keras"
        path.write_bytes(data)
        model = keras.saving.load_model(path, compile=False, safe_mode=True)
    _reject_nulls(x)
    return model.predict(x, batch_size=batch_size, verbose=0)
