"""Evaluation metrics, in NumPy (no scikit-learn needed).

Precision, recall and F1 are macro averages over the classes; AUC is one-vs-rest, averaged
over the classes that have both positive and negative rows. NDCG (rankers) is averaged over
the queries that have a relevant row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CLASSIFIER_METRICS = ("accuracy", "precision", "recall", "f1", "auc", "log_loss")
REGRESSOR_METRICS = ("mae", "mse", "rmse", "r2")
RANKER_METRICS = ("ndcg",)
METRICS = CLASSIFIER_METRICS + REGRESSOR_METRICS + RANKER_METRICS


def classifier_metrics(
    truth: np.ndarray, probabilities: np.ndarray, names: Sequence[str] = CLASSIFIER_METRICS
) -> dict[str, float]:
    """Metrics of class ``probabilities`` (rows x classes) against class indices ``truth``."""
    predicted = probabilities.argmax(axis=1)
    classes = np.union1d(truth, predicted)
    precision = np.array([_ratio(predicted, truth, c) for c in classes])
    recall = np.array([_ratio(truth, predicted, c) for c in classes])
    f1 = np.divide(
        2 * precision * recall,
        precision + recall,
        out=np.zeros_like(precision),
        where=precision + recall > 0,
    )
    values = {
        "accuracy": lambda: float(np.mean(predicted == truth)),
        "precision": lambda: float(precision.mean()),
        "recall": lambda: float(recall.mean()),
        "f1": lambda: float(f1.mean()),
        "auc": lambda: _mean_auc(truth, probabilities),
        "log_loss": lambda: float(
            -np.mean(np.log(np.clip(probabilities[np.arange(len(truth)), truth], 1e-15, 1)))
        ),
    }
    return {name: values[name]() for name in names if name in values}


def regressor_metrics(
    truth: np.ndarray, predicted: np.ndarray, names: Sequence[str] = REGRESSOR_METRICS
) -> dict[str, float]:
    """Metrics of ``predicted`` values against ``truth``."""
    error = predicted.astype(np.float64) - truth.astype(np.float64)
    mse = float(np.mean(error**2))
    variance = float(np.var(truth.astype(np.float64)))
    values = {
        "mae": float(np.mean(np.abs(error))),
        "mse": mse,
        "rmse": mse**0.5,
        "r2": 1 - mse / variance if variance > 0 else float("nan"),
    }
    return {name: values[name] for name in names if name in values}


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
    return {"ndcg": ndcg} if "ndcg" in names else {}


def _ratio(selected: np.ndarray, reference: np.ndarray, cls: int) -> float:
    """Share of rows where ``selected == cls`` that also have ``reference == cls``."""
    chosen = selected == cls
    return float(np.mean(reference[chosen] == cls)) if chosen.any() else 0.0


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
