"""XGBoost models, stored as UBJSON (XGBoost's own format: loading runs no code).

XGBoost is imported here only, when an XGBoost model is trained or used.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import xgboost as xgb

from sqlml import imports, ir
from sqlml.errors import ModelError
from sqlml.models.checks import TAMPERED_HINT
from sqlml.models.interface import Imported, onnx_converted
from sqlml.models.metadata import MAX_SIZE
from sqlml.models.store import StoredModel
from sqlml.models.xgboost import pages
from sqlml.models.xgboost.checks import not_xgboost, xgboost_document
from sqlml.models.xgboost.structure import Damaged, check_model
from sqlml.runtime.cancel import Token
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays, check_column_types, max_width
from sqlml.runtime.labels import LabelEncoding, one_query
from sqlml.runtime.spool import Page, Spool

CONTRIBUTION_BATCH = 4096  # rows whose SHAP contributions are computed at a time


def booster_params(labels: LabelEncoding, attributes: dict[str, Any]) -> dict[str, Any]:
    """XGBoost parameters from the WITH attributes, with the objective settled."""
    params = {
        key: value
        for key, value in attributes.items()
        if not key.startswith(("train.", "validation.")) and value is not None
    }
    n_classes = len(labels.classes)
    objective = params.get("objective")
    if labels.task == "regressor":
        params.setdefault("objective", "reg:squarederror")
    elif objective is None:
        params["objective"] = "binary:logistic" if n_classes == 2 else "multi:softprob"
    elif objective.startswith("binary:") and n_classes > 2:
        raise ModelError(
            f"objective {objective} takes two classes, but the label has {n_classes}",
            hint="use objective = 'multi:softprob'",
        )
    if params["objective"].startswith("multi:"):
        given = params.get("num_class", n_classes)
        if given < n_classes:
            raise ModelError(
                f"num_class is {given}, but the label has {n_classes} classes",
                hint=f"set num_class = {n_classes} or leave it out",
            )
        params["num_class"] = given
    else:
        params.pop("num_class", None)
    params["verbosity"] = 0
    return params


def train(
    context: Context,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
    groups: np.ndarray | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Boost ``train.num_boost_round`` rounds, from scratch or after those of ``base``
    (checking ``context``'s token and reporting to its reporter after each round).

    Rankers (rank:* objectives) learn the order of the rows within each query: ``groups``
    holds the query id of each row.
    """
    params = _params(labels, attributes, base)
    if base is not None:
        check_column_types(features, base.metadata)
    x = _matrix(features, params)[0]
    if params["objective"].startswith("rank:"):
        groups = one_query(len(y)) if groups is None else groups
        order = np.argsort(groups, kind="stable")  # XGBoost takes each query's rows together
        dtrain = _training_matrix(params, x[order], label=y[order], qid=groups[order])
    elif groups is not None:
        raise ModelError(
            f"train.group_column is for ranking, but the objective is {params['objective']}",
            hint="remove train.group_column",
        )
    else:
        dtrain = _training_matrix(params, x, label=y)
    try:
        booster, metrics = boost(context, params, dtrain, attributes["train.num_boost_round"], base)
    except xgb.core.XGBoostError as error:
        raise ModelError(f"XGBoost: {_reason(error)}", hint=_hint(params)) from None
    return bytes(booster.save_raw(raw_format="ubj")), _details(params, metrics, features)


def _details(
    params: dict[str, Any], metrics: dict[str, float], features: FeatureArrays
) -> dict[str, Any]:
    """What a training stores besides the model: its parameters, metrics and the types of
    the columns its features read."""
    return {"params": params, "metrics": metrics, "column_types": features.column_types}


def _check_converged(metrics: dict[str, float]) -> dict[str, float]:
    """``metrics``; a :class:`ModelError` if one is NaN or infinite: the training diverged
    (or its values overflow), and the model is not saved."""
    bad = {name: value for name, value in metrics.items() if not math.isfinite(value)}
    if bad:
        shown = ", ".join(f"{name} = {value}" for name, value in bad.items())
        raise ModelError(
            f"the training diverged: {shown}; the model is not saved",
            hint="lower eta (the learning rate), or scale the LABEL values down",
        )
    return metrics


def _params(
    labels: LabelEncoding, attributes: dict[str, Any], base: StoredModel | None
) -> dict[str, Any]:
    """The booster's parameters; continuing ``base``, its objective."""
    if base is not None:
        kept = {key: base.metadata["params"].get(key) for key in ("objective", "num_class")}
        attributes = {**attributes, **kept}
    return booster_params(labels, attributes)


def train_batches(
    context: Context,
    batches: Callable[[], Iterator[tuple[FeatureArrays, np.ndarray]]],
    sample: FeatureArrays,
    sample_y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
) -> tuple[bytes, dict[str, Any]]:
    """Boost like :func:`train`, on training rows that ``batches()`` yields pass after pass
    (external memory: the first pass's pages and XGBoost's cache files in a temporary
    folder)."""
    params = _params(labels, attributes, base)
    if base is not None:
        check_column_types(sample, base.metadata)
    one_hot = params.get("booster") == "gblinear"
    if one_hot and params.get("updater") == "shotgun":
        raise ModelError(
            "XGBoost's shotgun updater learns from the first batch of external memory only",
            hint="add updater = 'coord_descent', or leave out train.external_memory",
        )
    with pages.folder() as folder:
        rows = _Batches(batches, one_hot, folder, context.token)
        try:
            if params.get("tree_method") == "hist" and not one_hot:
                dtrain = xgb.ExtMemQuantileDMatrix(rows)
            else:
                dtrain = xgb.DMatrix(rows)
            rounds = attributes["train.num_boost_round"]
            booster, metrics = boost(context, params, dtrain, rounds, base)
        except xgb.core.XGBoostError as error:
            raise ModelError(f"XGBoost: {_reason(error)}", hint=_hint(params)) from None
        del dtrain  # its cache files, before their folder goes
    return bytes(booster.save_raw(raw_format="ubj")), _details(params, metrics, sample)


class _Batches(xgb.DataIter):
    """Passes over training batches, for XGBoost's external memory: the first reads
    ``batches()`` and keeps its pages in ``folder`` (:class:`Spool`), the others read them
    from there; each page checks ``token``, and in the first pass the room XGBoost's pages
    need in ``folder`` (:class:`pages.Room`)."""

    def __init__(
        self,
        batches: Callable[[], Iterator[tuple[FeatureArrays, np.ndarray]]],
        one_hot: bool,
        folder: Path,
        token: Token,
    ) -> None:
        super().__init__(cache_prefix=str(folder / "cache"), release_data=True)
        self._batches = batches
        self._one_hot = one_hot
        self._token = token
        self._spool = Spool(folder / "pages")
        self._room = pages.Room(folder)
        self._pass: Iterator[Page] | None = None
        self._passes = 0

    def next(self, input_data: Callable[..., None]) -> bool:
        if self._pass is None:
            self._pass = self._spool.passed(self._pages())
        page = next(self._pass, None)
        if page is None:
            return False
        self._token.check()
        arrays, y = page
        if self._passes == 0:  # XGBoost writes its pages in the first pass
            self._room.check(arrays["x"])
        input_data(data=arrays["x"], label=y)
        return True

    def reset(self) -> None:
        if self._pass is not None:
            self._pass.close()  # a pass stopped early leaves the connection usable
            self._passes += 1
        self._pass = None

    def _pages(self) -> Iterator[Page]:
        for features, y in self._batches():
            yield {"x": features.matrix(self._one_hot)[0]}, y


def _training_matrix(params: dict[str, Any], x: np.ndarray, **meta: np.ndarray) -> xgb.DMatrix:
    """The training rows for XGBoost. Trees built by ``hist`` get a QuantileDMatrix: it holds
    each value's histogram bin (one byte) instead of a copy of the floats, and trains the
    same trees."""
    if params.get("tree_method") == "hist" and params.get("booster") != "gblinear":
        return xgb.QuantileDMatrix(x, **meta)
    return xgb.DMatrix(x, **meta)


def boost(
    context: Context,
    params: dict[str, Any],
    dtrain: xgb.DMatrix,
    rounds: int,
    base: StoredModel | None,
) -> tuple[xgb.Booster, dict[str, float]]:
    """``rounds`` (at least one) boosting rounds on ``dtrain``, after those of ``base`` if
    given, and the training metrics after the last; the statement (``context``) is checked
    for cancellation before each round.

    The booster's own update loop: ``xgb.train`` would evaluate an empty watch list after
    every round, which costs about a quarter of a second per 20 rounds of 1,000,000 rows.
    The progress display gets every round, the training metrics when they are due (at
    most every half second, and only while progress is shown) and, with the last round,
    the final ones.
    """
    model = None
    if base is not None:
        model = checked(base.data, base.metadata["params"])
        _check_width(model, dtrain.num_col())
    booster = xgb.Booster(params, [dtrain], model_file=model)
    start = booster.num_boosted_rounds()
    token, reporter = context.token, context.reporter
    last = start + rounds - 1
    with reporter.stage("training", total=rounds, unit="rounds"):
        for iteration in range(start, last + 1):
            token.check()
            booster.update(dtrain, iteration)
            due = iteration == last or reporter.metrics_due()
            metrics = _train_metrics(booster, dtrain) if due else {}
            reporter.advance(1, **metrics)
    return booster, metrics


def _train_metrics(booster: xgb.Booster, dtrain: xgb.DMatrix) -> dict[str, float]:
    """The training metrics after the last round, evaluated once (not after every round).

    XGBoost reports them as ``[0]\ttrain-<metric>:<value>...``.
    """
    fields = booster.eval(dtrain, "train").split("\t")[1:]
    return _check_converged(
        {
            f"train_{name.removeprefix('train-')}": float(value)
            for name, value in (field.rsplit(":", 1) for field in fields)
        }
    )


def _reason(error: Exception) -> str:
    """XGBoost's message without its time, source location and stack trace."""
    first = str(error).strip().splitlines()[0]
    return re.sub(r"^(\[[^\]]*\]\s*)?\S+:\d+:\s*(Check failed: [^:]*:\s*)?", "", first)


def _hint(params: dict[str, Any]) -> str:
    objective = params["objective"]
    if objective == "rank:ndcg":
        return "rank:ndcg takes relevance degrees: integers from 0 to 31"
    if objective == "rank:map":
        return "rank:map takes relevance 0 or 1"
    return f"check that the LABEL values suit objective {objective}"


def load(data: bytes) -> xgb.Booster:
    """A stored booster: XGBoost JSON or UBJSON only, which hold data, never code, checked
    (size, nesting) before XGBoost reads it."""
    xgboost_document(data)
    booster = xgb.Booster()
    try:
        booster.load_model(bytearray(data))
    except xgb.core.XGBoostError as error:
        raise not_xgboost(_reason(error) or "it cannot read it") from None
    return booster


def checked(data: bytes, params: dict[str, Any]) -> xgb.Booster:
    """The stored booster (:func:`load`), checked to be what ``params`` trained: its
    objective, booster, classes and one target. Reads XGBoost's configuration (a few
    numbers), never anything as large as the model's number of features."""
    booster = load(data)
    try:
        learner = json.loads(booster.save_config())["learner"]
    except xgb.core.XGBoostError as error:  # a parameter out of its range, as base_score
        raise not_xgboost(_reason(error)) from None
    found = learner["learner_model_param"]
    multi = params["objective"].startswith("multi:")
    expected = {
        "objective": params["objective"],
        "booster": params.get("booster", "gbtree"),
        "num_class": str(params["num_class"] if multi else 0),
        "num_target": "1",
    }
    actual = {
        "objective": learner["objective"]["name"],
        "booster": learner["gradient_booster"]["name"],
        "num_class": found["num_class"],
        "num_target": found["num_target"],
    }
    wrong = [key for key, value in expected.items() if actual[key] != value]
    if wrong:
        raise ModelError(
            "the stored XGBoost model does not match its metadata: it has "
            + ", ".join(f"{key} {actual[key]}, not {expected[key]}" for key in wrong),
            hint=TAMPERED_HINT,
        )
    return booster


def _check_width(booster: xgb.Booster, width: int) -> None:
    """A :class:`ModelError` unless the booster takes ``width`` features: the width of the
    matrix sqlml builds from the model's feature columns. Checked before XGBoost predicts,
    which allocates by its own number of features."""
    if booster.num_features() != width:
        raise ModelError(
            f"the stored XGBoost model takes {booster.num_features():,} features, but its "
            f"feature columns make {width:,}",
            hint=TAMPERED_HINT,
        )


ONE_THREAD_ROWS = 4096  # rows scored on one thread: OpenMP's start costs more than it gains


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """The stored model, loaded once and checked, as a function of features and a batch size
    that returns class probabilities (rows x classes) for classifiers, values for
    regressors; it checks ``context``'s token before each batch and reports the batch's rows
    to its reporter."""
    params = metadata["params"]
    booster = checked(data, params)
    # Trees predict in place, with no DMatrix made a batch (the same numbers; a dart
    # booster's and a linear one's differ or are not offered so).
    inplace = params.get("booster", "gbtree") == "gbtree"
    one_thread: list[xgb.Booster] = []  # a copy, made for the first few rows scored

    def score(features: FeatureArrays, batch_size: int) -> np.ndarray:
        check_column_types(features, metadata)
        x = _matrix(features, params)[0]
        _check_width(booster, x.shape[1])
        scoring = booster
        if len(x) <= ONE_THREAD_ROWS:  # a query's vector of rows: threads cost more
            if not one_thread:
                one_thread.append(booster.copy())
                one_thread[0].set_param({"nthread": 1})
            scoring = one_thread[0]
        parts = []
        for batch in context.batches(x, batch_size):
            parts.append(_predict(scoring, batch, inplace=inplace))
        return _scores(np.concatenate(parts) if parts else np.empty(0), len(x), params)

    return score


def _predict(
    booster: xgb.Booster, x: np.ndarray, inplace: bool = False, **options: bool
) -> np.ndarray:
    try:
        if inplace:
            return booster.inplace_predict(x)
        return booster.predict(xgb.DMatrix(x), **options)
    except xgb.core.XGBoostError as error:
        raise ModelError(f"XGBoost: {_reason(error)}", hint=TAMPERED_HINT) from None


def _scores(raw: np.ndarray, rows: int, params: dict[str, Any]) -> np.ndarray:
    """Class probabilities or values from the booster's raw predictions of ``rows`` rows."""
    objective = params["objective"]
    if objective == "multi:softprob":
        return raw.reshape(rows, -1)
    if objective == "binary:logitraw":
        raw = 1 / (1 + np.exp(-raw))
    if objective in ("binary:logistic", "binary:logitraw"):
        return np.column_stack([1 - raw, raw])
    if objective in ("multi:softmax", "binary:hinge"):
        return np.eye(params.get("num_class", 2))[raw.astype(np.int64)]
    return raw


def _matrix(features: FeatureArrays, params: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The features as numbers: category ids for trees, one-hot for a linear booster."""
    return features.matrix(one_hot=params.get("booster") == "gblinear")


def contributions(
    context: Context, data: bytes, features: FeatureArrays, metadata: dict[str, Any]
) -> np.ndarray:
    """SHAP contributions (rows x [classes x] features) of some rows, without the bias
    term, computed :data:`CONTRIBUTION_BATCH` rows at a time: ``context``'s token is
    checked before each batch, and its rows are reported to its reporter.

    A feature's contribution is the sum of those of its matrix columns.
    """
    booster = checked(data, metadata["params"])
    check_column_types(features, metadata)
    x, owners = _matrix(features, metadata["params"])
    _check_width(booster, x.shape[1])
    spread = np.eye(len(features.names), dtype=np.float32)[owners]  # matrix column -> feature
    parts = []
    for rows in context.batches(x, CONTRIBUTION_BATCH):  # TO EXPLAIN's SELECT returns rows
        parts.append(_predict(booster, rows, pred_contribs=True)[..., :-1] @ spread)
    return np.concatenate(parts)


def importances(
    data: bytes, features: FeatureArrays, metadata: dict[str, Any]
) -> dict[str, np.ndarray]:
    """XGBoost's own importance of each feature (its matrix columns summed): ``gain``, the
    total loss reduction of its splits, and ``fscore``, how many splits use it."""
    if metadata["params"].get("booster") == "gblinear":
        raise ModelError(
            f"XGBoostExplainer ranks features by the gain of their splits, and "
            f"{metadata['estimator']} is a linear model: it has no splits",
            hint="explain it with TreeExplainer (its SHAP values, exact for a linear model) "
            "or PermutationExplainer",
        )
    booster = checked(data, metadata["params"])
    check_column_types(features, metadata)
    x, owners = _matrix(features, metadata["params"])
    _check_width(booster, x.shape[1])
    names = booster.feature_names or [f"f{i}" for i in range(x.shape[1])]
    column = {name: i for i, name in enumerate(names)}
    spread = np.eye(len(features.names))[owners]  # matrix column -> its feature
    result = {}
    for name, kind in (("gain", "total_gain"), ("fscore", "weight")):
        scores = np.zeros(x.shape[1])
        for key, score in booster.get_score(importance_type=kind).items():
            scores[column[key]] = score
        result[name] = scores @ spread
    return result


def exporter(stored: StoredModel) -> Callable[[Path], Any]:
    """The stored booster's ``save_model`` (JSON or UBJSON, by the file's extension), the
    booster checked as for scoring, and its number of features against the most its feature
    columns can make."""
    params = stored.metadata["params"]
    booster = checked(stored.data, params)
    features = [ir.FeatureColumn.from_dict(f) for f in stored.metadata["features"]]
    most = max_width(features)
    if booster.num_features() > most:
        raise ModelError(
            f"the stored XGBoost model takes {booster.num_features():,} features, but its "
            f"feature columns make at most {most:,}",
            hint=TAMPERED_HINT,
        )
    return booster.save_model


def import_model(data: bytes) -> Imported:
    """A model XGBoost saved (``save_model``, JSON or UBJSON), checked as a stored model is
    (:mod:`.structure`) before XGBoost reads it, and stored as UBJSON without its feature
    names (COLUMN names its inputs). A classifier's classes are 0 to n-1: XGBoost keeps
    none."""
    document = xgboost_document(data, _not_imported)
    names = None
    try:
        learner = document["learner"]
        names = learner.pop("feature_names", None) or None
        learner.pop("feature_types", None)
        objective = learner["objective"]["name"]
        booster_name = learner["gradient_booster"]["name"]
        classes = int(learner["learner_model_param"]["num_class"])
    except (KeyError, TypeError, ValueError):
        raise _not_imported("it does not hold an XGBoost learner") from None
    params: dict[str, Any] = {"objective": objective, "booster": booster_name}
    if isinstance(objective, str) and objective.startswith("multi:"):
        params["num_class"] = classes
    try:
        check_model(document, params, MAX_SIZE)
    except Damaged as damage:
        raise _not_imported(str(damage)) from None
    if names is not None and not all(isinstance(name, str) for name in names):
        raise _not_imported("its feature_names are not text")
    booster = load(data)
    inputs = booster.num_features()
    booster.feature_names = None
    booster.feature_types = None
    classifying = objective.startswith(("binary:", "multi:"))
    count = classes if objective.startswith("multi:") else 2
    return Imported(
        data=bytes(booster.save_raw("ubj")),
        estimator=f"xgboost.{booster_name}",
        params=params,
        task="classifier" if classifying else "regressor",
        classes=list(range(count)) if classifying else [],
        inputs=inputs,
        names=list(names) if names else None,
    )


def _not_imported(why: str) -> ModelError:
    return ModelError(
        f"the XGBoost model file is not imported: {why}",
        hint="save the model with XGBoost's save_model to a .json or .ubj file",
    )


def to_onnx(stored: StoredModel) -> bytes:
    """The stored booster (checked as for scoring) converted by onnxmltools: a float input
    ``input`` of the model's features; a classifier's outputs are the class id ``label``
    and ``probabilities``."""
    onnxmltools = imports.load("onnxmltools")
    tensor = imports.load("onnxmltools.convert.common.data_types").FloatTensorType
    booster = checked(stored.data, stored.metadata["params"])
    inputs = [("input", tensor([None, booster.num_features()]))]
    return onnx_converted(
        stored.name,
        "onnxmltools",
        lambda: onnxmltools.convert_xgboost(booster, initial_types=inputs),
        "XGBoost's format (sqlml export MODEL FILE.json)",
    )
