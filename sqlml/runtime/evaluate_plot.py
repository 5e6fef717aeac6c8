"""The plot of TO EVALUATE ... WITH evaluate.plot: a PNG drawn with matplotlib's Agg.

Binary classifiers get their ROC curve (with its AUC) and precision-recall curve side by
side; classifiers of more classes a confusion matrix (true class by row, predicted class by
column, each cell its count); regressors a scatter of predicted against actual values with
the line where they are equal. Each title names the model and the key metric (the AUC, the
average precision, the accuracy, R² and the RMSE). Conventions (lazy matplotlib, atomic
writes) are those of :mod:`sqlml.runtime.explain_plot`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sqlml.metric_values import auc, average_precision, regressor_metrics
from sqlml.runtime.explain_plot import matplotlib_figure, write_png

ATTRIBUTE = "evaluate.plot"
MAX_POINTS = 5000  # a regressor's scatter shows at most this many rows (a seeded sample)


def save_evaluation_plot(
    path: Path,
    task: str,
    truth: np.ndarray,
    scores: np.ndarray,
    classes: list[str],
    model: str | None = None,
) -> None:
    """Draw the plot of a ``task`` ("classifier" or "regressor") to ``path``.

    ``truth``: class indices (classifiers) or values; ``scores``: class probabilities (rows x
    classes) or predicted values; ``classes``: the classes' names; ``model``: the model's
    name, which starts each title.
    """
    named = f"{model}: " if model else ""
    figure_class, canvas_class = matplotlib_figure(ATTRIBUTE)
    binary = task == "classifier" and scores.shape[1] == 2
    size = (11, 4.5) if binary else (6, 5) if task == "regressor" else _matrix_size(len(classes))
    figure = figure_class(figsize=size, layout="constrained")
    canvas_class(figure)
    if binary:
        _curves(figure, truth == 1, scores[:, 1], classes[1], named)
    elif task == "classifier":
        counts = confusion_matrix(truth, scores.argmax(axis=1), len(classes))
        axes = figure.add_subplot()
        _matrix(figure, axes, counts, classes)
        accuracy = np.trace(counts) / max(counts.sum(), 1)
        axes.set_title(f"{named}confusion matrix, accuracy {accuracy:.3f}")
    else:
        actual, predicted = truth.astype(np.float64), scores.astype(np.float64)
        axes = figure.add_subplot()
        _scatter(axes, actual, predicted)
        axes.set_title(f"{named}predicted vs actual, {_fit(actual, predicted)}")
    write_png(figure, path, ATTRIBUTE)


def confusion_matrix(truth: np.ndarray, predicted: np.ndarray, n_classes: int) -> np.ndarray:
    """Counts of rows by true class (rows) and predicted class (columns)."""
    counts = np.bincount(truth * n_classes + predicted, minlength=n_classes * n_classes)
    return counts.reshape(n_classes, n_classes)


def roc_curve(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """False and true positive rates at each distinct score taken as the threshold, from
    (0, 0) to (1, 1)."""
    true, false = _cumulative(positive, scores)
    return false / max(false[-1], 1), true / max(true[-1], 1)


def pr_curve(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Recall and precision at each distinct score taken as the threshold."""
    true, false = _cumulative(positive, scores)
    true, false = true[1:], false[1:]
    return true / max(true[-1], 1), true / (true + false)


def _cumulative(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """True and false positives among the rows scoring at least each distinct score (highest
    first), after a leading (0, 0)."""
    order = np.argsort(-scores, kind="stable")
    ranked, hits = scores[order], positive[order].astype(np.int64)
    last = np.r_[np.flatnonzero(np.diff(ranked)), len(ranked) - 1]  # the end of each tie
    true = np.cumsum(hits)[last]
    false = last + 1 - true
    return np.r_[0, true], np.r_[0, false]


def _fit(actual: np.ndarray, predicted: np.ndarray) -> str:
    """R² (when the values vary) and the RMSE of ``predicted`` against ``actual``."""
    metrics = regressor_metrics(actual, predicted, ("r2", "rmse"))
    shown = [f"R² {metrics['r2']:.3f}"] if np.isfinite(metrics["r2"]) else []
    return ", ".join([*shown, f"RMSE {metrics['rmse']:.4g}"])


def _curves(figure: Any, positive: np.ndarray, scores: np.ndarray, name: str, named: str) -> None:
    roc, pr = figure.subplots(1, 2)
    false_rate, true_rate = roc_curve(positive, scores)
    roc.plot(false_rate, true_rate, color="tab:blue")
    roc.plot([0, 1], [0, 1], color="0.7", linestyle="--", linewidth=0.8)
    roc.set(xlabel="false positive rate", ylabel="true positive rate")
    roc.set_title(f"{named}ROC, AUC {auc(scores, positive):.3f}")
    recall, precision = pr_curve(positive, scores)
    pr.plot(np.r_[0, recall], np.r_[1, precision], color="tab:orange", drawstyle="steps-post")
    pr.axhline(positive.mean() if len(positive) else 0, color="0.7", linestyle="--", linewidth=0.8)
    pr.set(xlabel=f"recall (positive class: {name})", ylabel="precision")
    pr.set_title(f"{named}precision-recall, AP {average_precision(scores, positive):.3f}")
    for axes in (roc, pr):
        axes.set_xlim(0, 1)
        axes.set_ylim(0, 1.02)


def _matrix_size(n_classes: int) -> tuple[float, float]:
    side = min(4 + 0.5 * n_classes, 14)
    return side + 1, side


def _matrix(figure: Any, axes: Any, counts: np.ndarray, classes: list[str]) -> None:
    image = axes.imshow(counts, cmap="Blues")
    figure.colorbar(image, ax=axes, label="rows")
    ticks = range(len(classes))
    axes.set_xticks(ticks, classes, rotation=45, ha="right")
    axes.set_yticks(ticks, classes)
    axes.set(xlabel="predicted class", ylabel="true class")
    if len(classes) <= 20:
        dark = counts > counts.max() / 2
        for (row, column), count in np.ndenumerate(counts):
            colour = "white" if dark[row, column] else "black"
            axes.text(column, row, str(count), ha="center", va="center", color=colour)


def _scatter(axes: Any, actual: np.ndarray, predicted: np.ndarray) -> None:
    if len(actual) > MAX_POINTS:
        rows = np.random.default_rng(0).choice(len(actual), MAX_POINTS, replace=False)
        actual, predicted = actual[rows], predicted[rows]
    axes.scatter(actual, predicted, s=8, alpha=0.6, linewidths=0)
    both = np.r_[actual, predicted]
    if len(both):
        low, high = float(both.min()), float(both.max())
        axes.plot([low, high], [low, high], color="0.6", linestyle="--", linewidth=0.8)
    axes.set(xlabel="actual", ylabel="predicted")
