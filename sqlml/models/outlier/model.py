"""A one-class model in numpy: the mean RBF kernel of a row to up to ``model.max_landmarks``
training rows (standardised) is its density; the threshold is the ``model.nu`` quantile of
the training rows' densities. A row at or above it is an inlier (1), below an outlier (-1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.models.outlier.checks import one_class_document
from sqlml.models.store import StoredModel
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.matrix import imputed, numbers, squared_distances, standardisation, values

_BLOCK = 4_096  # rows scored at once: a block x landmarks kernel matrix


def train(
    context: Context,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
    **ranking: np.ndarray,
) -> tuple[bytes, dict[str, Any]]:
    """Fit the density and its threshold (anew: a base model's landmarks are not kept)."""
    x = values(features)
    mean, scale = standardisation(x)
    z = (x - mean) / scale
    rng = np.random.default_rng(attributes["train.seed"])
    count = min(len(z), attributes["model.max_landmarks"])
    landmarks = z[np.sort(rng.choice(len(z), count, replace=False))]
    gamma = _gamma(attributes["model.gamma"], z.shape[1])
    with context.reporter.stage("training", total=len(z), unit="rows"):
        density = _density(context, z, landmarks, gamma)
    threshold = float(np.quantile(density, attributes["model.nu"]))
    threshold = max(threshold, float(np.finfo(np.float64).tiny))
    document = {
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "landmarks": landmarks.tolist(),
        "gamma": gamma,
        "threshold": threshold,
    }
    outliers = float((density < threshold).mean())
    return json.dumps(document).encode(), {
        "params": {"gamma": gamma, "landmarks": count, "columns": int(z.shape[1])},
        "metrics": {"train_outlier_share": outliers, "train_rows": float(len(z))},
        "column_types": features.column_types,
    }


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """Each row's scores of the classes -1 and 1: with ``s`` its density over the threshold,
    ``1 / (1 + s)`` and ``s / (1 + s)``, so 1 wins at or above the threshold."""
    score = extra_scorer(context, data, metadata)
    return lambda features, batch_size: score(features, batch_size)[0]


def extra_scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], tuple[np.ndarray, dict[str, np.ndarray]]]:
    """The scores of :func:`scorer`, and ``score``: each row's decision function, its
    density minus the threshold (positive for an inlier, negative for an outlier, as
    scikit-learn's)."""
    document = one_class_document(data)
    mean, scale = np.array(document["mean"]), np.array(document["scale"])
    landmarks, gamma = np.array(document["landmarks"]), document["gamma"]
    threshold = document["threshold"]

    def score(features: FeatureArrays, batch_size: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        x = numbers(features)
        if x.shape[1] != len(mean):
            raise ModelError(
                f"the features make {x.shape[1]} columns, but the model was trained on {len(mean)}",
                hint="select the columns the model was trained on",
            )
        x = imputed(x, mean)  # NULL as the training rows' mean, whatever the batch
        density = _density(context, (x - mean) / scale, landmarks, gamma)
        ratio = density / threshold
        scores = np.column_stack([1 / (1 + ratio), ratio / (1 + ratio)])
        return scores, {"score": density - threshold}

    return score


def _gamma(given: str, columns: int) -> float:
    """The RBF coefficient ``model.gamma`` names: 'scale' and 'auto' are 1 / columns (the
    columns are standardised), else a positive number."""
    if given in ("scale", "auto"):
        return 1.0 / max(columns, 1)
    try:
        gamma = float(given)
    except ValueError:
        gamma = -1.0
    if not gamma > 0 or not np.isfinite(gamma):
        raise ModelError(
            f"model.gamma must be 'scale', 'auto' or a positive number, got {given!r}",
            hint="e.g. model.gamma = 'scale' or model.gamma = '0.1'",
        )
    return gamma


def _density(context: Context, z: np.ndarray, landmarks: np.ndarray, gamma: float) -> np.ndarray:
    """The mean RBF kernel of each row of ``z`` to the landmarks, a block of rows at a time."""
    parts = []
    for block in context.batches(z, _BLOCK):
        parts.append(np.exp(-gamma * squared_distances(block, landmarks)).mean(axis=1))
    return np.concatenate(parts) if parts else np.zeros(0)
