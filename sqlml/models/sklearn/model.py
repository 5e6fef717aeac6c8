"""scikit-learn estimators: train (a pipeline of mean imputation and the estimator, fitted in
memory) and score, stored in skops's format and loaded with an explicit allow-list of types.

Scores: class probabilities (classifiers), values (regressors); for k-means, each row's soft
assignment to the centres (Student's t kernel of the distance, so the nearest centre wins);
for the outlier detectors, the logistic of scikit-learn's ``decision_function`` as the score
of 1 (inlier), so 1 wins where scikit-learn predicts it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import skops.io
from sklearn.base import BaseEstimator
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline

from sqlml import imports
from sqlml.errors import ModelError
from sqlml.models.interface import Imported, onnx_converted
from sqlml.models.sklearn.checks import (
    ALLOWED_TYPES,
    ESTIMATOR_TYPES,
    PIPELINE,
    node_type,
    skops_archive,
    skops_error,
    skops_tree,
)
from sqlml.models.sklearn.estimators import CLASS, CLUSTERING, UNLABELLED, parameters
from sqlml.models.store import StoredModel
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.labels import LabelEncoding

# skops imports the modules of the types it loads on first use: in parallel steps, CPython 3.11
# compiling modules in two threads at once can fail ("AST constructor recursion depth
# mismatch", python/cpython#106905), so one load at a time.
_LOADING = threading.Lock()
SILHOUETTE_ROWS = 5_000  # training rows the silhouette is measured on at most


def train(
    context: Context,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
    **ranking: np.ndarray,
) -> tuple[bytes, dict[str, Any]]:
    """Fit the estimator ``model.class`` names on the rows (anew: scikit-learn's estimators
    do not continue a base model's training)."""
    name = attributes[CLASS]
    if base is not None:
        raise ModelError(
            f"{name} trains anew: TO TRAIN ... USING a base model is not supported for "
            "scikit-learn models",
            hint="remove USING",
        )
    x = values(features)
    clusters = attributes.get("model.n_clusters")
    if clusters is not None and len(x) < clusters:
        raise ModelError(
            f"model.n_clusters is {clusters}, but the SELECT returns {len(x)} rows",
            hint="set model.n_clusters to at most the number of rows",
        )
    module, _, class_name = name.rpartition(".")
    estimator = getattr(imports.load(module), class_name)(**parameters(attributes))
    pipeline = Pipeline([("impute", SimpleImputer(keep_empty_features=True)), ("model", estimator)])
    context.token.check()
    with context.reporter.stage("training", total=1, unit="fits"):
        pipeline.fit(x, None if name in UNLABELLED else y)
        context.reporter.advance()
    metrics = {"train_rows": float(len(x)), **_training_metrics(name, pipeline, x)}
    params = {"estimator": name, "columns": int(x.shape[1]), **_shape(name, attributes, labels)}
    return skops.io.dumps(pipeline), {
        "params": params,
        "metrics": metrics,
        "column_types": features.column_types,
    }


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """The stored pipeline, checked and loaded once (:func:`load`), as a scoring function."""
    score = _scoring(context, data, metadata, decision=False)
    return lambda features, batch_size: score(features, batch_size)[0]


def extra_scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], tuple[np.ndarray, dict[str, np.ndarray]]]:
    """The scores of :func:`scorer`, and an outlier detector's ``score``: scikit-learn's
    ``decision_function``."""
    return _scoring(context, data, metadata, decision=True)


def _scoring(
    context: Context, data: bytes, metadata: dict[str, Any], decision: bool
) -> Callable[[FeatureArrays, int], tuple[np.ndarray, dict[str, np.ndarray]]]:
    """The scores, and with ``decision`` the ``decision_function`` as ``score``."""
    name = metadata["params"].get("estimator")
    pipeline = load(data, name)
    width = int(metadata["params"].get("columns", -1))
    classes = int(metadata["params"].get("classes", 0))

    def score(features: FeatureArrays, batch_size: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        x = values(features)
        if x.shape[1] != width:
            raise ModelError(
                f"the features make {x.shape[1]} columns, but the model was trained on {width}",
                hint="select the columns the model was trained on",
            )
        parts, decisions = [], []
        try:
            for rows in context.batches(x, batch_size):
                parts.append(_scores(name, pipeline, classes, rows))
                if decision:
                    decisions.append(pipeline.decision_function(rows))
            if not parts:  # no rows
                parts.append(_scores(name, pipeline, classes, x))
                decisions.append(np.zeros(0))
        except (ValueError, IndexError, AttributeError, TypeError) as error:
            # a stored model of fitting types whose state does not fit (the rows are checked)
            raise skops_error(f"it does not score rows ({type(error).__name__}: {error})") from None
        extra = {"score": np.concatenate(decisions)} if decision else {}
        return np.concatenate(parts), extra

    return score


def load(data: bytes, name: str | None) -> Pipeline:
    """The pipeline ``data`` holds, of the estimator ``name``: the archive checked
    (:func:`~sqlml.models.sklearn.checks.skops_archive`), then loaded by skops trusting
    :data:`ALLOWED_TYPES` only (skops refuses any other type it finds)."""
    if name not in ESTIMATOR_TYPES:
        raise skops_error(f"its metadata names {name!r}, not a scikit-learn estimator of sqlml's")
    skops_archive(data, name)
    pipeline = _trusted(data, skops_error)
    wanted = ESTIMATOR_TYPES[name]
    steps = getattr(pipeline, "steps", None) if isinstance(pipeline, Pipeline) else None
    if not isinstance(steps, list) or not all(
        isinstance(step, tuple) and len(step) == 2 for step in steps
    ):
        raise skops_error("it does not hold a pipeline of (name, step) pairs")
    model = steps[-1][1] if steps else None
    if not isinstance(model, BaseEstimator) or _type_name(model) != wanted:
        raise skops_error(f"it does not hold a {name}")
    try:
        for tree in getattr(model, "estimators_", []):
            _check_tree(tree)
        if name == "sklearn.svm.OneClassSVM":
            _check_svm(model)
    except (AttributeError, TypeError, ValueError, IndexError) as error:
        raise skops_error(f"its state is malformed ({type(error).__name__}: {error})") from None
    return pipeline


def _check_tree(tree: Any) -> None:
    """A :class:`ModelError` unless a forest's tree links nodes of its own and splits on
    features it has (scikit-learn's compiled code follows them without bounds checks)."""
    state = getattr(tree, "tree_", None)
    if state is None:
        raise skops_error("a tree of its forest has no nodes")
    nodes, width = state.node_count, tree.n_features_in_
    left, right = state.children_left, state.children_right
    leaves = left == -1
    own = np.arange(len(left))
    if (
        nodes < 1
        or len(left) != nodes
        or len(state.value) != nodes
        or (leaves != (right == -1)).any()
        # scikit-learn numbers a node's children after it: links back would loop forever
        or (~leaves & ((left <= own) | (right <= own) | (left >= nodes) | (right >= nodes))).any()
        or (np.bincount(np.concatenate([left[~leaves], right[~leaves]]), minlength=1) > 1).any()
        or ((state.feature < 0) & ~leaves).any()
        or (state.feature >= width).any()
    ):
        raise skops_error("a tree of its forest links nodes or features it does not have")


_SVM_KERNELS = ("rbf", "linear", "poly", "sigmoid")


def _check_svm(model: Any) -> None:
    """A :class:`ModelError` unless a one-class SVM's arrays fit each other: libsvm reads
    them by the sizes it is given, without bounds checks."""
    vectors = np.asarray(model.support_vectors_)
    count = vectors.shape[0] if vectors.ndim == 2 else -1
    shapes = {
        "support_vectors_": (vectors.shape, (count, model.n_features_in_)),
        "support_": (np.shape(model.support_), (count,)),
        "_dual_coef_": (np.shape(model._dual_coef_), (1, count)),
        "dual_coef_": (np.shape(model.dual_coef_), (1, count)),
        "_intercept_": (np.shape(model._intercept_), (1,)),
        "intercept_": (np.shape(model.intercept_), (1,)),
        "_n_support": (np.shape(model._n_support), (2,)),
        "_probA": (np.shape(model._probA), (0,)),
        "_probB": (np.shape(model._probB), (0,)),
    }
    wrong = [name for name, (found, wanted) in shapes.items() if found != wanted]
    if wrong or model.kernel not in _SVM_KERNELS or model._sparse is not False:
        raise skops_error(f"its SVM's {', '.join(wrong) or 'kernel'} do not fit its vectors")


def values(features: FeatureArrays) -> np.ndarray:
    """The features as float64, categories one-hot (NULL stays NaN: the pipeline imputes)."""
    return features.matrix(one_hot=True)[0].astype(np.float64)


def _scores(name: str, pipeline: Pipeline, classes: int, x: np.ndarray) -> np.ndarray:
    """The scores of the rows ``x`` (see the module's docstring); ``classes``: a
    classifier's number of classes."""
    if name == CLUSTERING:
        distances = pipeline.transform(x)  # to each centre
        kernel = 1.0 / (1.0 + distances**2)
        return kernel / kernel.sum(axis=1, keepdims=True)
    if name in UNLABELLED:
        decision = pipeline.decision_function(x)
        inlier = 1.0 / (1.0 + np.exp(-decision))
        # scikit-learn predicts 1 at decision 0: so does the argmax of (-1, 1)
        inlier = np.where(decision >= 0, np.maximum(inlier, np.nextafter(0.5, 1.0)), inlier)
        return np.column_stack([1.0 - inlier, inlier])
    if classes:
        found = pipeline[-1].classes_.astype(int)
        if found.min() < 0 or found.max() >= classes:
            raise skops_error(f"its classes do not fit the {classes} of its metadata")
        full = np.zeros((len(x), classes))
        full[:, found] = pipeline.predict_proba(x)  # classes absent from training: 0
        return full
    return pipeline.predict(x).astype(np.float64)


def _training_metrics(name: str, pipeline: Pipeline, x: np.ndarray) -> dict[str, float]:
    """What the fit measured: k-means's inertia and silhouette (on up to
    :data:`SILHOUETTE_ROWS` rows), the outlier detectors' share of training outliers."""
    model = pipeline[-1]
    if name == CLUSTERING:
        silhouette_score = imports.load("sklearn.metrics").silhouette_score
        found = {"inertia": float(model.inertia_)}
        if 1 < len(set(model.labels_.tolist())) < len(x):
            sample = min(len(x), SILHOUETTE_ROWS)
            found["silhouette"] = float(
                silhouette_score(
                    pipeline[0].transform(x), model.labels_, sample_size=sample, random_state=0
                )
            )
        return found
    if name in UNLABELLED:
        return {"train_outlier_share": float((pipeline.predict(x) == -1).mean())}
    return {}


def _shape(name: str, attributes: dict[str, Any], labels: LabelEncoding) -> dict[str, Any]:
    """What scoring needs to know of the model's outputs: the number of clusters or classes."""
    if name == CLUSTERING:
        return {"n_clusters": attributes["model.n_clusters"]}
    return {"classes": len(labels.classes)} if labels.task == "classifier" else {}


def _type_name(model: Any) -> str:
    return f"{type(model).__module__}.{type(model).__qualname__}"


def points(data: bytes, metadata: dict[str, Any], features: FeatureArrays) -> np.ndarray:
    """The rows as the estimator was fitted on them: NULL as the training rows' mean (the
    pipeline's imputer), not standardised."""
    pipeline = load(data, metadata["params"].get("estimator"))
    return pipeline[0].transform(values(features))


def import_model(data: bytes) -> Imported:
    """A fitted estimator of the family's (or a pipeline of mean imputation and one) that
    skops saved: its archive checked as a stored model's is, then loaded by skops trusting
    :data:`ALLOWED_TYPES` only, stored as the family's pipeline. A classifier's classes are
    its ``classes_``; its inputs' names, its ``feature_names_in_`` (dropped: COLUMN names
    its inputs)."""
    tree, named = skops_tree(data, _not_imported)
    found = sorted(named & set(ESTIMATOR_TYPES.values()))
    if len(found) != 1:
        raise _not_imported(
            f"it holds {', '.join(found) or 'none'} of the estimators sqlml imports: one of "
            + ", ".join(ESTIMATOR_TYPES)
        )
    name = next(k for k, v in ESTIMATOR_TYPES.items() if v == found[0])
    if not isinstance(tree, dict) or node_type(tree) not in (PIPELINE, found[0]):
        raise _not_imported(f"it holds no {found[0]} or a pipeline ending with one")
    loaded = _trusted(data, _not_imported)
    pipeline = loaded if isinstance(loaded, Pipeline) else Pipeline([("model", loaded)])
    steps = [step for _, step in pipeline.steps]
    model = steps[-1]
    if _type_name(model) != found[0] or not all(isinstance(s, SimpleImputer) for s in steps[:-1]):
        raise _not_imported("its pipeline is not mean imputation followed by the estimator")
    inputs = getattr(steps[0], "n_features_in_", None)
    if not isinstance(inputs, int):
        raise _not_imported("it is not fitted")
    names = getattr(steps[0], "feature_names_in_", None)
    for step in steps:
        step.__dict__.pop("feature_names_in_", None)  # its rows come as arrays, unnamed
    params: dict[str, Any] = {"estimator": name, "columns": inputs}
    task, classes = "regressor", []
    if name == CLUSTERING:
        params["n_clusters"] = int(model.n_clusters)
        task, classes = "classifier", list(range(params["n_clusters"]))
    elif name in UNLABELLED:
        task, classes = "classifier", [-1, 1]
    elif hasattr(model, "classes_"):
        task, classes = "classifier", np.asarray(model.classes_).tolist()
        params["classes"] = len(classes)
        model.classes_ = np.arange(len(classes))  # what the family's scorer indexes by
    stored = skops.io.dumps(pipeline)
    load(stored, name)  # the checks of a stored model's state (trees, vectors)
    return Imported(
        data=stored,
        estimator=name,
        params=params,
        task=task,
        classes=classes,
        inputs=inputs,
        names=None if names is None else [str(n) for n in names],
    )


def _not_imported(why: str) -> ModelError:
    return ModelError(
        f"the scikit-learn model file is not imported: {why}",
        hint="save a fitted estimator of sqlml's scikit-learn models with skops.io.dump "
        "(never pickle): its types must be in sqlml's allow-list",
    )


def _trusted(data: bytes, error: Callable[[str], ModelError]) -> Any:
    """What skops loads from ``data`` trusting :data:`ALLOWED_TYPES` only (any other type it
    finds is refused, not loaded)."""
    try:
        with _LOADING:
            untrusted = set(skops.io.get_untrusted_types(data=data)) - ALLOWED_TYPES
            loaded = None if untrusted else skops.io.loads(data, trusted=sorted(ALLOWED_TYPES))
    except Exception as failure:  # skops's own refusals and a damaged archive's errors
        raise error(f"skops refused it ({type(failure).__name__}: {failure})") from None
    if untrusted:
        raise error(f"it names {', '.join(sorted(untrusted))}, which sqlml does not load")
    return loaded


def to_onnx(stored: StoredModel) -> bytes:
    """The stored pipeline (loaded as for scoring) converted by skl2onnx: a float input
    ``input`` of its columns; a classifier's outputs are ``label`` (the class values, as
    TO PREDICT writes them) and ``probabilities`` (a tensor, classes in order)."""
    skl2onnx = imports.load("skl2onnx")
    tensor = imports.load("skl2onnx.common.data_types").FloatTensorType
    metadata = stored.metadata
    name = metadata["params"].get("estimator")
    pipeline = load(stored.data, name)
    model = pipeline[-1]
    if name not in UNLABELLED and "classes" in metadata["params"]:
        model.classes_ = np.array(metadata["labels"]["classes"])
    options = {id(model): {"zipmap": False}} if hasattr(model, "predict_proba") else None
    inputs = [("input", tensor([None, int(metadata["params"]["columns"])]))]
    return onnx_converted(
        stored.name,
        "skl2onnx",
        lambda: skl2onnx.convert_sklearn(pipeline, initial_types=inputs, options=options),
        "skops's format (sqlml export MODEL FILE.skops)",
    )
