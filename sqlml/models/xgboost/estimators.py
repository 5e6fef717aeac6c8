"""The XGBoost estimators and their attributes: XGBoost's own parameter names, as SQLFlow
uses them; every estimator takes the scikit-learn wrapper's names (``learning_rate``,
``n_estimators``...) as aliases, declared once with the attribute they name."""

from __future__ import annotations

import dataclasses

from sqlml.models.attributes import MAX_CLASSES, schema
from sqlml.models.estimator import MATRIX_FEATURE_KINDS, Estimator
from sqlml.models.xgboost.objectives import (
    CLASSIFICATION_OBJECTIVES,
    RANKING_OBJECTIVES,
    REGRESSION_OBJECTIVES,
    XGBOOST_OBJECTIVES,
)
from sqlml.semantics.attributes import Attr, not_applied


def _objective(choices: tuple[str, ...], doc: str) -> Attr:
    return Attr(
        "objective",
        "string",
        None,
        doc,
        choices=choices,
        architecture=True,
        renamed={"reg:linear": "reg:squarederror"},  # its name before XGBoost 1.0
    )


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
    Attr(
        "scale_pos_weight",
        "float",
        None,
        "weight of the positive class's rows (binary objectives), e.g. negatives / positives",
        minimum=0,
        exclusive_minimum=True,
    ),
    Attr("base_score", "float", None, "initial prediction score of every row"),
    Attr(
        "nthread",
        "int",
        None,
        "threads XGBoost uses; all when omitted",
        minimum=1,
        aliases=("n_jobs",),
    ),
    not_applied(
        "missing",
        "float",
        "the value that stands for a missing one",
        "sqlml takes NULL values as missing",
    ),
    *(
        not_applied(
            name,
            kind,
            doc,
            "sqlml runs XGBoost quietly and reports each round to its progress display",
        )
        for name, kind, doc in (
            ("verbosity", "int", "how much XGBoost logs"),
            ("silent", "bool", "XGBoost logs nothing"),
        )
    ),
    not_applied(
        "importance_type",
        "string",
        "the scikit-learn wrapper's feature importance",
        "TO EXPLAIN reports each feature's importance",
    ),
    not_applied(
        "train.batch_size",
        "int",
        "SQLFlow: rows read at a time (-1: all)",
        "sqlml reads every row at once, or 262,144 at a time with train.external_memory",
        minimum=-1,
    ),
    not_applied(
        "train.epoch",
        "int",
        "SQLFlow: passes over the batches",
        "sqlml boosts train.num_boost_round rounds over all the rows",
        minimum=1,
    ),
)
_GROUP_COLUMN = Attr(
    "train.group_column",
    "string",
    None,
    "ranking (rank:* objectives, and only they): the selected column holding each row's "
    "query id; not a feature unless listed in COLUMN; without it every row is one query",
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
    Attr(
        "max_delta_step",
        "float",
        None,
        "maximum step of each leaf's output (0: no limit)",
        minimum=0,
    ),
    *(
        Attr(
            f"colsample_by{part}",
            "float",
            None,
            f"column subsample ratio per {what}",
            minimum=0,
            maximum=1,
            exclusive_minimum=True,
        )
        for part, what in (("level", "depth level"), ("node", "split"))
    ),
    Attr("max_bin", "int", None, "histogram bins of each feature (hist)", minimum=2),
    Attr(
        "grow_policy",
        "string",
        None,
        "how trees grow (hist): depthwise or lossguide",
        choices=("depthwise", "lossguide"),
    ),
    Attr("max_leaves", "int", None, "maximum leaves of a tree (0: no limit)", minimum=0),
    Attr("num_parallel_tree", "int", None, "trees built each round", minimum=1, maximum=10_000),
    not_applied(
        "sketch_eps",
        "float",
        "sketch accuracy of tree_method approx",
        "XGBoost 2 and later bin each feature into max_bin bins",
        minimum=0,
        maximum=1,
    ),
    not_applied(
        "predictor",
        "string",
        "the prediction algorithm",
        "XGBoost 2 and later predict on the training device",
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
    Attr(
        "top_k",
        "int",
        None,
        "features the greedy and thrifty feature selectors keep (0: all)",
        minimum=0,
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
        MATRIX_FEATURE_KINDS,
    )


_ANY_OBJECTIVE = _objective(
    XGBOOST_OBJECTIVES,
    "learning objective; inferred from the label when omitted "
    "(text labels: binary:logistic or multi:softprob, numbers: reg:squarederror); "
    "rank:* objectives order the rows of each query (train.group_column)",
)
_CLASSIFIER_OBJECTIVE = _objective(
    CLASSIFICATION_OBJECTIVES,
    "learning objective; binary:logistic (two classes) or multi:softprob when omitted",
)
_REGRESSOR_OBJECTIVE = _objective(
    REGRESSION_OBJECTIVES + RANKING_OBJECTIVES,
    "learning objective; reg:squarederror when omitted; rank:* objectives order the rows of "
    "each query (train.group_column)",
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


# The names SQLFlow also takes for XGBoost models: the scikit-learn wrapper's, with and
# without the ``xgboost.`` prefix, and TensorFlow's boosted trees.
def _defaults(attrs: tuple[Attr, ...], **defaults: object) -> tuple[Attr, ...]:
    """``attrs`` with other defaults, by name."""
    return tuple(dataclasses.replace(a, default=defaults.get(a.name, a.default)) for a in attrs)


# A random forest: one round of num_parallel_tree trees on subsampled rows and columns, as
# XGBoost's XGBRFClassifier and XGBRFRegressor, whose n_estimators is the number of trees.
_FOREST = (
    *(
        dataclasses.replace(a, aliases=tuple(n for n in a.aliases if n != "n_estimators"))
        for a in _defaults(_COMMON, eta=1.0, **{"train.num_boost_round": 1})
    ),
    *_defaults(_TREE, subsample=0.8, **{"lambda": 1e-5}),
    Attr(
        "num_parallel_tree",
        "int",
        100,
        "trees of the forest",
        minimum=1,
        maximum=10_000,
        aliases=("n_estimators",),
    ),
    Attr(
        "colsample_bynode",
        "float",
        0.8,
        "column subsample ratio per split",
        minimum=0,
        maximum=1,
        exclusive_minimum=True,
    ),
)
_RANKER_OBJECTIVE = dataclasses.replace(
    _objective(RANKING_OBJECTIVES, "ranking objective"),
    default="rank:pairwise",
)
_SCIKIT_LEARN_API = (
    _xgboost(
        "XGBRFClassifier",
        "classifier",
        "a random forest that classifies (XGBoost: one round of num_parallel_tree trees)",
        "gbtree",
        _CLASSIFIER_OBJECTIVE,
        _NUM_CLASS,
        *_FOREST,
    ),
    _xgboost(
        "XGBRFRegressor",
        "regressor",
        "a random forest that predicts numbers (XGBoost: one round of num_parallel_tree trees)",
        "gbtree",
        _objective(REGRESSION_OBJECTIVES, "learning objective; reg:squarederror when omitted"),
        *_FOREST,
    ),
    _xgboost(
        "XGBRanker",
        "regressor",
        "gradient-boosted trees that rank the rows of each query (train.group_column; "
        "without it, all the rows as one)",
        "gbtree",
        _RANKER_OBJECTIVE,
        *_COMMON,
        *_TREE,
        _GROUP_COLUMN,
    ),
)

# TensorFlow's BoostedTrees attributes and defaults, and the XGBoost parameter each becomes.
_BOOSTED_TREES = {
    "model.n_trees": ("train.num_boost_round", "int", 100, "number of trees"),
    "model.max_depth": ("max_depth", "int", 6, "maximum depth of a tree"),
    "model.learning_rate": ("eta", "float", 0.1, "shrinkage of each tree"),
    "model.l1_regularization": ("alpha", "float", 0.0, "L1 regularisation of the leaves"),
    "model.l2_regularization": ("lambda", "float", 0.0, "L2 regularisation of the leaves"),
    "model.tree_complexity": ("gamma", "float", 0.0, "minimum loss reduction to split"),
    "model.min_node_weight": ("min_child_weight", "float", 0.0, "minimum hessian of a node"),
}
_BOOSTED_TREES_IGNORED = {
    "model.n_batches_per_layer": "int",
    "model.center_bias": "bool",
    "model.pruning_mode": "string",
    "model.quantile_sketch_epsilon": "float",
    "model.train_in_memory": "bool",
    "train.batch_size": "int",
    "train.epoch": "int",
    "train.num_ps": "int",  # TensorFlow's parameter servers: XGBoost's workers need none
}


def _boosted_trees(name: str, task: str, *attrs: Attr) -> Estimator:
    mapped = tuple(
        Attr(given, kind, default, f"{doc} (XGBoost's {to})", minimum=0)
        for given, (to, kind, default, doc) in _BOOSTED_TREES.items()
    )
    ignored = tuple(
        Attr(given, kind, None, "TensorFlow's; ignored by XGBoost")
        for given, kind in _BOOSTED_TREES_IGNORED.items()
    )
    renamed: dict[str, str | None] = {k: v[0] for k, v in _BOOSTED_TREES.items()}
    renamed.update(dict.fromkeys(_BOOSTED_TREES_IGNORED, None), **{"model.n_classes": "num_class"})
    return Estimator(
        name,
        "xgboost",
        task,
        schema(*attrs, *mapped, *ignored),
        f"TensorFlow's boosted trees {task}, trained as XGBoost gradient-boosted trees",
        {"booster": "gbtree"},
        MATRIX_FEATURE_KINDS,
        renamed=renamed,
        instead="sqlml trains XGBoost gradient-boosted trees (gbtree) instead of TensorFlow's; "
        "model.n_trees, max_depth, learning_rate, l1_regularization, l2_regularization, "
        "tree_complexity and min_node_weight become num_boost_round, max_depth, eta, alpha, "
        "lambda, gamma and min_child_weight",
    )


_NUM_CLASSES = dataclasses.replace(_NUM_CLASS, name="model.n_classes")
ESTIMATORS += (
    *_SCIKIT_LEARN_API,
    *(
        dataclasses.replace(e, name=f"xgboost.{e.name}")
        for e in (
            *(e for e in ESTIMATORS if e.name in ("XGBClassifier", "XGBRegressor")),
            *_SCIKIT_LEARN_API,
        )
    ),
    _boosted_trees("BoostedTreesClassifier", "classifier", _NUM_CLASSES),
    _boosted_trees("BoostedTreesRegressor", "regressor"),
)
