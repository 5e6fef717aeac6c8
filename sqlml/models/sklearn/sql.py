"""A scikit-learn model compiled into portable SQL, read from its loaded pipeline (the
family's ``load``: skops with the allow-list), with numpy only.

The pipeline's imputer becomes ``COALESCE(feature, statistic)``: a NULL feature is the
training rows' mean, as in TO PREDICT. Then, by estimator:

- linear regression: the intercept plus each coefficient times its feature;
- logistic regression: the same margin per class, then scikit-learn's ``predict_proba``
  (the logistic of the margin with two classes, the softmax of the margins with more), the
  class of the greatest margin;
- random forests: each tree a nested ``CASE`` (left where the feature, as the float32
  scikit-learn's trees read, is at most the split's threshold), its leaves averaged over the
  trees as scikit-learn does (each leaf's class fractions for a classifier, the class the
  greatest average, the first on ties);
- k-means: the nearest centre, and each cluster's soft assignment (Student's t kernel of the
  distance, as TO PREDICT's probabilities).

The others (the outlier detectors) are refused with a :class:`ModelError`.
"""

from __future__ import annotations

import math
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
MAX_DEPTH = 200  # of a compiled tree (the databases parse nested CASEs recursively)

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
            leaves = [tree.tree_.value[:, 0, 0] for tree in trees]
            value = _average(trees, leaves, features)
            return CompiledModel(columns, value, {}, [_NULL_NOTE, _TREE_NOTE])
        value, scores = _forest_classes(model, trees, features, classes)
        return CompiledModel(columns, value, scores, [_NULL_NOTE, _TREE_NOTE])
    except (AttributeError, TypeError, ValueError, IndexError) as error:
        raise skops_error(f"its state is malformed ({type(error).__name__}: {error})") from None


def _imputed(columns: list[str], pipeline: Any) -> list[exp.Expression]:
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
        exp.Coalesce(this=compiled.feature(column), expressions=[number(float(statistic))])
        for column, statistic in zip(columns, statistics, strict=True)
    ]


def _margins(model: Any, features: list[exp.Expression]) -> list[exp.Expression]:
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
                    exp.Mul(this=feature.copy(), expression=number(float(weight)))
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
    model: Any, features: list[exp.Expression], classes: list[Any]
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
    model: Any, features: list[exp.Expression], classes: list[Any]
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
                    this=exp.Paren(this=exp.Sub(this=x.copy(), expression=number(float(c)))),
                    expression=exp.Literal.number(2),
                )
                for x, c in zip(features, center, strict=True)
            ]
        )
        for center in centers
    ]
    nearest = argmax([exp.Neg(this=exp.Paren(this=d.copy())) for d in distances], classes)
    kernels = [
        exp.Div(
            this=exp.Literal.number(1),
            expression=exp.Paren(this=exp.Add(this=exp.Literal.number(1), expression=d)),
        )
        for d in distances
    ]
    scores = {
        str(cluster): exp.Div(
            this=kernel, expression=exp.Paren(this=total([k.copy() for k in kernels]))
        )
        for cluster, kernel in zip(classes, kernels, strict=True)
    }
    return nearest, scores


def _forest_classes(
    model: Any, trees: list[Any], features: list[exp.Expression], classes: list[Any]
) -> tuple[exp.Expression, dict[str, exp.Expression]]:
    """Each class's probability, its trees' leaf fractions averaged (scikit-learn's
    ``predict_proba``); the class of the greatest."""
    found = _found(model, classes)
    fractions = []
    for tree in trees:
        value = np.asarray(tree.tree_.value, dtype=np.float64)[:, 0, : len(found)]
        normalizer = value.sum(axis=1)[:, np.newaxis]
        normalizer[normalizer == 0.0] = 1.0
        fractions.append(value / normalizer)  # as a tree's predict_proba
    probabilities = [
        _average(trees, [leaves[:, j] for leaves in fractions], features) for j in range(len(found))
    ]
    chosen = argmax([p.copy() for p in probabilities], [classes[i] for i in found])
    return chosen, _scores(classes, found, probabilities)


def _average(
    trees: list[Any], leaves: list[np.ndarray], features: list[exp.Expression]
) -> exp.Expression:
    """The trees' values (each tree's leaf values ``leaves``) summed in order, divided by
    their number."""
    if not trees:
        raise skops_error("its forest has no trees")
    summed = total(
        [_tree(tree.tree_, values, features) for tree, values in zip(trees, leaves, strict=True)]
    )
    return exp.Div(this=exp.Paren(this=summed), expression=number(float(len(trees))))


Node: TypeAlias = float | tuple[int, float, "Node", "Node"]  # a leaf's value, or a split


def _tree(state: Any, values: np.ndarray, features: list[exp.Expression]) -> exp.Expression:
    """One tree as a nested ``CASE`` giving each leaf's value; a split whose sides give the
    same value everywhere is that value (a feature is never NULL here)."""
    left, right = state.children_left, state.children_right
    feature_of, thresholds = state.feature, state.threshold

    def node(i: int, depth: int) -> Node:
        if left[i] == -1:
            return float(values[i])
        if depth >= MAX_DEPTH:
            raise ModelError(
                f"a tree of the forest is deeper than {MAX_DEPTH} splits, more than sqlml "
                "compiles into SQL",
                hint="train it with a smaller model.max_depth, or score it with TO PREDICT",
            )
        low, high = node(int(left[i]), depth + 1), node(int(right[i]), depth + 1)
        if low == high:
            return low
        return (int(feature_of[i]), float(thresholds[i]), low, high)

    def sql(tree: Node) -> exp.Expression:
        if isinstance(tree, float):
            return number(tree)
        feature, threshold, low, high = tree
        goes_left = _at_most(features[feature], threshold)
        return exp.Case(ifs=[exp.If(this=goes_left, true=sql(low))], default=sql(high))

    return sql(node(0, 0))


def _at_most(x: exp.Expression, threshold: float) -> exp.Expression:
    """Whether the double ``x`` as a float32 (rounded to nearest, ties to even) is at most
    ``threshold`` (a double), as scikit-learn's trees compare: whether ``x`` rounds to at
    most the greatest float32 not above the threshold, ``low``, that is whether it is below
    the midpoint between ``low`` and the float32 above it (or at it, when the tie rounds to
    ``low``)."""
    if not math.isfinite(threshold):
        raise skops_error("a tree of its forest splits at a threshold that is not a number")
    low = np.float32(threshold)
    if float(low) > threshold or math.isinf(low):
        low = np.nextafter(np.float32(low), np.float32(-np.inf))
    if math.isinf(low):  # below every float32 that TO PREDICT reads
        return exp.false()
    high = np.nextafter(low, np.float32(np.inf))
    if math.isinf(high):  # the greatest float32: beyond it, values round to infinity
        step = float(low) - float(np.nextafter(low, np.float32(0)))
        middle = float(low) + step / 2
    else:
        middle = (float(low) + float(high)) / 2  # exact in a double
    even = int(np.array(low, dtype=np.float32).view(np.uint32)) % 2 == 0  # ties go to it
    compare = exp.LTE if even else exp.LT
    return compare(this=x.copy(), expression=number(middle))
