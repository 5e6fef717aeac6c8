"""An XGBoost model compiled into portable SQL, read from its stored document (no XGBoost).

Its features are the columns of the matrix TO PREDICT makes
(:mod:`sqlml.models.compiled_features`: a category's id for trees, one-hot for gblinear).
Trees (gbtree, dart) become nested ``CASE`` expressions following the model: a split sends
a row left when its feature, as the float32 XGBoost reads, is below the split's threshold,
and a NULL the split's default way; a leaf gives its value (times its tree's weight, for
dart). A linear booster (gblinear) becomes a sum of products, a NULL feature adding nothing.
Each output's margin is its trees (or products) summed with the model's intercept
(``base_score``), then the objective's link: the class of the greatest margin (the label's
value), each class's probability (logistic or softmax), or the regression's value.

Exactness: the SQL compares a feature, as a double, with the midpoint between the float32
threshold and the float32 below it (equal to it when rounding to nearest-even would round
the value down), which is exactly XGBoost's ``float32(x) < threshold`` for every double, so
rows take XGBoost's paths. XGBoost sums the leaves in float32 and the SQL in the database's
arithmetic (double, or exact decimals for literals), so margins differ by float32 rounding:
about 1e-7 relative per tree, and a class whose margin is within it of another's (or a
binary margin within it of 0) may differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from sqlml.errors import ModelError
from sqlml.models import compiled, compiled_features
from sqlml.models.checks import TAMPERED_HINT
from sqlml.models.compiled import NOT_COMPILED_HINT, argmax, class_value, number, total
from sqlml.models.compiled_features import Input
from sqlml.models.interface import CompiledModel
from sqlml.models.xgboost.checks import xgboost_document

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel

_IDENTITY = ("reg:squarederror", "reg:pseudohubererror", "reg:absoluteerror")
_CLASSES = ("binary:logistic", "binary:logitraw", "binary:hinge", "multi:softprob", "multi:softmax")
_NOTES = [
    "XGBoost computes in float32: rows follow its trees' paths exactly, and its margins, "
    "summed here in the database's arithmetic, differ from XGBoost's by float32 rounding "
    "(about 1e-7 relative per tree); a class whose margin ties another's within that may "
    "differ.",
    "A NULL feature is a missing value, as in TO PREDICT.",
]


def compile_model(stored: StoredModel) -> CompiledModel:
    """The stored model (checked by the store as it loaded it) as SQL, or a
    :class:`ModelError` saying what is not compiled."""
    metadata = stored.metadata
    inputs = compiled_features.matrix(
        stored, one_hot=metadata["params"].get("booster") == "gblinear"
    )
    learner = xgboost_document(stored.data)["learner"]
    width = int(learner["learner_model_param"]["num_feature"])
    if width != len(inputs.values):
        raise ModelError(
            f"the stored XGBoost model takes {width:,} features, but its feature columns "
            f"make {len(inputs.values):,}",
            hint=TAMPERED_HINT,
        )
    objective = learner["objective"]["name"]
    if objective not in _IDENTITY + _CLASSES:
        raise ModelError(
            f"model {stored.name} cannot be compiled into SQL: its XGBoost objective "
            f"{objective} is not compiled yet (only {', '.join(_IDENTITY + _CLASSES)})",
            hint=NOT_COMPILED_HINT,
        )
    outputs = max(int(learner["learner_model_param"]["num_class"]), 1)
    bases = _intercepts(learner["learner_model_param"]["base_score"], outputs, objective)
    booster = learner["gradient_booster"]
    if booster["name"] == "gblinear":
        margins = _linear(booster["model"], inputs.values, outputs)
        bases = bases[:1] * outputs  # XGBoost's linear booster adds the first to each output
    else:
        trees = booster["gbtree"]["model"] if booster["name"] == "dart" else booster["model"]
        weights = booster.get("weight_drop")
        margins = _trees(trees, inputs.inputs, outputs, weights)
    margins = [total([*terms, number(base)]) for terms, base in zip(margins, bases, strict=True)]
    classes = metadata["labels"]["classes"]
    value, scores = _link(objective, margins, classes)
    return CompiledModel(inputs.columns, value, scores, _NOTES)


def _intercepts(text: str, outputs: int, objective: str) -> list[float]:
    """Each output's intercept as a margin: XGBoost's ``base_score`` (a number, or a list of
    one or one per output), for a logistic objective a probability turned into a log-odds in
    float32, as XGBoost does."""
    parts = text[1:-1].split(",") if text.startswith("[") else [text]
    values = [np.float32(float(part)) for part in parts]
    values = values * outputs if len(values) == 1 else values
    if objective == "binary:logistic":
        one = np.float32(1)
        values = [-np.log(one / value - one, dtype=np.float32) for value in values]
    return [float(value) for value in values]


def _linear(
    model: dict[str, Any], features: list[exp.Expression], outputs: int
) -> list[list[exp.Expression]]:
    """Each output's products (a NULL feature adds 0) and its bias."""
    weights = np.asarray(model["weights"], dtype=np.float32).reshape(len(features) + 1, outputs)
    margins = []
    for output in range(outputs):
        terms: list[exp.Expression] = [
            exp.Coalesce(
                this=exp.Mul(this=feature.copy(), expression=number(float(weight))),
                expressions=[exp.Literal.number(0)],
            )
            for feature, weight in zip(features, weights[:-1, output], strict=True)
            if weight != 0
        ]
        margins.append([*terms, number(float(weights[-1, output]))])
    return margins


def _trees(
    model: dict[str, Any],
    features: list[Input],
    outputs: int,
    weights: Sequence[float] | None,
) -> list[list[exp.Expression]]:
    """Each output's trees, a ``CASE`` each."""
    margins: list[list[exp.Expression]] = [[] for _ in range(outputs)]
    for index, (tree, output) in enumerate(zip(model["trees"], model["tree_info"], strict=True)):
        weight = np.float32(1 if weights is None else weights[index])
        margins[int(output)].append(_tree(tree, features, weight))
    return [terms or [exp.Literal.number(0)] for terms in margins]


def _tree(tree: dict[str, Any], features: list[Input], weight: np.float32) -> exp.Expression:
    left = np.asarray(tree["left_children"])
    right = np.asarray(tree["right_children"])
    feature_of = np.asarray(tree["split_indices"])
    conditions = np.asarray(tree["split_conditions"], dtype=np.float32)
    default_left = np.asarray(tree["default_left"])

    def node(i: int) -> exp.Expression:
        if left[i] == -1:
            return number(float(conditions[i] * weight))
        x = features[int(feature_of[i])]
        goes_left = x.below(conditions[i])
        if default_left[i]:
            goes_left = exp.or_(x.missing.copy(), goes_left)
        return exp.Case(
            ifs=[exp.If(this=goes_left, true=node(int(left[i])))], default=node(int(right[i]))
        )

    return node(0)


def _link(
    objective: str, margins: list[exp.Expression], classes: list[Any]
) -> tuple[exp.Expression, dict[str, exp.Expression]]:
    """What TO PREDICT writes, and each class's probability (for the objectives that give
    them)."""
    if objective in _IDENTITY:
        return margins[0], {}
    names = [str(c) for c in classes]
    if objective.startswith("multi:"):
        chosen = argmax([m.copy() for m in margins], classes)
        if objective == "multi:softmax":
            return chosen, {}
        return chosen, dict(zip(names, compiled.softmax(margins), strict=True))
    margin = margins[0]
    chosen = exp.Case(
        ifs=[
            exp.If(
                this=exp.GT(this=margin.copy(), expression=exp.Literal.number(0)),
                true=class_value(classes[1]),
            )
        ],
        default=class_value(classes[0]),
    )
    if objective == "binary:hinge":
        return chosen, {}
    probability = compiled.sigmoid(margin)
    complement = exp.Sub(this=exp.Literal.number(1), expression=probability.copy())
    return chosen, {names[0]: complement, names[1]: probability}
