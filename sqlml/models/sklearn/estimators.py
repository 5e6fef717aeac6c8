"""The scikit-learn estimators, named as scikit-learn's public import paths
(``sklearn.cluster.KMeans``), with their main hyperparameters as ``model.*`` attributes.

The full path keeps them apart from sqlml's and SQLFlow's names (``KMeans``,
``sqlflow_models.OneClassSVM``) and from users' model builders (``<module>.<function>``
names under ``sklearn`` are never looked up as one). An attribute ``model.<name>`` is
scikit-learn's parameter ``<name>``; ``train.seed`` is ``random_state``. Attributes without
a default are left to scikit-learn's own (``'auto'``, ``'scale'``) when unset.
"""

from __future__ import annotations

from sqlml.models.attributes import schema
from sqlml.models.estimator import MATRIX_FEATURE_KINDS, Estimator
from sqlml.semantics.attributes import Attr

FAMILY = "sklearn"
CLASS = "model.class"  # the fixed attribute naming the estimator's scikit-learn class
MAX_ESTIMATORS = 10_000  # trees of a forest
MAX_CLUSTERS = 1_000

SEED = Attr("train.seed", "int", 0, "random_state: the seed of the draws", minimum=0)


def _forest(criteria: tuple[str, ...], max_features: str) -> tuple[Attr, ...]:
    return (
        Attr(
            "model.n_estimators",
            "int",
            100,
            "trees in the forest",
            minimum=1,
            maximum=MAX_ESTIMATORS,
            architecture=True,
        ),
        Attr("model.criterion", "string", criteria[0], "the split criterion", choices=criteria),
        Attr(
            "model.max_depth",
            "int",
            None,
            "the trees' depth at most; unset: until the leaves are pure",
            minimum=1,
        ),
        Attr("model.min_samples_split", "int", 2, "rows a node needs to be split", minimum=2),
        Attr("model.min_samples_leaf", "int", 1, "rows a leaf holds at least", minimum=1),
        Attr(
            "model.max_features",
            "string",
            max_features,
            "features each split considers: sqrt or log2 of their number, or all",
            choices=("sqrt", "log2", "all"),
        ),
        Attr("model.bootstrap", "bool", True, "whether each tree learns from a bootstrap sample"),
        SEED,
    )


_LOGISTIC = (
    Attr(
        "model.C",
        "float",
        1.0,
        "inverse of the L2 regularisation strength",
        minimum=0,
        exclusive_minimum=True,
    ),
    Attr(
        "model.solver",
        "string",
        "lbfgs",
        "the optimisation algorithm",
        choices=("lbfgs", "newton-cg", "newton-cholesky", "sag", "saga", "liblinear"),
    ),
    Attr("model.max_iter", "int", 100, "the solver's iterations at most", minimum=1),
    Attr("model.tol", "float", 1e-4, "the solver's stopping tolerance", minimum=0),
    Attr("model.fit_intercept", "bool", True, "whether to fit an intercept"),
    Attr(
        "model.class_weight",
        "string",
        None,
        "balanced: weigh classes inversely to their frequency; unset: all alike",
        choices=("balanced",),
    ),
    SEED,
)

_LINEAR = (
    Attr("model.fit_intercept", "bool", True, "whether to fit an intercept"),
    Attr("model.positive", "bool", False, "whether the coefficients must be positive"),
)

_KMEANS = (
    Attr(
        "model.n_clusters",
        "int",
        8,
        "number of clusters; TO PREDICT writes ids 0 to n_clusters - 1",
        minimum=1,
        maximum=MAX_CLUSTERS,
        architecture=True,
    ),
    Attr(
        "model.init",
        "string",
        "k-means++",
        "how the starting centres are chosen",
        choices=("k-means++", "random"),
    ),
    Attr(
        "model.n_init",
        "int",
        None,
        "runs from different starts, the one of least inertia kept; unset: scikit-learn's "
        "'auto' (1 run with k-means++, 10 with random)",
        minimum=1,
        maximum=1_000,
    ),
    Attr("model.max_iter", "int", 300, "iterations of a run at most", minimum=1),
    Attr("model.tol", "float", 1e-4, "relative tolerance of the centres' moves", minimum=0),
    Attr(
        "model.algorithm",
        "string",
        "lloyd",
        "the k-means algorithm",
        choices=("lloyd", "elkan"),
    ),
    SEED,
)

_ISOLATION = (
    Attr(
        "model.n_estimators",
        "int",
        100,
        "trees in the forest",
        minimum=1,
        maximum=MAX_ESTIMATORS,
        architecture=True,
    ),
    Attr(
        "model.max_samples",
        "int",
        None,
        "rows each tree is grown on; unset: scikit-learn's 'auto' (min(256, rows))",
        minimum=1,
    ),
    Attr(
        "model.contamination",
        "float",
        None,
        "share of the training rows taken as outliers (the threshold); unset: scikit-learn's "
        "'auto' (the threshold of the original paper)",
        minimum=0,
        maximum=0.5,
        exclusive_minimum=True,
    ),
    Attr(
        "model.max_features",
        "float",
        1.0,
        "share of the features each tree is grown on",
        minimum=0,
        maximum=1,
        exclusive_minimum=True,
    ),
    Attr("model.bootstrap", "bool", False, "whether the rows are drawn with replacement"),
    SEED,
)

_ONE_CLASS_SVM = (
    Attr(
        "model.kernel",
        "string",
        "rbf",
        "the kernel",
        choices=("rbf", "linear", "poly", "sigmoid"),
    ),
    Attr(
        "model.nu",
        "float",
        0.5,
        "upper bound of the share of training rows taken as outliers, lower bound of the "
        "share of support vectors",
        minimum=0,
        maximum=1,
        exclusive_minimum=True,
    ),
    Attr(
        "model.gamma",
        "float",
        None,
        "the rbf, poly and sigmoid kernels' coefficient; unset: scikit-learn's 'scale' "
        "(1 / (columns x variance))",
        minimum=0,
        exclusive_minimum=True,
    ),
    Attr("model.degree", "int", 3, "the poly kernel's degree", minimum=0),
    Attr("model.coef0", "float", 0.0, "the poly and sigmoid kernels' independent term"),
    Attr("model.tol", "float", 1e-3, "the solver's stopping tolerance", minimum=0),
    Attr("model.shrinking", "bool", True, "whether to use the shrinking heuristic"),
    Attr(
        "model.max_iter",
        "int",
        -1,
        "the solver's iterations at most; -1: no limit",
        minimum=-1,
    ),
)


def _estimator(
    name: str, task: str, attrs: tuple[Attr, ...], doc: str, labelled: bool = True
) -> Estimator:
    return Estimator(
        name,
        FAMILY,
        task,
        schema(*attrs),
        doc,
        fixed={CLASS: name},
        feature_kinds=MATRIX_FEATURE_KINDS,
        labelled=labelled,
    )


ESTIMATORS = (
    _estimator(
        "sklearn.ensemble.RandomForestClassifier",
        "classifier",
        _forest(("gini", "entropy", "log_loss"), "sqrt"),
        "scikit-learn's random forest of classification trees",
    ),
    _estimator(
        "sklearn.ensemble.RandomForestRegressor",
        "regressor",
        _forest(("squared_error", "absolute_error", "friedman_mse", "poisson"), "all"),
        "scikit-learn's random forest of regression trees",
    ),
    _estimator(
        "sklearn.linear_model.LogisticRegression",
        "classifier",
        _LOGISTIC,
        "scikit-learn's logistic regression (multinomial with more than two classes)",
    ),
    _estimator(
        "sklearn.linear_model.LinearRegression",
        "regressor",
        _LINEAR,
        "scikit-learn's ordinary least squares",
    ),
    _estimator(
        "sklearn.cluster.KMeans",
        "classifier",
        _KMEANS,
        "scikit-learn's k-means on the features as selected (not standardised), without "
        "LABEL: TO PREDICT writes the cluster id",
        labelled=False,
    ),
    _estimator(
        "sklearn.ensemble.IsolationForest",
        "classifier",
        _ISOLATION,
        "scikit-learn's isolation forest, without LABEL: TO PREDICT writes 1 (inlier) or "
        "-1 (outlier)",
        labelled=False,
    ),
    _estimator(
        "sklearn.svm.OneClassSVM",
        "classifier",
        _ONE_CLASS_SVM,
        "scikit-learn's one-class SVM, without LABEL: TO PREDICT writes 1 (inlier) or -1 (outlier)",
        labelled=False,
    ),
)

UNLABELLED = frozenset(e.name for e in ESTIMATORS if not e.labelled)
CLUSTERING = "sklearn.cluster.KMeans"


def parameters(attributes: dict[str, object]) -> dict[str, object]:
    """scikit-learn's constructor arguments of the checked ``attributes`` of a training:
    ``model.<name>`` as ``<name>`` (``max_features = 'all'`` as None), ``train.seed`` as
    ``random_state``."""
    found = {
        name.removeprefix("model."): value
        for name, value in attributes.items()
        if name.startswith("model.") and name != CLASS
    }
    if found.get("max_features") == "all":
        found["max_features"] = None
    if "train.seed" in attributes:
        found["random_state"] = attributes["train.seed"]
    return found
