"""The estimators sqlml can train and the attributes each one takes."""

from __future__ import annotations

import difflib
import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any

from sqlml.ir import FEATURE_KINDS
from sqlml.semantics.attributes import Attr

CLASSIFICATION_OBJECTIVES = (
    "binary:logistic",
    "binary:logitraw",
    "binary:hinge",
    "multi:softmax",
    "multi:softprob",
)
REGRESSION_OBJECTIVES = (
    "reg:squarederror",
    "reg:squaredlogerror",
    "reg:logistic",
    "reg:pseudohubererror",
    "reg:absoluteerror",
    "count:poisson",
    "reg:gamma",
    "reg:tweedie",
)
# Learning to rank: the rows of a query (train.group_column) are ordered by relevance.
RANKING_OBJECTIVES = ("rank:pairwise", "rank:ndcg", "rank:map")
XGBOOST_OBJECTIVES = REGRESSION_OBJECTIVES + CLASSIFICATION_OBJECTIVES + RANKING_OBJECTIVES

# Sane maximums: a model beyond them would not fit in memory or in the model store (1 GiB),
# or diverges at once.
MAX_CLASSES = 10_000  # a prediction batch holds rows x classes probabilities
MAX_UNITS = 10_000  # of a hidden layer: two such layers hold 10^8 weights (400 MB)
MAX_LEARNING_RATE = 10.0


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
# XGBoost's own parameter names, as SQLFlow uses them; the scikit-learn names are hints only.
_XGB_COMMON = (
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

_XGB_TREE = (
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
        maximum=MAX_LEARNING_RATE,
        exclusive_minimum=True,
    ),
)

_ACTIVATIONS = ("relu", "tanh", "sigmoid", "elu", "gelu", "selu")


def _dnn(prefix: str = "") -> tuple[Attr, ...]:
    """The hidden layers' attributes: ``model.<prefix>hidden_units`` and the like."""
    return (
        Attr(
            f"model.{prefix}hidden_units",
            "int list",
            [64, 32],
            "units of each hidden layer",
            minimum=1,
            maximum=MAX_UNITS,
            architecture=True,
        ),
        Attr(
            f"model.{prefix}activation",
            "string",
            "relu",
            "activation of the hidden layers",
            choices=_ACTIVATIONS,
            architecture=True,
        ),
        Attr(
            f"model.{prefix}dropout",
            "float",
            0.0,
            "dropout rate after each hidden layer",
            minimum=0,
            maximum=1,
            architecture=True,
        ),
    )


_N_CLASSES = Attr(
    "model.n_classes",
    "int",
    None,
    "number of classes; inferred from the label when omitted",
    minimum=2,
    maximum=MAX_CLASSES,
    architecture=True,
)

# Every estimator: data larger than memory.
_EXTERNAL_MEMORY = Attr(
    "train.external_memory",
    "bool",
    False,
    "stream the rows in batches instead of reading them all into memory (XGBoost: external "
    "memory, cache files in a temporary folder; Keras: tf.data); feature columns (and Keras's "
    "normalisation) are derived from the first 100,000 rows, the classes from SELECT DISTINCT "
    "label; validation.split holds out rows of each batch, not stratified; not for rankers",
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

# Every estimator: how a TO TRAIN runs on Kubernetes (sqlml compile --target argo).
_DISTRIBUTED = (
    Attr(
        "train.distributed",
        "bool",
        None,
        "on Kubernetes (compile --target argo), train in a Kubeflow job: a TFJob (Keras) or "
        "an XGBoostJob (XGBoost); unset: when train.workers or train.ps is given. Local runs "
        "train in-process",
    ),
    Attr(
        "train.workers",
        "int",
        None,
        "worker pods of the distributed job, besides its chief (TFJob) or master "
        "(XGBoostJob); 2 when unset",
        minimum=1,
    ),
)
_PS = Attr("train.ps", "int", None, "parameter-server pods of the TFJob (Keras)", minimum=1)


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
    inputs: dict[str, str] = field(default_factory=dict)  # COLUMN ... FOR name -> input
    open_prefix: str | None = None  # attributes with this prefix are taken unchecked


# COLUMN ... FOR of the DNNLinearCombined estimators: SQLFlow's names and short ones.
_COMBINED_INPUTS = {
    "linear_feature_columns": "linear",
    "dnn_feature_columns": "dnn",
    "linear": "linear",
    "dnn": "dnn",
}


def _xgboost(
    name: str, task: str, doc: str, booster: str, objective: Attr, *attrs: Attr
) -> Estimator:
    return Estimator(
        name,
        "xgboost",
        task,
        _attrs(objective, *attrs, _EXTERNAL_MEMORY, *_VALIDATION, *_DISTRIBUTED),
        doc,
        {"booster": booster},
        XGBOOST_FEATURE_KINDS,
    )


def _keras(name: str, task: str, doc: str, architecture: str, *attrs: Attr) -> Estimator:
    return Estimator(
        name,
        "keras",
        task,
        _attrs(*attrs, *_KERAS_COMMON, _EXTERNAL_MEMORY, *_VALIDATION, *_DISTRIBUTED, _PS),
        doc,
        {"architecture": architecture},
        inputs=_COMBINED_INPUTS if architecture == "dnn_linear_combined" else {},
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

ESTIMATORS: dict[str, Estimator] = {
    e.name: e
    for e in (
        _xgboost(
            "xgboost.gbtree",
            "auto",
            "gradient-boosted trees",
            "gbtree",
            _ANY_OBJECTIVE,
            _NUM_CLASS,
            *_XGB_COMMON,
            *_XGB_TREE,
            _GROUP_COLUMN,
        ),
        _xgboost(
            "xgboost.dart",
            "auto",
            "gradient-boosted trees with dropout (DART)",
            "dart",
            _ANY_OBJECTIVE,
            _NUM_CLASS,
            *_XGB_COMMON,
            *_XGB_TREE,
            *_XGB_DART,
            _GROUP_COLUMN,
        ),
        _xgboost(
            "xgboost.gblinear",
            "auto",
            "boosted linear model",
            "gblinear",
            _ANY_OBJECTIVE,
            _NUM_CLASS,
            *_XGB_COMMON,
            *_XGB_LINEAR,
            _GROUP_COLUMN,
        ),
        _xgboost(
            "XGBClassifier",
            "classifier",
            "gradient-boosted trees that classify; every label (numbers too) is a class",
            "gbtree",
            _CLASSIFIER_OBJECTIVE,
            _NUM_CLASS,
            *_XGB_COMMON,
            *_XGB_TREE,
        ),
        _xgboost(
            "XGBRegressor",
            "regressor",
            "gradient-boosted trees that predict numbers, or rank rows (rank:* objectives)",
            "gbtree",
            _REGRESSOR_OBJECTIVE,
            *_XGB_COMMON,
            *_XGB_TREE,
            _GROUP_COLUMN,
        ),
        _keras(
            "DNNClassifier",
            "classifier",
            "a fully connected neural network classifier (Keras)",
            "dnn",
            _N_CLASSES,
            *_dnn(),
        ),
        _keras(
            "DNNRegressor",
            "regressor",
            "a fully connected neural network regressor, trained on the mean squared error (Keras)",
            "dnn",
            *_dnn(),
        ),
        _keras(
            "LinearClassifier",
            "classifier",
            "a linear (multinomial logistic) classifier over the features (Keras)",
            "linear",
            _N_CLASSES,
        ),
        _keras(
            "LinearRegressor",
            "regressor",
            "a linear regressor over the features, trained on the mean squared error (Keras)",
            "linear",
        ),
        _keras(
            "DNNLinearCombinedClassifier",
            "classifier",
            "a wide and deep classifier: a linear part over the features COLUMN ... FOR "
            "linear_feature_columns, a network over those FOR dnn_feature_columns; features "
            "without FOR feed both (Keras)",
            "dnn_linear_combined",
            _N_CLASSES,
            *_dnn("dnn_"),
        ),
        _keras(
            "DNNLinearCombinedRegressor",
            "regressor",
            "a wide and deep regressor: a linear part over the features COLUMN ... FOR "
            "linear_feature_columns, a network over those FOR dnn_feature_columns; features "
            "without FOR feed both (Keras)",
            "dnn_linear_combined",
            *_dnn("dnn_"),
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


# A user's model builder takes these; its own model.* attributes pass to it unchecked.
USER_MODEL_ATTRIBUTES = _attrs(
    Attr(
        "model.n_classes",
        "int",
        None,
        "number of classes; when given, the model is a classifier even of numeric labels",
        minimum=2,
        maximum=MAX_CLASSES,
        architecture=True,
    ),
    *_KERAS_COMMON,
    _EXTERNAL_MEMORY,
    *_VALIDATION,
    *_DISTRIBUTED,
    _PS,
)


def user_estimator(name: str) -> Estimator | None:
    """The Keras model builder a dotted ``module.function`` name imports, or None if the
    module or the function does not exist.

    Importing runs the module's code. A name that imports something other than a function
    is a :class:`TypeError`; a module that fails to import raises its own error.
    """
    module_name, _, function = name.rpartition(".")
    if not module_name:
        return None
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and (module_name + ".").startswith(error.name + "."):
            return None
        raise
    builder = getattr(module, function, None)
    if builder is None:
        return None
    if not inspect.isfunction(builder):
        raise TypeError(f"it names an object of type {type(builder).__name__}, not a function")
    return Estimator(
        name,
        "keras",
        "auto",
        USER_MODEL_ATTRIBUTES,
        f"a Keras model built by {name}",
        {"architecture": "custom", "builder": name},
        open_prefix="model.",
    )
