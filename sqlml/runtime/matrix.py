"""The features as one float64 matrix, its standardisation and squared distances: what the
families whose models measure distances share (k-means, the one-class SVM, the
time-series models)."""

from __future__ import annotations

import numpy as np

from sqlml.runtime.features_apply import FeatureArrays


def values(features: FeatureArrays) -> np.ndarray:
    """The features as float64, categories one-hot, NULL as the column's mean (0 once
    standardised): the rows a model is trained on."""
    return imputed(numbers(features))


def numbers(features: FeatureArrays) -> np.ndarray:
    """The features as float64, categories one-hot, NULL as NaN."""
    return features.matrix(one_hot=True)[0].astype(np.float64)


def imputed(x: np.ndarray, means: np.ndarray | None = None) -> np.ndarray:
    """``x`` with NaN as each column's value of ``means`` (a model scoring: its training
    rows' means), or by default as the column's own mean (0 where all are NaN)."""
    missing = np.isnan(x)
    if not missing.any():
        return x
    if means is None:
        means = np.nanmean(np.where(missing.all(axis=0), 0.0, x), axis=0)
    return np.where(missing, means, x)


def standardisation(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's mean and standard deviation (1 for a constant column)."""
    scale = x.std(axis=0)
    return x.mean(axis=0), np.where(scale > 0, scale, 1.0)


def squared_distances(z: np.ndarray, centers: np.ndarray) -> np.ndarray:
    """Squared distances, rows x centres."""
    squared = (z**2).sum(axis=1)[:, None] - 2 * z @ centers.T + (centers**2).sum(axis=1)
    return np.maximum(squared, 0.0)
