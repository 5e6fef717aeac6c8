"""Evaluation metrics: the names they go by (computed in NumPy by :mod:`sqlml.metric_values`,
which this module leaves out so that checking a program does not import NumPy).

sqlml's own names (``accuracy``, ``precision``, ``recall``, ``f1``, ``auc``, ``log_loss``,
``mae``, ``mse``, ``rmse``, ``r2``, ``ndcg``; ``silhouette``, ``calinski_harabasz``,
``davies_bouldin``, ``adjusted_rand`` of clusterings; ``outlier_share`` of outlier detectors)
are matched whatever their case and reported under that name; precision, recall and F1 are
macro averages over the classes, AUC is one-vs-rest, averaged over the classes that have both
positive and negative rows, NDCG (rankers) is averaged over the queries that have a relevant
row. The clustering metrics are :func:`sqlml.metric_values.clustering_metrics`'s.

SQLFlow's names, scikit-learn's (``f1_score``, ``mean_squared_error``, ...) and Keras's
(``CategoricalAccuracy``, ``MeanSquaredError``, ...), are matched whatever their case too and
reported as written. Where they differ from sqlml's: ``precision_score``, ``recall_score``
and ``f1_score`` count the positive (second) class of a binary classifier, as
scikit-learn's defaults do (macro averages with more classes); the Keras counts
(``TruePositives`` ...) take a binary classifier; ``TopKCategoricalAccuracy`` has k = 5.
Keras's ``Accuracy``, ``Precision``, ``Recall`` and ``AUC`` are sqlml's own names.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

CLASSIFIER_METRICS = ("accuracy", "precision", "recall", "f1", "auc", "log_loss")
REGRESSOR_METRICS = ("mae", "mse", "rmse", "r2")
RANKER_METRICS = ("ndcg",)
# Of a clustering's rows without a LABEL; adjusted_rand compares the clusters with a LABEL.
CLUSTERING_METRICS = ("silhouette", "calinski_harabasz", "davies_bouldin", "adjusted_rand")
NEEDS_LABEL = ("adjusted_rand",)
UNLABELLED_CLUSTERING_METRICS = tuple(m for m in CLUSTERING_METRICS if m not in NEEDS_LABEL)
OUTLIER_METRICS = ("outlier_share",)  # of an outlier detector's rows without a LABEL
METRICS = (
    CLASSIFIER_METRICS + REGRESSOR_METRICS + RANKER_METRICS + CLUSTERING_METRICS + OUTLIER_METRICS
)
# The tasks TO EVALUATE measures and their metrics; a clustering and an outlier detector
# learn without a LABEL (an outlier detector evaluated with one is a classifier of -1 and 1).
TASKS = {
    "classifier": CLASSIFIER_METRICS,
    "regressor": REGRESSOR_METRICS,
    "ranker": RANKER_METRICS,
    "clustering": CLUSTERING_METRICS,
    "outlier": OUTLIER_METRICS,
}
SUPERVISED = ("classifier", "regressor", "ranker")
_TASK_WORDS = {"outlier": "an outlier detector"}

# Classifier metrics that count the positive class of a binary classifier.
BINARY_ONLY = ("true_positives", "true_negatives", "false_positives", "false_negatives")
# The computations (Metric.key) of losses, errors and wrong counts: smaller is better.
_MINIMIZED = (
    "log_loss", "mae", "mse", "rmse", "msle", "mape", "median_absolute_error", "error_rate",
    "brier", "hinge", "false_positives", "false_negatives", "davies_bouldin",
)  # fmt: skip


@dataclass(frozen=True)
class Metric:
    """A metric as written in ``validation.metrics``: the column it is reported under, the
    computation (a key of the task's metric functions) and the task it measures."""

    name: str
    key: str
    task: str


_OWN = {
    **{name: (name, task) for task, names in TASKS.items() for name in names},
    "f1score": ("f1", "classifier"),
    "logloss": ("log_loss", "classifier"),
}
_SQLFLOW = {
    # scikit-learn's, as SQLFlow's XGBoost evaluation lists them
    "accuracy_score": ("accuracy", "classifier"),
    "average_precision_score": ("average_precision", "classifier"),
    "balanced_accuracy_score": ("balanced_accuracy", "classifier"),
    "brier_score_loss": ("brier", "classifier"),
    "cohen_kappa_score": ("cohen_kappa", "classifier"),
    "f1_score": ("positive_f1", "classifier"),
    "hamming_loss": ("error_rate", "classifier"),
    "hinge_loss": ("hinge", "classifier"),
    "precision_score": ("positive_precision", "classifier"),
    "recall_score": ("positive_recall", "classifier"),
    "roc_auc_score": ("auc", "classifier"),
    "zero_one_loss": ("error_rate", "classifier"),
    "explained_variance_score": ("explained_variance", "regressor"),
    "mean_absolute_error": ("mae", "regressor"),
    "mean_squared_error": ("mse", "regressor"),
    "mean_squared_log_error": ("msle", "regressor"),
    "median_absolute_error": ("median_absolute_error", "regressor"),
    "r2_score": ("r2", "regressor"),
    # Keras's, as SQLFlow's TensorFlow runtime lists them
    "binaryaccuracy": ("binary_accuracy", "classifier"),
    "categoricalaccuracy": ("accuracy", "classifier"),
    "topkcategoricalaccuracy": ("top_k_accuracy", "classifier"),
    "truepositives": ("true_positives", "classifier"),
    "truenegatives": ("true_negatives", "classifier"),
    "falsepositives": ("false_positives", "classifier"),
    "falsenegatives": ("false_negatives", "classifier"),
    "meanabsoluteerror": ("mae", "regressor"),
    "meanabsolutepercentageerror": ("mape", "regressor"),
    "meansquarederror": ("mse", "regressor"),
    "rootmeansquarederror": ("rmse", "regressor"),
}
# scikit-learn's names of the clustering metrics (sklearn.metrics), reported as written.
_SCIKIT_LEARN_CLUSTERING = {
    "silhouette_score": ("silhouette", "clustering"),
    "calinski_harabasz_score": ("calinski_harabasz", "clustering"),
    "davies_bouldin_score": ("davies_bouldin", "clustering"),
    "adjusted_rand_score": ("adjusted_rand", "clustering"),
}
# Names sqlml refuses, with what to write instead.
_REFUSED = {
    "fbeta_score": "fbeta_score needs its beta, which validation.metrics cannot give; "
    "use f1_score (beta 1)",
}
SQLFLOW_METRICS = (
    "accuracy_score", "average_precision_score", "balanced_accuracy_score", "brier_score_loss",
    "cohen_kappa_score", "explained_variance_score", "f1_score", "hamming_loss", "hinge_loss",
    "log_loss", "mean_absolute_error", "mean_squared_error", "mean_squared_log_error",
    "median_absolute_error", "precision_score", "r2_score", "recall_score", "roc_auc_score",
    "zero_one_loss", "Accuracy", "Precision", "Recall", "AUC", "BinaryAccuracy",
    "CategoricalAccuracy", "TopKCategoricalAccuracy", "TruePositives", "TrueNegatives",
    "FalsePositives", "FalseNegatives", "MeanAbsoluteError", "MeanAbsolutePercentageError",
    "MeanSquaredError", "RootMeanSquaredError",
)  # fmt: skip
SCIKIT_LEARN_CLUSTERING_METRICS = tuple(_SCIKIT_LEARN_CLUSTERING)


def split_names(text: str) -> list[str]:
    """The names of a ``validation.metrics`` value, as written, in order."""
    return [name.strip() for name in text.split(",") if name.strip()]


def find_metric(name: str) -> Metric | None:
    """The metric a name written in ``validation.metrics`` stands for; None if unknown."""
    lower = name.lower()
    if lower in _OWN:
        return Metric(_OWN[lower][0], *_OWN[lower])
    if lower in _SQLFLOW:
        return Metric(name, *_SQLFLOW[lower])
    if lower in _SCIKIT_LEARN_CLUSTERING:
        return Metric(name, *_SCIKIT_LEARN_CLUSTERING[lower])
    return None


def goal(metric: Metric) -> str:
    """``minimize`` for losses, errors and wrong counts, ``maximize`` for the other metrics."""
    return "minimize" if metric.key in _MINIMIZED else "maximize"


def unknown_metric_hint(name: str) -> str:
    """What to write instead of an unknown metric name."""
    if name.lower() in _REFUSED:
        return _REFUSED[name.lower()]
    known = [*METRICS, *SQLFLOW_METRICS, *SCIKIT_LEARN_CLUSTERING_METRICS]
    by_lower = {known_name.lower(): known_name for known_name in known}
    close = difflib.get_close_matches(name.lower(), by_lower, n=1, cutoff=0.7)
    if close:
        return f"did you mean {by_lower[close[0]]}?"
    return "the metrics are " + ", ".join(known)


def described(task: str) -> str:
    """A task in messages, with its article: ``a classifier``, ``an outlier detector``."""
    return _TASK_WORDS.get(task, f"a {task}")


def task_metrics(task: str) -> str:
    """The names that apply to a task, for hints."""
    fitting: dict[str, str] = {}
    for name in [*TASKS.get(task, ()), *SQLFLOW_METRICS, *SCIKIT_LEARN_CLUSTERING_METRICS]:
        if (metric := find_metric(name)) and metric.task == task:
            fitting.setdefault(name.lower(), name)
    return ", ".join(fitting.values()) or "none"


def misfit(names: Sequence[str], task: str, classes: int) -> tuple[str, str] | None:
    """What is wrong (and what to do) with the first of ``names`` that cannot measure a model
    of ``task`` with ``classes`` classes; None if they all can."""
    for name in names:
        metric = find_metric(name)
        if metric is None:
            return f"unknown metric {name}", unknown_metric_hint(name)
        if metric.task != task:
            return (
                f"{name} measures {described(metric.task)}, not {described(task)}",
                f"choose from {task_metrics(task)}",
            )
        if metric.key in BINARY_ONLY and classes != 2:
            return (
                f"{name} counts the positive class of a binary classifier; the model has "
                f"{classes} classes",
                "use accuracy, precision, recall or f1",
            )
    return None
