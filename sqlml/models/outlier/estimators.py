"""The outlier estimators: SQLFlow's model zoo OneClassSVM, trained as sqlml's one-class
kernel density model (:mod:`.model`), with its attributes."""

from __future__ import annotations

from sqlml.models.attributes import schema
from sqlml.models.estimator import MATRIX_FEATURE_KINDS, Estimator
from sqlml.semantics.attributes import Attr

MAX_LANDMARKS = 100_000

# scikit-learn's OneClassSVM settings that have no counterpart here, with their types.
_SVM_IGNORED = {
    "model.degree": "int",
    "model.coef0": "float",
    "model.tol": "float",
    "model.shrinking": "bool",
    "model.cache_size": "float",
    "model.verbose": "bool",
    "model.max_iter": "int",
}
_ONE_CLASS = (
    Attr(
        "model.kernel",
        "string",
        "rbf",
        "the kernel; sqlml computes the RBF one (others are taken as rbf, with a warning)",
        choices=("rbf", "linear", "poly", "sigmoid"),
    ),
    Attr(
        "model.nu",
        "float",
        0.5,
        "share of the training rows taken as outliers (the threshold's quantile)",
        minimum=0,
        maximum=1,
        exclusive_minimum=True,
    ),
    Attr(
        "model.gamma",
        "string",
        "scale",
        "RBF kernel coefficient: a number, 'scale' (1 / columns, on standardised columns) "
        "or 'auto' (the same)",
    ),
    Attr(
        "model.max_landmarks",
        "int",
        1_000,
        "training rows the density sums over at most (drawn with train.seed)",
        minimum=1,
        maximum=MAX_LANDMARKS,
    ),
    Attr("train.seed", "int", 0, "seed of the landmarks' draw", minimum=0),
    *(
        Attr(name, kind, None, "scikit-learn's SVM setting; ignored")
        for name, kind in _SVM_IGNORED.items()
    ),
)

ESTIMATORS = (
    Estimator(
        "sqlflow_models.OneClassSVM",
        "outlier",
        "classifier",
        schema(*_ONE_CLASS),
        "outlier detection without LABEL: TO PREDICT writes 1 (inlier) or -1 (outlier)",
        feature_kinds=MATRIX_FEATURE_KINDS,
        renamed=dict.fromkeys(_SVM_IGNORED, None),
        labelled=False,
        instead="sqlml trains a one-class RBF kernel density model (its threshold leaves the "
        "model.nu share of training rows out) instead of an SVM's support vectors; every "
        "model.kernel is computed as rbf",
    ),
)
