"""A scikit-learn model compiled into portable SQL, read from its loaded pipeline (the
family's ``load``: skops with the allow-list), with numpy only.

The pipeline's imputer becomes ``COALESCE(feature, statistic)``: a NULL feature is the
training rows' mean, as in TO PREDICT. Then, by estimator:

- linear regression: the intercept plus each coefficient times its feature;
- logistic regression: the same margin per class, then scikit-learn's ``predict_proba``
  (the logistic of the margin with two classes, the softmax of the margins with more), the
  class of the greatest margin;
- random forests: each tree nested ``CASE`` expressions (left where the feature, as the
  float32 scikit-learn's trees read, is at most the split's threshold), its leaves averaged
  over the trees as scikit-learn does (a classifier's class fractions); a classifier's class
  is the one of the greatest average, the first on ties, compared a pair of classes at a time
  (one forest of the differences of their fractions, at least 0 where the first wins);
- k-means: the nearest centre, and each cluster's soft assignment (Student's t kernel of the
  distance, as TO PREDICT's probabilities).

The others (the outlier detectors), and forests too large for SQL (:data:`MAX_SPLITS`), are
refused with a :class:`ModelError`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from sqlglot import exp

from sqlml.errors import ModelError
from sqlml.models import compiled
from sqlml.models.compiled import argmax, class_value, number, total
from sqlml.models.interface import CompiledModel
from sqlml.models.sklearn.checks import skops_error
from sqlml.models.sklearn.estimators import CLUSTERING

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel

FOREST_CLASSIFIER = "sklearn.ensemble.RandomForestClassifier"
FOREST_REGRESSOR = "sklearn.ensemble.RandomForestRegressor"
LOGISTIC = "sklearn.linear_model.LogisticRegression"
LINEAR = "sklearn.linear_model.LinearRegression"
COMPILED = (FOREST_CLASSIFIER, FOREST_REGRESSOR, LOGISTIC, LINEAR, CLUSTERING)
Feature: TypeAlias = Callable[[], exp.Expression]  # a feature's SQL, made anew for each use
MAX_DEPTH = 200  # of a compiled tree
MAX_SPLITS = 100_000  # of a forest's trees, times the sums they are written in
MAX_NESTING = 12  # CASE expressions inside each other (SQLite's parser takes about 17)

_NULL_NOTE = "A NULL feature is the training rows' mean (the model's imputer), as in TO PREDICT."
_DOUBLE_NOTE = (
    "TO PREDICT reads the features as float32, the SQL as doubles: values and probabilities "
    "differ by float32 rounding (about 1e-7 relative of each term), and a class whose score "
    "ties another's within that may differ."
)
_TREE_NOTE = (
    "Rows follow scikit-learn's trees exactly (a split compares the feature as the float32 "
    "the trees read); the leaves are averaged in the database's arithmetic (doubles, or exact "
    "decimals), so averages may differ from scikit-learn's in the last digits, and a class "
    "tied with another within that may differ."
)


def check_compiled(stored: StoredModel) -> None:
    """A :class:`ModelError` unless ``stored``'s estimator is one this module compiles."""
    estimator = stored.metadata["estimator"]
    if estimator not in COMPILED:
        raise ModelError(
            f"model {stored.name} cannot be compiled into SQL: {estimator} models are not "
            f"compiled (scikit-learn's compiled: {', '.join(COMPILED)})",
            hint="score it with TO PREDICT, or export it in its library's format "
            "(sqlml export MODEL FILE.skops)",
        )


def compile_model(stored: StoredModel, pipeline: Any) -> CompiledModel:
    """The stored model, its ``pipeline`` loaded by the family (checked), as SQL; a
    :class:`ModelError` saying what is not compiled."""
    check_compiled(stored)
    columns = compiled.numeric_columns(stored)
    features = _imputed(columns, pipeline)
    model = pipeline.steps[-1][1]
    estimator = stored.metadata["estimator"]
    classes = stored.metadata["labels"]["classes"]
    try:
        if estimator == LINEAR:
            value = _margins(model, features)[0]
            return CompiledModel(columns, value, {}, [_NULL_NOTE, _DOUBLE_NOTE])
        if estimator == CLUSTERING:
            value, scores = _kmeans(model, features, classes)
            return CompiledModel(columns, value, scores, [_NULL_NOTE, _DOUBLE_NOTE])
        if estimator == LOGISTIC:
            value, scores = _logistic(model, features, classes)
            return CompiledModel(columns, value, scores, [_NULL_NOTE, _DOUBLE_NOTE])
        trees = list(model.estimators_)
        if estimator == FOREST_REGRESSOR:
            forest = _Forest(stored.name, trees, features, sums=1)
            value = forest.average([t.tree_.value[:, 0, 0] for t in trees])
            return CompiledModel(columns, value, {}, [_NULL_NOTE, _TREE_NOTE])
        value, scores = _forest_classes(stored.name, model, trees, features, classes)
        return CompiledModel(columns, value, scores, [_NULL_NOTE, _TREE_NOTE])
    except (AttributeError, TypeError, ValueError, IndexError) as error:
        raise skops_error(f"its state is malformed ({type(error).__name__}: {error})") from None


def _imputed(columns: list[str], pipeline: Any) -> list[Feature]:
    """Each feature column read as a double, NULL replaced by the imputer's statistic."""
    steps = pipeline.steps
    imputer = steps[0][1] if len(steps) == 2 else None
    statistics = np.asarray(getattr(imputer, "statistics_", ()), dtype=np.float64)
    if (
        type(imputer).__name__ != "SimpleImputer"
        or imputer.add_indicator
        or not (isinstance(imputer.missing_values, float) and math.isnan(imputer.missing_values))
        or statistics.shape != (len(columns),)
        or not np.isfinite(statistics).all()
    ):
        raise skops_error(
            "its pipeline does not impute each of its feature columns before the estimator"
        )
    return [
        functools.partial(_feature, column, float(statistic))
        for column, statistic in zip(columns, statistics, strict=True)
    ]


def _feature(column: str, statistic: float) -> exp.Expression:
    return exp.Coalesce(this=compiled.feature(column), expressions=[number(statistic)])


def _margins(model: Any, features: list[Feature]) -> list[exp.Expression]:
    """A linear model's outputs: each coefficient times its feature, plus the intercept."""
    coefficients = np.asarray(model.coef_, dtype=np.float64)
    coefficients = coefficients.reshape(-1, len(features))
    intercepts = np.broadcast_to(
        np.asarray(model.intercept_, dtype=np.float64), coefficients.shape[:1]
    )
    return [
        total(
            [
                *(
                    exp.Mul(this=feature(), expression=number(float(weight)))
                    for feature, weight in zip(features, row, strict=True)
                    if weight != 0
                ),
                number(float(intercept)),
            ]
        )
        for row, intercept in zip(coefficients, intercepts, strict=True)
    ]


def _found(model: Any, classes: list[Any]) -> list[int]:
    """The indices among the label's classes of those the estimator was fitted on."""
    found = [int(c) for c in np.asarray(model.classes_)]
    if not found or min(found) < 0 or max(found) >= len(classes):
        raise skops_error(f"its classes do not fit the {len(classes)} of its metadata")
    return found


def _scores(
    classes: list[Any], found: list[int], probabilities: list[exp.Expression]
) -> dict[str, exp.Expression]:
    """Each class's probability: the estimator's for the classes it was fitted on, 0 else."""
    by_index = dict(zip(found, probabilities, strict=True))
    return {
        str(value): by_index.get(index, exp.Literal.number(0))
        for index, value in enumerate(classes)
    }


def _logistic(
    model: Any, features: list[Feature], classes: list[Any]
) -> tuple[exp.Expression, dict[str, exp.Expression]]:
    """scikit-learn's ``predict_proba``: with two classes ``[1 - p, p]``, ``p`` the logistic
    of the margin; with more the softmax of the margins. The class of the greatest margin."""
    found = _found(model, classes)
    margins = _margins(model, features)
    if len(found) == 2 and len(margins) == 1:
        (margin,) = margins
        chosen = exp.Case(
            ifs=[
                exp.If(
                    this=exp.GT(this=margin.copy(), expression=exp.Literal.number(0)),
                    true=class_value(classes[found[1]]),
                )
            ],
            default=class_value(classes[found[0]]),
        )
        probability = compiled.sigmoid(margin)
        complement = exp.Sub(this=exp.Literal.number(1), expression=probability.copy())
        return chosen, _scores(classes, found, [complement, probability])
    if len(margins) != len(found):
        raise skops_error("its coefficients do not fit its classes")
    chosen = argmax([m.copy() for m in margins], [classes[i] for i in found])
    return chosen, _scores(classes, found, compiled.softmax(margins))


def _kmeans(
    model: Any, features: list[Feature], classes: list[Any]
) -> tuple[exp.Expression, dict[str, exp.Expression]]:
    """The nearest centre (the first on ties), and each cluster's ``1 / (1 + d²)``
    normalised over the clusters."""
    centers = np.asarray(model.cluster_centers_, dtype=np.float64)
    if centers.shape != (len(classes), len(features)):
        raise skops_error("its centres do not fit its clusters and features")
    distances = [
        total(
            [
                exp.Pow(
                    this=exp.Paren(this=exp.Sub(this=x(), expression=number(float(c)))),
                    expression=exp.Literal.number(2),
                )
                for x, c in zip(features, center, strict=True)
            ]
        )
        for center in centers
    ]
    return compiled.nearest(distances, classes)


def _forest_classes(
    name: str, model: Any, trees: list[Any], features: list[Feature], classes: list[Any]
) -> tuple[exp.Expression, dict[str, exp.Expression]]:
    """Each class's probability, its trees' leaf fractions averaged (scikit-learn's
    ``predict_proba``); the class of the greatest (the first on ties), compared a pair at a
    time as one forest of the differences of the pair's fractions (whose sum is at least 0
    where the first is at least the second)."""
    found = _found(model, classes)
    fractions = []
    for tree in trees:
        value = np.asarray(tree.tree_.value, dtype=np.float64)[:, 0, : len(found)]
        normalizer = value.sum(axis=1)[:, np.newaxis]
        normalizer[normalizer == 0.0] = 1.0
        fractions.append(value / normalizer)  # as a tree's predict_proba
    forest = _Forest(name, trees, features, sums=len(found) * (len(found) + 1) // 2)
    probabilities = [forest.average([f[:, j] for f in fractions]) for j in range(len(found))]
    ifs = [
        exp.If(
            this=_all(
                [
                    exp.GTE(
                        this=forest.total([f[:, i] - f[:, j] for f in fractions]),
                        expression=exp.Literal.number(0),
                    )
                    for j in range(i + 1, len(found))
                ]
            ),
            true=class_value(classes[found[i]]),
        )
        for i in range(len(found) - 1)
    ]
    last = class_value(classes[found[-1]])
    chosen = exp.Case(ifs=ifs, default=last) if ifs else last
    return chosen, _scores(classes, found, probabilities)


def _all(conditions: list[exp.Expression]) -> exp.Expression:
    """The conditions joined by AND (built as they are: no copies)."""
    result = conditions[0]
    for condition in conditions[1:]:
        result = exp.And(this=result, expression=condition)
    return result


# A leaf's value, or a split: its feature, midpoint and whether ties go left, then its sides.
Node: TypeAlias = float | tuple[int, float, bool, "Node", "Node"]


class _Forest:
    """Trees as SQL: each as nested ``CASE`` expressions giving a value per leaf."""

    def __init__(self, model: str, trees: list[Any], features: list[Feature], sums: int) -> None:
        """``sums``: how many times the trees are to be written (:data:`MAX_SPLITS`)."""
        if not trees:
            raise skops_error("its forest has no trees")
        self.model = model
        self.features = features
        self.count = len(trees)
        self.states = [tree.tree_ for tree in trees]
        splits = sum(int((state.children_left != -1).sum()) for state in self.states)
        if splits * sums > MAX_SPLITS:
            written = f", written {sums} times (each class, each pair of classes)" * (sums > 1)
            raise ModelError(
                f"model {model} cannot be compiled into SQL: its forest has {splits:,} splits"
                f"{written}, more than the {MAX_SPLITS:,} sqlml compiles (about "
                f"{MAX_SPLITS // 5_000} MB of SQL)",
                hint="train it with a smaller model.max_depth or fewer trees "
                "(model.n_estimators), or score it with TO PREDICT",
            )
        self.bounds = [_bounds(state.threshold) for state in self.states]

    def average(self, leaves: list[np.ndarray]) -> exp.Expression:
        """The trees' values (``leaves``: each tree's, by node) summed, divided by their
        number, as scikit-learn's forests average."""
        return exp.Div(
            this=exp.Paren(this=self.total(leaves)), expression=number(float(self.count))
        )

    def total(self, leaves: list[np.ndarray]) -> exp.Expression:
        """The trees' values summed, in pairs of pairs (a sum as deep as the logarithm of
        the trees: the databases bound an expression's depth)."""
        return total([self._tree(i, values) for i, values in enumerate(leaves)])

    def _tree(self, index: int, values: np.ndarray) -> exp.Expression:
        """One tree; a split whose sides give the same values is that value (a feature is
        never NULL here), and one no row takes its left side is its right."""
        state = self.states[index]
        left, right, feature_of = state.children_left, state.children_right, state.feature
        middles, ties_low, never = self.bounds[index]

        def node(i: int, depth: int) -> tuple[Node, int]:
            """The subtree at ``i``, and its depth."""
            if left[i] == -1:
                return float(values[i]), 0
            if never[i]:
                return node(int(right[i]), depth + 1)
            if depth >= MAX_DEPTH:
                raise ModelError(
                    f"model {self.model} cannot be compiled into SQL: a tree of its forest is "
                    f"deeper than {MAX_DEPTH} splits, more than sqlml compiles",
                    hint="train it with a smaller model.max_depth, or score it with TO PREDICT",
                )
            (low, below), (high, above) = (
                node(int(left[i]), depth + 1),
                node(int(right[i]), depth + 1),
            )
            if low == high:
                return low, below
            return (int(feature_of[i]), middles[i], ties_low[i], low, high), max(below, above) + 1

        tree, depth = node(0, 0)
        return _cases(tree, self.features, max(1, math.ceil(depth / MAX_NESTING)))


def _cases(tree: Node, features: list[Feature], levels: int) -> exp.Expression:
    """``tree`` as ``CASE`` expressions, each deciding ``levels`` levels of splits (SQLite's
    parser takes about 17 nested ``CASE``s): a ``WHEN`` for each subtree ``levels`` below
    (or leaf above it), left to right, whose condition is the splits it is left of on the way;
    the first that holds is the row's, as a row failing a split goes right, past the subtrees
    to its left."""
    if isinstance(tree, float):
        return number(tree)
    branches: list[tuple[list[tuple[int, float, bool]], Node]] = []

    def walk(node: Node, path: list[tuple[int, float, bool]], level: int) -> None:
        if isinstance(node, float) or level == levels:
            branches.append((path, node))
            return
        feature, middle, tie_low, low, high = node
        walk(low, [*path, (feature, middle, tie_low)], level + 1)
        walk(high, path, level + 1)

    def condition(feature: int, middle: float, tie_low: bool) -> exp.Expression:
        compare = exp.LTE if tie_low else exp.LT
        return compare(this=features[feature](), expression=number(middle))

    walk(tree, [], 0)
    ifs = [
        exp.If(this=_all([condition(*split) for split in path]), true=_cases(sub, features, levels))
        for path, sub in branches[:-1]
    ]
    return exp.Case(ifs=ifs, default=_cases(branches[-1][1], features, levels))


def _bounds(thresholds: np.ndarray) -> tuple[list[float], list[bool], list[bool]]:
    """For each split, how to ask whether a double ``x`` as a float32 (rounded to nearest,
    ties to even) is at most its threshold (a double), as scikit-learn's trees compare: ``x``
    rounds to at most ``low``, the greatest float32 not above the threshold, where it is below
    the midpoint between ``low`` and the float32 above it, or at it when that tie rounds to
    ``low`` (its last bit even); never where no float32 is at most the threshold. The
    midpoints (exact in a double), whether ties go left, and where no row goes left."""
    t = np.asarray(thresholds, dtype=np.float64)
    if not np.isfinite(t).all():
        raise skops_error("a tree of its forest splits at a threshold that is not a number")
    with np.errstate(over="ignore", invalid="ignore"):
        low = t.astype(np.float32)
        low = np.where(low.astype(np.float64) > t, np.nextafter(low, np.float32(-np.inf)), low)
        high = np.nextafter(low, np.float32(np.inf))
        below = np.nextafter(low, np.float32(-np.inf))
        # above the greatest float32, values round to infinity: half its step beyond it
        high64 = np.where(
            np.isinf(high), 2 * low.astype(np.float64) - below.astype(np.float64), high
        )
        middles = (low.astype(np.float64) + high64) / 2
    never = np.isinf(low)  # below every float32 TO PREDICT reads
    even = low.view(np.uint32) % 2 == 0
    return middles.tolist(), even.tolist(), never.tolist()
