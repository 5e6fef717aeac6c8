"""Evaluation metrics computed in NumPy (no scikit-learn needed), under the names
:mod:`sqlml.metrics` gives them (its docstring says what each name measures)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from sqlml.metrics import (
    CLASSIFIER_METRICS,
    CLUSTERING_METRICS,
    OUTLIER_METRICS,
    RANKER_METRICS,
    REGRESSOR_METRICS,
    find_metric,
)

SILHOUETTE_ROWS = 5_000  # rows the silhouette is measured on at most (a seeded sample)
SILHOUETTE_SEED = 0
_SILHOUETTE_BLOCK = 1_024  # rows whose distances to the others are held at once
TOP_K = 5  # TopKCategoricalAccuracy's k, Keras's default


def compute(
    task: str,
    truth: np.ndarray,
    scores: np.ndarray,
    names: Sequence[str],
    groups: np.ndarray | None = None,
) -> dict[str, float]:
    """The metrics ``names`` (as written, each of ``task``) of ``scores`` against ``truth``."""
    if task == "ranker":
        assert groups is not None
        return ranker_metrics(truth, scores, groups, names)
    if task == "classifier":
        return classifier_metrics(truth, scores, names)
    return regressor_metrics(truth, scores, names)


def classifier_metrics(
    truth: np.ndarray, probabilities: np.ndarray, names: Sequence[str] = CLASSIFIER_METRICS
) -> dict[str, float]:
    """Metrics of class ``probabilities`` (rows x classes) against class indices ``truth``;
    ``names`` as written (those of other tasks left out)."""
    predicted = probabilities.argmax(axis=1)
    classes = np.union1d(truth, predicted)
    precision = np.array([_ratio(predicted, truth, c) for c in classes])
    recall = np.array([_ratio(truth, predicted, c) for c in classes])
    f1 = _f1(precision, recall)
    binary = probabilities.shape[1] == 2
    positive = {"precision": _ratio(predicted, truth, 1), "recall": _ratio(truth, predicted, 1)}
    rows = np.arange(len(truth))
    onehot = np.eye(probabilities.shape[1])[truth]
    counts = {
        "true_positives": lambda: float(np.sum((predicted == 1) & (truth == 1))),
        "true_negatives": lambda: float(np.sum((predicted == 0) & (truth == 0))),
        "false_positives": lambda: float(np.sum((predicted == 1) & (truth == 0))),
        "false_negatives": lambda: float(np.sum((predicted == 0) & (truth == 1))),
    }
    values: dict[str, Callable[[], float]] = {
        "accuracy": lambda: float(np.mean(predicted == truth)),
        "precision": lambda: float(precision.mean()),
        "recall": lambda: float(recall.mean()),
        "f1": lambda: float(f1.mean()),
        "auc": lambda: _mean_auc(truth, probabilities),
        "log_loss": lambda: float(-np.mean(np.log(np.clip(probabilities[rows, truth], 1e-15, 1)))),
        "positive_precision": lambda: positive["precision"] if binary else float(precision.mean()),
        "positive_recall": lambda: positive["recall"] if binary else float(recall.mean()),
        "positive_f1": lambda: (
            float(_f1(np.array([positive["precision"]]), np.array([positive["recall"]]))[0])
            if binary
            else float(f1.mean())
        ),
        "average_precision": lambda: _mean_average_precision(truth, probabilities),
        "balanced_accuracy": lambda: float(
            np.mean([_ratio(truth, predicted, c) for c in np.unique(truth)])
        ),
        "brier": lambda: float(
            np.mean((probabilities[:, 1] - truth) ** 2)
            if binary
            else np.mean(np.sum((probabilities - onehot) ** 2, axis=1))
        ),
        "cohen_kappa": lambda: _cohen_kappa(truth, predicted),
        "error_rate": lambda: float(np.mean(predicted != truth)),
        "hinge": lambda: _hinge(truth, probabilities),
        "binary_accuracy": lambda: float(np.mean((probabilities > 0.5) == (onehot == 1))),
        "top_k_accuracy": lambda: _top_k_accuracy(truth, probabilities, TOP_K),
        **(counts if binary else {}),
    }
    found = [m for m in map(find_metric, names) if m and m.key in values]
    return {m.name: values[m.key]() for m in found}


def regressor_metrics(
    truth: np.ndarray, predicted: np.ndarray, names: Sequence[str] = REGRESSOR_METRICS
) -> dict[str, float]:
    """Metrics of ``predicted`` values against ``truth``; ``names`` as written (those of
    other tasks left out)."""
    actual = truth.astype(np.float64)
    error = predicted.astype(np.float64) - actual
    mse = float(np.mean(error**2))
    variance = float(np.var(actual))
    values: dict[str, Callable[[], float]] = {
        "mae": lambda: float(np.mean(np.abs(error))),
        "mse": lambda: mse,
        "rmse": lambda: mse**0.5,
        "r2": lambda: 1 - mse / variance if variance > 0 else float("nan"),
        "explained_variance": lambda: (
            1 - float(np.var(error)) / variance if variance > 0 else float("nan")
        ),
        "median_absolute_error": lambda: float(np.median(np.abs(error))),
        "msle": lambda: _msle(actual, actual + error),
        "mape": lambda: float(100 * np.mean(np.abs(error) / np.maximum(np.abs(actual), 1e-7))),
    }
    found = [m for m in map(find_metric, names) if m and m.key in values]
    return {m.name: values[m.key]() for m in found}


def ranker_metrics(
    truth: np.ndarray,
    scores: np.ndarray,
    groups: np.ndarray,
    names: Sequence[str] = RANKER_METRICS,
) -> dict[str, float]:
    """Metrics of ranking ``scores`` against relevance ``truth`` within each query of ``groups``.

    ``ndcg``: the discounted cumulative gain (gain ``2**relevance - 1``) of the rows ordered
    by score, over that of the ideal order, averaged over the queries with a relevant row.
    Tied scores count in the worst order.
    """
    values = []
    for group in np.unique(groups):
        rows = groups == group
        relevance, score = truth[rows].astype(np.float64), scores[rows]
        discount = 1 / np.log2(np.arange(2, len(relevance) + 2))
        ideal = ((2 ** np.sort(relevance)[::-1] - 1) * discount).sum()
        if ideal > 0:
            ranked = relevance[np.lexsort((relevance, -score))]
            values.append(((2**ranked - 1) * discount).sum() / ideal)
    ndcg = float(np.mean(values)) if values else float("nan")
    found = [m for m in map(find_metric, names) if m and m.key == "ndcg"]
    return {m.name: ndcg for m in found}


def clustering_metrics(
    points: np.ndarray,
    clusters: np.ndarray,
    names: Sequence[str] = CLUSTERING_METRICS,
    truth: np.ndarray | None = None,
) -> dict[str, float]:
    """Metrics of the cluster ids ``clusters`` of the rows ``points`` (rows x features, the
    space the model clusters in); ``names`` as written, those of other tasks left out.

    ``silhouette``: :func:`silhouette` (on a seeded sample of at most
    :data:`SILHOUETTE_ROWS` rows); ``calinski_harabasz`` and ``davies_bouldin``: on every
    row; ``adjusted_rand``: :func:`adjusted_rand` against ``truth`` (any values, a row's
    class), which it needs.
    """
    values: dict[str, Callable[[], float]] = {
        "silhouette": lambda: silhouette(points, clusters),
        "calinski_harabasz": lambda: calinski_harabasz(points, clusters),
        "davies_bouldin": lambda: davies_bouldin(points, clusters),
    }
    if truth is not None:
        values["adjusted_rand"] = lambda: adjusted_rand(truth, clusters)
    found = [m for m in map(find_metric, names) if m and m.key in values]
    return {m.name: values[m.key]() for m in found}


def outlier_metrics(
    outlier: np.ndarray, names: Sequence[str] = OUTLIER_METRICS
) -> dict[str, float]:
    """``outlier_share``: the share of rows flagged (``outlier`` True), NaN without rows."""
    share = float(np.mean(outlier)) if len(outlier) else float("nan")
    return {m.name: share for m in map(find_metric, names) if m and m.key == "outlier_share"}


def silhouette(
    points: np.ndarray,
    clusters: np.ndarray,
    max_rows: int = SILHOUETTE_ROWS,
    seed: int = SILHOUETTE_SEED,
) -> float:
    """The mean silhouette coefficient ``(b - a) / max(a, b)`` of the rows, with ``a`` a
    row's mean Euclidean distance to the other rows of its cluster and ``b`` the least mean
    distance to the rows of another cluster (0 for a row alone in its cluster), as
    scikit-learn's ``silhouette_score``. Beyond ``max_rows`` rows, on as many drawn without
    replacement with ``seed``. NaN unless the rows measured fall in 2 to rows - 1 clusters.

    Distances are computed a block of rows at a time: memory holds block x rows numbers.
    """
    if len(points) > max_rows:
        chosen = np.sort(np.random.default_rng(seed).choice(len(points), max_rows, replace=False))
        points, clusters = points[chosen], clusters[chosen]
    ids, inverse, sizes = np.unique(clusters, return_inverse=True, return_counts=True)
    rows = len(points)
    if not 2 <= len(ids) <= rows - 1:
        return float("nan")
    x = points.astype(np.float64)
    members = np.zeros((rows, len(ids)))
    members[np.arange(rows), inverse] = 1.0
    squared = (x**2).sum(axis=1)
    coefficients = np.empty(rows)
    for start in range(0, rows, _SILHOUETTE_BLOCK):
        block = slice(start, start + _SILHOUETTE_BLOCK)
        distances = np.sqrt(
            np.maximum(squared[block, None] - 2 * x[block] @ x.T + squared[None, :], 0.0)
        )
        distances[np.arange(len(distances)), np.arange(start, start + len(distances))] = 0.0
        sums = distances @ members  # block x clusters
        own = inverse[block]
        local = np.arange(len(own))
        others = sizes[own] - 1
        a = np.divide(sums[local, own], others, out=np.zeros(len(own)), where=others > 0)
        means = sums / sizes
        means[local, own] = np.inf
        b = means.min(axis=1)
        widest = np.maximum(a, b)
        s = np.divide(b - a, widest, out=np.zeros(len(own)), where=widest > 0)
        coefficients[block] = np.where(others > 0, s, 0.0)
    return float(coefficients.mean())


def _centres(points: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's cluster index, the clusters' sizes and their centres (means)."""
    _, inverse, sizes = np.unique(clusters, return_inverse=True, return_counts=True)
    sums = np.zeros((len(sizes), points.shape[1]))
    np.add.at(sums, inverse, points)
    return inverse, sizes, sums / sizes[:, None]


def calinski_harabasz(points: np.ndarray, clusters: np.ndarray) -> float:
    """The variance ratio: the dispersion between the clusters over that within them, each
    over its degrees of freedom (k - 1, rows - k), as scikit-learn's
    ``calinski_harabasz_score`` (1 when every cluster is a point). NaN unless there are
    2 to rows - 1 clusters. Higher is better."""
    x = points.astype(np.float64)
    inverse, sizes, centres = _centres(x, clusters)
    k, rows = len(sizes), len(x)
    if not 2 <= k <= rows - 1:
        return float("nan")
    between = float((sizes * ((centres - x.mean(axis=0)) ** 2).sum(axis=1)).sum())
    within = float(((x - centres[inverse]) ** 2).sum())
    return 1.0 if within == 0 else between * (rows - k) / (within * (k - 1))


def davies_bouldin(points: np.ndarray, clusters: np.ndarray) -> float:
    """The mean over the clusters of their greatest ratio ``(s_i + s_j) / d_ij`` to another
    cluster, ``s`` a cluster's mean distance to its centre and ``d`` the distance between
    centres, as scikit-learn's ``davies_bouldin_score``. NaN unless there are 2 to rows - 1
    clusters. Lower is better (0: points on their centres)."""
    x = points.astype(np.float64)
    inverse, sizes, centres = _centres(x, clusters)
    k = len(sizes)
    if not 2 <= k <= len(x) - 1:
        return float("nan")
    spread = np.bincount(inverse, np.linalg.norm(x - centres[inverse], axis=1)) / sizes
    between = np.linalg.norm(centres[:, None, :] - centres[None, :, :], axis=2)
    if np.allclose(spread, 0) or np.allclose(between, 0):
        return 0.0
    between[between == 0] = np.inf  # the diagonal (and centres that coincide)
    ratios = (spread[:, None] + spread[None, :]) / between
    return float(ratios.max(axis=1).mean())


def adjusted_rand(truth: np.ndarray, clusters: np.ndarray) -> float:
    """The Rand index of two partitions of the rows (pairs of rows placed alike by both)
    adjusted for chance, as scikit-learn's ``adjusted_rand_score``: 1 for the same
    partition (whatever its ids), about 0 for random ones; 1 when both put every row alone
    or all together."""
    _, classes = np.unique(truth, return_inverse=True)
    _, found = np.unique(clusters, return_inverse=True)
    table = np.zeros((classes.max(initial=0) + 1, found.max(initial=0) + 1))
    np.add.at(table, (classes, found), 1.0)
    pairs = float((table * (table - 1)).sum() / 2)
    by_class = float((table.sum(axis=1) * (table.sum(axis=1) - 1)).sum() / 2)
    by_cluster = float((table.sum(axis=0) * (table.sum(axis=0) - 1)).sum() / 2)
    rows = float(len(truth))
    expected = by_class * by_cluster / (rows * (rows - 1) / 2) if rows > 1 else 0.0
    greatest = (by_class + by_cluster) / 2
    if greatest == expected:
        return 1.0
    return (pairs - expected) / (greatest - expected)


def _ratio(selected: np.ndarray, reference: np.ndarray, cls: int) -> float:
    """Share of rows where ``selected == cls`` that also have ``reference == cls``."""
    chosen = selected == cls
    return float(np.mean(reference[chosen] == cls)) if chosen.any() else 0.0


def _f1(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    total = precision + recall
    return np.divide(2 * precision * recall, total, out=np.zeros_like(total), where=total > 0)


def _cohen_kappa(truth: np.ndarray, predicted: np.ndarray) -> float:
    """Agreement beyond chance: (observed - expected) / (1 - expected)."""
    classes = np.union1d(truth, predicted)
    observed = float(np.mean(truth == predicted))
    expected = float(sum(np.mean(truth == c) * np.mean(predicted == c) for c in classes))
    return (observed - expected) / (1 - expected) if expected < 1 else float("nan")


def _hinge(truth: np.ndarray, probabilities: np.ndarray) -> float:
    """Crammer-Singer hinge loss of the probabilities as decision values:
    ``max(0, 1 - p_true + max p_other)`` (for two classes, ``max(0, 1 - y (2 p1 - 1))``)."""
    rows = np.arange(len(truth))
    others = probabilities.astype(np.float64).copy()
    others[rows, truth] = -np.inf
    margin = probabilities[rows, truth] - others.max(axis=1)
    return float(np.mean(np.maximum(0.0, 1 - margin)))


def _top_k_accuracy(truth: np.ndarray, probabilities: np.ndarray, k: int) -> float:
    """Share of rows whose class is among the ``k`` most probable (ties count for the row)."""
    chosen = probabilities[np.arange(len(truth)), truth]
    above = np.sum(probabilities > chosen[:, None], axis=1)
    return float(np.mean(above < k))


def _msle(actual: np.ndarray, predicted: np.ndarray) -> float:
    if (actual < 0).any() or (predicted < 0).any():
        return float("nan")  # scikit-learn refuses negative values
    return float(np.mean((np.log1p(predicted) - np.log1p(actual)) ** 2))


def _mean_average_precision(truth: np.ndarray, probabilities: np.ndarray) -> float:
    """Average precision of the positive class (two classes), else its macro average over
    the classes that have rows."""
    if probabilities.shape[1] == 2:
        return average_precision(probabilities[:, 1], truth == 1)
    scores = [
        average_precision(probabilities[:, c], truth == c)
        for c in range(probabilities.shape[1])
        if np.any(truth == c)
    ]
    return float(np.mean(scores)) if scores else float("nan")


def average_precision(scores: np.ndarray, positive: np.ndarray) -> float:
    """Precision averaged over the recall steps, rows taken by decreasing score (tied scores
    as one step), as scikit-learn's ``average_precision_score``."""
    n_pos = int(positive.sum())
    if n_pos == 0:
        return float("nan")
    order = np.argsort(-scores, kind="stable")
    ordered, hits = scores[order], positive[order].astype(np.float64)
    last = np.r_[ordered[1:] != ordered[:-1], True]  # the last row of each tied score
    true_positives = np.cumsum(hits)[last]
    taken = (np.arange(len(ordered)) + 1)[last]
    recall_steps = np.diff(np.r_[0.0, true_positives / n_pos])
    return float(np.sum(recall_steps * true_positives / taken))


def _mean_auc(truth: np.ndarray, probabilities: np.ndarray) -> float:
    if probabilities.shape[1] == 2:
        return auc(probabilities[:, 1], truth == 1)
    scores = [
        auc(probabilities[:, c], truth == c)
        for c in range(probabilities.shape[1])
        if 0 < np.sum(truth == c) < len(truth)
    ]
    return float(np.mean(scores)) if scores else float("nan")


def auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Area under the ROC curve: the chance a positive row outscores a negative one."""
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    average_rank = np.cumsum(counts) - (counts - 1) / 2
    ranks = average_rank[inverse]
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
