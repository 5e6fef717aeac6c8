"""The XGBoost estimators and their attributes: XGBoost's own parameter names, as SQLFlow
uses them (the scikit-learn names are aliases)."""

from __future__ import annotations

from sqlml.models.attributes import MAX_CLASSES, schema
from sqlml.models.estimator import Estimator
from sqlml.models.xgboost.objectives import (
    CLASSIFICATION_OBJECTIVES,
    RANKING_OBJECTIVES,
    REGRESSION_OBJECTIVES,
    XGBOOST_OBJECTIVES,
)
from sqlml.semantics.attributes import Attr

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


def _objective(choices: tuple[str, ...], doc: str) -> Attr:
    return Attr("objective", "string", None, doc, choices=choices, architecture=True)


_NUM_CLASS = Attr(
    "num_class",
    "int",
    None,
    "number of classes (multi:* objectives)",
    minimum=2,
    maximum=MAX_CLASSES,
    architecture=True,
)
_COMMON = (
    Attr(
        "eta",
        "float",
        0.3,
        "learning rate (step size shrinkage)",
        minimum=0,
        maximum=1,
        aliases=("learning_rate",),
    ),
    Attr("alpha", "float", 0.0, "L1 regularisation", minimum=0, aliases=("reg_alpha",)),
    Attr("eval_metric", "string", None, "training metric, e.g. mlogloss, auc, rmse, ndcg"),
    Attr("seed", "int", 0, "random seed", minimum=0, aliases=("random_state",)),
    Attr(
        "train.num_boost_round",
        "int",
        10,
        "number of boosting rounds",
        minimum=1,
        aliases=("n_estimators", "num_boost_round"),
    ),
)
_GROUP_COLUMN = Attr(
    "train.group_column",
    "string",
    None,
    "ranking (rank:* objectives, and only they): the selected column holding each row's "
    "query id; not a feature unless listed in COLUMN",
)

_TREE = (
    Attr("lambda", "float", 1.0, "L2 regularisation", minimum=0, aliases=("reg_lambda",)),
    Attr("max_depth", "int", 6, "maximum depth of a tree", minimum=0),
    Attr("min_child_weight", "float", 1.0, "minimum sum of instance weight in a child", minimum=0),
    Attr(
        "gamma",
        "float",
        0.0,
        "minimum loss reduction to split a leaf",
        minimum=0,
        aliases=("min_split_loss",),
    ),
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

_DART = (
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

_LINEAR = (
    Attr(
        "lambda",
        "float",
        0.0,
        "L2 regularisation, scaled by the number of training rows",
        minimum=0,
        aliases=("reg_lambda",),
    ),
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


def _xgboost(
    name: str, task: str, doc: str, booster: str, objective: Attr, *attrs: Attr
) -> Estimator:
    return Estimator(
        name,
        "xgboost",
        task,
        schema(objective, *attrs),
        doc,
        {"booster": booster},
        XGBOOST_FEATURE_KINDS,
    )


_ANY_OBJECTIVE = _objective(
    XGBOOST_OBJECTIVES,
    "learning objective; inferred from the label when omitted "
    "(text labels: binary:logistic or multi:softprob, numbers: reg:squarederror); "
    "rank:* objectives need train.group_column",
)
_CLASSIFIER_OBJECTIVE = _objective(
    CLASSIFICATION_OBJECTIVES,
    "learning objective; binary:logistic (two classes) or multi:softprob when omitted",
)
_REGRESSOR_OBJECTIVE = _objective(
    REGRESSION_OBJECTIVES + RANKING_OBJECTIVES,
    "learning objective; reg:squarederror when omitted; rank:* objectives need train.group_column",
)

ESTIMATORS = (
    _xgboost(
        "xgboost.gbtree",
        "auto",
        "gradient-boosted trees",
        "gbtree",
        _ANY_OBJECTIVE,
        _NUM_CLASS,
        *_COMMON,
        *_TREE,
        _GROUP_COLUMN,
    ),
    _xgboost(
        "xgboost.dart",
        "auto",
        "gradient-boosted trees with dropout (DART)",
        "dart",
        _ANY_OBJECTIVE,
        _NUM_CLASS,
        *_COMMON,
        *_TREE,
        *_DART,
        _GROUP_COLUMN,
    ),
    _xgboost(
        "xgboost.gblinear",
        "auto",
        "boosted linear model",
        "gblinear",
        _ANY_OBJECTIVE,
        _NUM_CLASS,
        *_COMMON,
        *_LINEAR,
        _GROUP_COLUMN,
    ),
    _xgboost(
        "XGBClassifier",
        "classifier",
        "gradient-boosted trees that classify; every label (numbers too) is a class",
        "gbtree",
        _CLASSIFIER_OBJECTIVE,
        _NUM_CLASS,
        *_COMMON,
        *_TREE,
    ),
    _xgboost(
        "XGBRegressor",
        "regressor",
        "gradient-boosted trees that predict numbers, or rank rows (rank:* objectives)",
        "gbtree",
        _REGRESSOR_OBJECTIVE,
        *_COMMON,
        *_TREE,
        _GROUP_COLUMN,
    ),
)
