"""ConstantRegressor's trainer: the mean label in JSON, NumPy only."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np


def train(
    context: Any,
    features: Any,
    y: np.ndarray,
    labels: Any,
    attributes: dict[str, Any],
    base: Any = None,
    **ranking: np.ndarray,
) -> tuple[bytes, dict[str, Any]]:
    """The mean of ``y``, shrunk toward 0; its own metrics: the rows and the mean."""
    mean = float(np.mean(y)) * (1 - attributes["model.shrink"])
    metrics = {"train_rows": float(len(y)), "train_mean": mean}
    return json.dumps({"mean": mean}).encode(), {"params": {}, "metrics": metrics}


def scorer(context: Any, data: bytes, metadata: dict[str, Any]) -> Callable[[Any, int], np.ndarray]:
    """The stored mean, for every row."""
    mean = json.loads(data)["mean"]
    return lambda features, batch_size: np.full(features.rows, mean)


def importances(data: bytes, features: Any, metadata: dict[str, Any]) -> dict[str, np.ndarray]:
    """ConstantExplainer: no feature moves the prediction; how many rows the mean is of."""
    count = len(features.names)
    rows = metadata["metrics"]["train_rows"]
    return {"influence": np.zeros(count), "rows": np.full(count, rows)}
