"""The estimators sqlml can train and the attributes each one takes."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from sqlml.ir import FEATURE_KINDS
from sqlml.semantics.attributes import Attr

XGBOOST_OBJECTIVES = (
    "reg:squarederror",
    "reg:squaredlogerror",
    "reg:logistic",
    "reg:pseudohubererror",
    "reg:absoluteerror",
    "binary:logistic",
    "binary:logitraw",
    "binary:hinge",
    "multi:softmax",
    "multi:softprob",
    "count:poisson",
    "reg:gamma",
    "reg:tweedie",
)


# XGBoost reads one numeric matrix: no learned embeddings, crosses, weights or sequences.
XGBOOST_FEATURE_KINDS = (
    "auto",
    "numeric",
    "dense",
    "sparse",
    "category_id",
    "category_hash",
    "bucket",
    "indicator",
)


def _attrs(*attrs: Attr) -> dict[str, Attr]:
    return {attr.name: attr for attr in attrs}


_XGB_COMMON = (
    Attr(
        "objective",
        "string",
        None,
        "learning objective; inferred from the label when omitted "
        "(text labels: binary:logistic or multi:softprob, numbers: reg:squarederror)",
        choices=XGBOOST_OBJECTIVES,
        architecture=True,
    ),
    Attr(
        "num_class",
        "int",
        None,
        "number of classes (multi:* objectives)",
        minimum=2,
        architecture=True,
    ),
    Attr("eta", "float", 0.3, "learning rate (step size shrinkage)", minimum=0, maximum=1),
    Attr("lambda", "float", 1.0, "L2 regularisation on weights", minimum=0),
    Attr("alpha", "float", 0.0, "L1 regularisation on weights", minimum=0),
    Attr("eval_metric", "string", None, "validation metric, e.g. mlogloss, auc, rmse"),
    Attr("seed", "int", 0, "random seed", minimum=0),
    Attr("train.num_boost_round", "int", 10, "number of boosting rounds", minimum=1),
)

_XGB_TREE = (
    Attr("max_depth", "int", 6, "maximum depth of a tree", minimum=0),
    Attr("min_child_weight", "float", 1.0, "minimum sum of instance weight in a child", minimum=0),
    Attr("gamma", "float", 0.0, "minimum loss reduction to split a leaf", minimum=0),
    Attr(
        "subsample",
        "float",
        1.0,
        "row subsample ratio",
        minimum=0,
        maximum=1,
        exclusive_minimum=True,
    ),
    Attr(
        "colsample_bytree",
        "float",
        1.0,
        "column subsample ratio per tree",
        minimum=0,
        maximum=1,
        exclusive_minimum=True,
    ),
    Attr(
        "tree_method",
        "string",
        "hist",
        "tree construction algorithm",
        choices=("auto", "exact", "approx", "hist"),
    ),
)

_XGB_DART = (
    Attr(
        "sample_type",
        "string",
        "uniform",
        "how dropped trees are chosen",
        choices=("uniform", "weighted"),
    ),
    Attr(
        "normalize_type", "string", "tree", "how new trees are weighted", choices=("tree", "forest")
    ),
    Attr("rate_drop", "float", 0.0, "fraction of trees dropped each round", minimum=0, maximum=1),
    Attr("skip_drop", "float", 0.0, "probability of skipping the dropout", minimum=0, maximum=1),
    Attr("one_drop", "bool", False, "always drop at least one tree"),
)

_XGB_LINEAR = (
    Attr(
        "updater",
        "string",
        "shotgun",
        "linear model fitting algorithm",
        choices=("shotgun", "coord_descent"),
    ),
    Attr(
        "feature_selector",
        "string",
        "cyclic",
        "feature selection and ordering",
        choices=("cyclic", "shuffle", "random", "greedy", "thrifty"),
    ),
)

_KERAS_COMMON = (
    Attr("train.epoch", "int", 10, "passes over the training data", minimum=1),
    Attr("train.batch_size", "int", 32, "rows per gradient step", minimum=1),
    Attr("train.seed", "int", 0, "random seed for weights and shuffling", minimum=0),
    Attr(
        "optimizer.learning_rate",
        "float",
        0.01,
        "Adam learning rate",
        minimum=0,
        exclusive_minimum=True,
    ),
)

_DNN = (
    Attr(
        "model.hidden_units",
        "int list",
        [64, 32],
        "units of each hidden layer",
        minimum=1,
        architecture=True,
    ),
    Attr(
        "model.activation",
        "string",
        "relu",
        "activation of the hidden layers",
        choices=("relu", "tanh", "sigmoid", "elu", "gelu", "selu"),
        architecture=True,
    ),
    Attr(
        "model.dropout",
        "float",
        0.0,
        "dropout rate after each hidden layer",
        minimum=0,
        maximum=1,
        architecture=True,
    ),
)

# Every estimator: how the rows that measure the trained model are chosen.
_VALIDATION = (
    Attr(
        "validation.select",
        "string",
        None,
        "a SELECT whose rows validate the model (instead of held-out training rows)",
    ),
    Attr(
        "validation.split",
        "float",
        0.2,
        "share of the training rows held out for validation without validation.select "
        "(per class for classifiers); 0: no validation",
        minimum=0,
        maximum=0.9,
    ),
    Attr("validation.seed", "int", 0, "seed of the held-out rows' draw", minimum=0),
)


@dataclass(frozen=True)
class Estimator:
    """A trainable model kind: its family (runtime trainer), task, attributes and features."""

    name: str
    family: str  # "xgboost" or "keras"
    task: str  # "classifier", "regressor", or "auto" (from the objective / label)
    attributes: dict[str, Attr]
    doc: str
    fixed: dict[str, Any] = field(default_factory=dict)  # parameters the name implies
    feature_kinds: tuple[str, ...] = FEATURE_KINDS  # the feature column kinds it takes


ESTIMATORS: dict[str, Estimator] = {
    e.name: e
    for e in (
        Estimator(
            "xgboost.gbtree",
            "xgboost",
            "auto",
            _attrs(*_XGB_COMMON, *_XGB_TREE, *_VALIDATION),
            "gradient-boosted trees",
            {"booster": "gbtree"},
            XGBOOST_FEATURE_KINDS,
        ),
        Estimator(
            "xgboost.dart",
            "xgboost",
            "auto",
            _attrs(*_XGB_COMMON, *_XGB_TREE, *_XGB_DART, *_VALIDATION),
            "gradient-boosted trees with dropout (DART)",
            {"booster": "dart"},
            XGBOOST_FEATURE_KINDS,
        ),
        Estimator(
            "xgboost.gblinear",
            "xgboost",
            "auto",
            _attrs(*_XGB_COMMON, *_XGB_LINEAR, *_VALIDATION),
            "boosted linear model",
            {"booster": "gblinear"},
            XGBOOST_FEATURE_KINDS,
        ),
        Estimator(
            "DNNClassifier",
            "keras",
            "classifier",
            _attrs(
                Attr(
                    "model.n_classes",
                    "int",
                    None,
                    "number of classes; inferred from the label when omitted",
                    minimum=2,
                    architecture=True,
                ),
                *_DNN,
                *_KERAS_COMMON,
                *_VALIDATION,
            ),
            "a fully connected neural network classifier (Keras)",
        ),
    )
}

_BY_LOWER_NAME = {name.lower(): e for name, e in ESTIMATORS.items()}


def find_estimator(name: str) -> Estimator | None:
    """The estimator called ``name`` (case-insensitive), or None."""
    return _BY_LOWER_NAME.get(name.lower())


def closest_estimator(name: str) -> str | None:
    """The known estimator name nearest to ``name``, for "did you mean" hints."""
    found = difflib.get_close_matches(name.lower(), _BY_LOWER_NAME, n=1, cutoff=0.5)
    return _BY_LOWER_NAME[found[0]].name if found else None
