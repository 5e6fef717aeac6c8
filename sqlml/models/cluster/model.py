"""k-means in numpy: train (k-means++ starts, Lloyd's iterations, the run of least inertia
kept) and score (DEC's soft assignment to each centre: Student's t kernel, so the most likely
cluster is the nearest centre). Deterministic for a seed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.models.cluster.checks import kmeans_document
from sqlml.models.store import StoredModel
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.matrix import imputed, numbers, squared_distances, standardisation, values


def train(
    context: Context,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
    **ranking: np.ndarray,
) -> tuple[bytes, dict[str, Any]]:
    """Cluster the rows (from the base model's centres, with ``base``)."""
    x = values(features)
    k = len(labels.classes)  # model.n_clusters, or the base model's
    if len(x) < k:
        raise ModelError(
            f"model.n_clusters is {k}, but the SELECT returns {len(x)} rows",
            hint="set model.n_clusters to at most the number of rows",
        )
    if base is not None:
        document = kmeans_document(base.data)
        mean, scale = np.array(document["mean"]), np.array(document["scale"])
        starts = [np.array(document["centers"])]
    else:
        mean, scale = standardisation(x)
    z = (x - mean) / scale
    if base is None:
        rng = np.random.default_rng(attributes["train.seed"])
        starts = [_plus_plus(z, k, rng) for _ in range(attributes["model.n_init"])]
    best: tuple[float, np.ndarray] | None = None
    tol = attributes["model.tol"]
    with context.reporter.stage("training", total=len(starts), unit="runs"):
        for centers in starts:
            context.token.check()
            inertia, centers = _lloyd(z, centers, attributes["model.max_iter"], tol)
            if best is None or inertia < best[0]:
                best = (inertia, centers)
            context.reporter.advance()
    assert best is not None
    document = {"mean": mean.tolist(), "scale": scale.tolist(), "centers": best[1].tolist()}
    params = {"n_clusters": k, "columns": int(x.shape[1])}
    metrics = {"inertia": best[0], "train_rows": float(len(x))}
    return json.dumps(document).encode(), {
        "params": params,
        "metrics": metrics,
        "column_types": features.column_types,
    }


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """Each row's soft assignment to the clusters (rows x clusters, rows summing to 1)."""
    document = kmeans_document(data)
    mean, scale = np.array(document["mean"]), np.array(document["scale"])
    centers = np.array(document["centers"])

    def score(features: FeatureArrays, batch_size: int) -> np.ndarray:
        x = numbers(features)
        if x.shape[1] != len(mean):
            raise ModelError(
                f"the features make {x.shape[1]} columns, but the model was trained on {len(mean)}",
                hint="select the columns the model was trained on",
            )
        x = imputed(x, mean)  # NULL as the training rows' mean, whatever the batch
        kernel = 1.0 / (1.0 + squared_distances((x - mean) / scale, centers))
        context.reporter.advance(len(x))
        return kernel / kernel.sum(axis=1, keepdims=True)

    return score


def _plus_plus(z: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ starting centres: each next one drawn with probability ∝ squared distance."""
    centers = [z[rng.integers(len(z))]]
    for _ in range(1, k):
        nearest = squared_distances(z, np.array(centers)).min(axis=1)
        total = nearest.sum()
        index = rng.choice(len(z), p=nearest / total) if total > 0 else rng.integers(len(z))
        centers.append(z[index])
    return np.array(centers)


def _lloyd(
    z: np.ndarray, centers: np.ndarray, max_iter: int, tol: float
) -> tuple[float, np.ndarray]:
    """Lloyd's iterations from ``centers``: the inertia and the final centres (an emptied
    cluster keeps its centre)."""
    for _ in range(max_iter):
        assigned = squared_distances(z, centers).argmin(axis=1)
        moved = centers.copy()
        for cluster in range(len(centers)):
            members = z[assigned == cluster]
            if len(members):
                moved[cluster] = members.mean(axis=0)
        shift = float(np.abs(moved - centers).max())
        centers = moved
        if shift <= tol:
            break
    inertia = float(squared_distances(z, centers).min(axis=1).sum())
    return inertia, centers


def points(data: bytes, metadata: dict[str, Any], features: FeatureArrays) -> np.ndarray:
    """The rows as the model clusters them: standardised with the training rows' means and
    standard deviations it stored (NULL as the mean)."""
    document = kmeans_document(data)
    mean = np.array(document["mean"])
    return (imputed(numbers(features), mean) - mean) / np.array(document["scale"])
