"""A Keras network compiled into portable SQL: a chain of dense layers over plain numeric
features, each unit a sum of products of the previous layer's expressions.

What compiles is a network whose one input is the features' numbers (``numbers``: every
feature a plain NUMERIC column) and whose layers follow one another: the normalisation of
the numbers, ``Dense`` layers with the activations linear, relu, sigmoid, tanh or softmax,
``Activation`` of those, ``Dropout`` (nothing at inference), ``BatchNormalization`` (its
moving statistics, as at inference) and ``Rescaling`` (a regressor's output in the label's
units): DNNClassifier, DNNRegressor, LinearClassifier and LinearRegressor, and a user's
builder of those layers. Anything else is refused, naming it.

A unit repeats the SQL of each unit of the previous layer it reads, so the SQL grows as the
product of the layers' widths: each expression (a prediction, a class's probability) is
measured, exactly, in each dialect of sqlml's datasources as the layers are built, and a
network whose SQL would pass :data:`MAX_SQL_CHARS` is refused.

- relu is ``GREATEST(x, 0)`` (SQLite's ``MAX(x, 0)``; DuckDB's dialect repeats ``x`` in a
  ``CASE`` that keeps a NULL argument NULL); sigmoid ``1 / (1 + EXP(-x))``, tanh
  ``1 - 2 / (1 + EXP(2 * x))`` (MySQL has no ``TANH``), softmax ``1 / SUM(EXP(x_j - x_i))``,
  each reading ``x`` once. ``EXP`` beyond about 709 (below about -745 on PostgreSQL) is an
  error on PostgreSQL and MySQL: a unit that far out (features far outside the training
  rows) makes the query fail there rather than give a wrong value.
- A row with a NULL feature, which TO PREDICT refuses, gets NULL: every expression is
  ``CASE WHEN <a feature> IS NULL ... THEN NULL ELSE ... END``, so no NULL reaches the
  arithmetic (nor ``GREATEST``, whose NULLs the databases treat differently).
- Keras computes in float32, the SQL in doubles: the weights are written as the shortest
  decimals that read back as their float32 values, and results differ by float32 rounding
  (about 1e-7 relative per layer); a class whose score ties another's within it may differ.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from sqlml.errors import ModelError
from sqlml.models import compiled
from sqlml.models.compiled import number, total
from sqlml.models.interface import CompiledModel
from sqlml.plugins import DATASOURCES

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel


def dialects() -> list[str]:
    """sqlglot's names of the datasources' dialects, in which an expression is measured."""
    return list(dict.fromkeys(source.dialect for source in DATASOURCES.values()))


MAX_SQL_CHARS = 1_000_000  # of one expression (a prediction, a probability), in any dialect
_HINT = "score it with TO PREDICT, or export it in Keras's format (sqlml export MODEL FILE.keras)"
_ACTIVATIONS = ("linear", "relu", "sigmoid", "tanh", "softmax")
_SLOT = "sqlml_slot_"  # a placeholder: an unquoted column (the features' names are quoted)
_SLOTS = re.compile(rf"(?<![\w\"`]){_SLOT}(\d+)(?![\w\"`])")
_NOTES = [
    "Keras computes in float32, this SQL in doubles: results differ by float32 rounding "
    "(about 1e-7 relative per layer); a class whose score ties another's within it may "
    "differ.",
    "A row with a NULL feature, which TO PREDICT refuses, gets NULL.",
]

Build = Callable[[list[exp.Expression]], list[exp.Expression]]


class _Layer:
    """A layer's outputs: an expression per unit, and its length in each dialect."""

    def __init__(self, expressions: list[exp.Expression], sizes: list[dict[str, int]]) -> None:
        self.expressions = expressions
        self.sizes = sizes

    def then(self, build: Build, model: str, what: str) -> _Layer:
        """The layer that ``build`` makes of this one's units (given as placeholders, each in
        parentheses where it needs them), measured before it is made; a :class:`ModelError`
        if an expression would pass :data:`MAX_SQL_CHARS`."""
        slots = [
            exp.Paren(this=exp.column(f"{_SLOT}{i}"))
            if isinstance(expression, exp.Binary | exp.Neg)
            else exp.column(f"{_SLOT}{i}")
            for i, expression in enumerate(self.expressions)
        ]
        templates = build(slots)
        sizes = [self._size(template, model, what) for template in templates]

        def filled(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Column) and not node.this.quoted:
                return self.expressions[int(node.name.removeprefix(_SLOT))].copy()
            return node

        return _Layer([template.transform(filled) for template in templates], sizes)

    def _size(self, template: exp.Expression, model: str, what: str) -> dict[str, int]:
        sizes = {}
        for dialect in dialects():
            text = template.sql(dialect=dialect)
            uses = Counter(int(found) for found in _SLOTS.findall(text))
            sizes[dialect] = len(text) + sum(
                count * (self.sizes[slot][dialect] - len(f"{_SLOT}{slot}"))
                for slot, count in uses.items()
            )
            if sizes[dialect] > MAX_SQL_CHARS:
                raise ModelError(
                    f"model {model} cannot be compiled into SQL: {what} would be "
                    f"{sizes[dialect]:,} characters of SQL in the {dialect} dialect, more "
                    f"than {MAX_SQL_CHARS:,} (each unit repeats the SQL of the previous "
                    "layer's units: the SQL grows as the product of the layers' widths)",
                    hint="train a smaller network (fewer model.hidden_units) to use it in SQL, "
                    "or score it with TO PREDICT",
                )
        return sizes


def compile_model(stored: StoredModel, load: Callable[[bytes], Any]) -> CompiledModel:
    """The stored model as SQL, ``load`` reading its network (in safe mode) once its features
    are known to compile; a :class:`ModelError` saying what does not compile."""
    name = stored.name
    columns = compiled.numeric_columns(stored)
    network = load(stored.data)
    features = [compiled.feature(column) for column in columns]
    measured = dialects()  # the datasources' dialects, sqlglot's names
    layer = _Layer(features, [{d: len(f.sql(dialect=d)) for d in measured} for f in features])
    margins: _Layer | None = None  # before the last layer's softmax, if it ended in one
    for unit in _chain(network, name, len(columns)):
        kind, config = unit.__class__.__name__, unit.get_config()
        what = f"a unit of its layer {unit.name}"
        if kind == "Dropout":
            continue
        margins = None
        if kind == "Normalization":
            layer = layer.then(_normalization(unit, name, len(layer.expressions)), name, what)
        elif kind == "BatchNormalization":
            scale, offset = _batch_normalization(unit, name)
            layer = layer.then(_affine(scale, offset), name, what)
        elif kind == "Rescaling":
            scale, offset = _rescaling(unit, name, len(layer.expressions))
            layer = layer.then(_affine(scale, offset), name, what)
        else:  # Dense or Activation
            activation = _activation(config, unit.name, name)
            if kind == "Dense":
                kernel = np.asarray(unit.kernel, dtype=np.float32)
                bias = np.asarray(unit.bias, dtype=np.float32) if unit.use_bias else None
                layer = layer.then(_dense(kernel, bias), name, what)
            if activation == "softmax":
                margins = layer
            if activation != "linear":
                layer = layer.then(_ACTIVATION_OF[activation], name, what)
    return _outputs(stored, columns, layer, margins)


def _chain(network: Any, model: str, width: int) -> list[Any]:
    """The network's layers after its input, checked to follow one another from the one
    input ``numbers`` (``width`` numbers) to the output, each of a kind that compiles, in
    float32."""
    config = network.get_config()
    entries = config.get("layers") or []
    layers = list(network.layers)
    if not entries or [entry.get("name") for entry in entries] != [u.name for u in layers]:
        raise _refused(model, "its configuration does not list its layers")
    first = entries[0]
    if first.get("class_name") != "InputLayer" or first.get("name") != "numbers":
        raise _refused(model, f"its first layer is {first.get('name')}, not the input numbers")
    if list(first["config"].get("batch_shape") or []) != [None, width]:
        raise _refused(model, f"its input takes {first['config'].get('batch_shape')} numbers")
    for previous, entry in pairwise(entries):
        kind, layer = entry.get("class_name"), entry.get("name")
        if kind not in _COMPILED or entry.get("module") != "keras.layers":
            raise _refused(
                model,
                f"its layer {layer} is a {kind}, and only {', '.join(_COMPILED)} layers compile",
            )
        nodes = entry.get("inbound_nodes") or []
        sources = [history[0] for history in _histories(nodes)]
        if len(nodes) != 1 or sources != [previous["name"]]:
            raise _refused(
                model,
                f"its layer {layer} reads {', '.join(map(str, sources)) or 'nothing'}, not the "
                f"layer before it ({previous['name']}): only a chain of layers compiles",
            )
    outputs = set(_strings(config.get("output_layers")))
    inputs = set(_strings(config.get("input_layers")))
    if outputs != {entries[-1]["name"]} or inputs != {"numbers"}:
        raise _refused(model, "its inputs or outputs are not those of a chain of layers")
    for layer in layers[1:]:
        policy = str(getattr(getattr(layer, "dtype_policy", None), "name", None))
        if policy != "float32":
            raise _refused(model, f"its layer {layer.name} computes in {policy}, not float32")
    return layers[1:]


_COMPILED = ("Normalization", "Dense", "Activation", "Dropout", "BatchNormalization", "Rescaling")


def _histories(value: Any) -> Iterator[list[Any]]:
    """The ``keras_history`` (layer, node, tensor) of each tensor in an inbound node."""
    if isinstance(value, dict):
        if value.get("class_name") == "__keras_tensor__":
            yield value.get("config", {}).get("keras_history") or [None]
        else:
            for item in value.values():
                yield from _histories(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _histories(item)


def _strings(value: Any) -> Iterator[str]:
    """The texts in a JSON value (the layer names of ``input_layers``, ``output_layers``)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list | tuple):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _strings(item)


def _refused(model: str, why: str) -> ModelError:
    return ModelError(f"model {model} cannot be compiled into SQL: {why}", hint=_HINT)


def _weight(value: np.float32) -> exp.Expression:
    """A float32 as the shortest decimal that reads back as it."""
    return number(float(str(np.float32(value))))


def _normalization(unit: Any, model: str, width: int) -> Build:
    """``(x - mean) / MAX(SQRT(variance), epsilon)``, its divisor computed in float32 as
    Keras computes it."""
    axis = unit.get_config().get("axis")
    axes = tuple(axis) if isinstance(axis, list | tuple) else (axis,)
    mean = np.asarray(unit.mean, dtype=np.float32).reshape(-1)
    variance = np.asarray(unit.variance, dtype=np.float32).reshape(-1)
    if unit.invert or axes not in ((-1,), (1,)) or mean.size != width or variance.size != width:
        raise _refused(model, f"its layer {unit.name} is not a normalisation of each number")
    divisor = np.maximum(np.sqrt(variance), np.float32(1e-7))  # keras.backend.epsilon()

    def build(values: list[exp.Expression]) -> list[exp.Expression]:
        return [
            _over(exp.Paren(this=exp.Sub(this=x, expression=_weight(m))), _weight(d))
            for x, m, d in zip(values, mean, divisor, strict=True)
        ]

    return build


def _batch_normalization(unit: Any, model: str) -> tuple[np.ndarray, np.ndarray]:
    """A batch normalisation at inference as ``x * scale + offset``, each computed in
    float32 as TensorFlow does (``tf.nn.batch_normalization``)."""
    axis = unit.axis if isinstance(unit.axis, int) else None
    if axis not in (-1, 1):
        raise _refused(model, f"its layer {unit.name} normalises along axis {unit.axis}")
    mean = np.asarray(unit.moving_mean, dtype=np.float32)
    variance = np.asarray(unit.moving_variance, dtype=np.float32)
    scale = np.float32(1) / np.sqrt(variance + np.float32(unit.epsilon))
    if unit.scale:
        scale = scale * np.asarray(unit.gamma, dtype=np.float32)
    offset = -mean * scale
    if unit.center:
        offset = np.asarray(unit.beta, dtype=np.float32) - mean * scale
    return scale, offset


def _rescaling(unit: Any, model: str, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``x * scale + offset`` (each a number)."""
    scale, offset = np.asarray(unit.scale), np.asarray(unit.offset)
    if scale.ndim or offset.ndim:
        raise _refused(model, f"its layer {unit.name} rescales by several numbers")
    return np.full(width, scale, np.float32), np.full(width, offset, np.float32)


def _affine(scale: np.ndarray, offset: np.ndarray) -> Build:
    def build(values: list[exp.Expression]) -> list[exp.Expression]:
        return [
            exp.Add(this=exp.Mul(this=x, expression=_weight(a)), expression=_weight(b))
            for x, a, b in zip(values, scale, offset, strict=True)
        ]

    return build


def _dense(kernel: np.ndarray, bias: np.ndarray | None) -> Build:
    """Each unit's sum of products, and its bias (terms of weight 0 left out)."""

    def build(values: list[exp.Expression]) -> list[exp.Expression]:
        units = []
        for unit in range(kernel.shape[1]):
            terms: list[exp.Expression] = [
                exp.Mul(this=x.copy(), expression=_weight(w))
                for x, w in zip(values, kernel[:, unit], strict=True)
                if w != 0
            ]
            if bias is not None and bias[unit] != 0:
                terms.append(_weight(bias[unit]))
            units.append(total(terms) if terms else exp.Literal.number(0))
        return units

    return build


def _activation(config: dict[str, Any], layer: str, model: str) -> str:
    activation = config.get("activation")
    if activation not in _ACTIVATIONS:
        raise _refused(
            model,
            f"its layer {layer}'s activation is {activation}, and only "
            f"{', '.join(_ACTIVATIONS)} compile",
        )
    return str(activation)


def _over(numerator: exp.Expression, denominator: exp.Expression) -> exp.Expression:
    """``numerator / denominator``, a division of doubles (never of two integers), written as
    is in every dialect (sqlglot would cast a numerator it cannot type, repeating it)."""
    return exp.Div(this=numerator, expression=denominator, typed=True)


def _one_over_one_plus_exp(x: exp.Expression) -> exp.Expression:
    """``1 / (1 + EXP(x))``."""
    return _over(
        exp.Literal.number(1),
        exp.Paren(this=exp.Add(this=exp.Literal.number(1), expression=exp.Exp(this=x))),
    )


def _relu(values: list[exp.Expression]) -> list[exp.Expression]:
    return [exp.Greatest(this=x, expressions=[exp.Literal.number(0)]) for x in values]


def _sigmoid(values: list[exp.Expression]) -> list[exp.Expression]:
    return [_one_over_one_plus_exp(exp.Neg(this=x)) for x in values]


def _tanh(values: list[exp.Expression]) -> list[exp.Expression]:
    return [
        exp.Sub(
            this=exp.Literal.number(1),
            expression=exp.Mul(
                this=exp.Literal.number(2),
                expression=_one_over_one_plus_exp(
                    exp.Mul(this=exp.Literal.number(2), expression=x)
                ),
            ),
        )
        for x in values
    ]


def _softmax(values: list[exp.Expression]) -> list[exp.Expression]:
    """Each unit's ``1 / SUM(EXP(x_j - x_i))``: no overflow for the greatest."""
    return [
        _over(
            exp.Literal.number(1),
            exp.Paren(
                this=total(
                    [
                        exp.Literal.number(1)
                        if j == i
                        else exp.Exp(this=exp.Sub(this=other.copy(), expression=mine.copy()))
                        for j, other in enumerate(values)
                    ]
                )
            ),
        )
        for i, mine in enumerate(values)
    ]


_ACTIVATION_OF: dict[str, Build] = {
    "relu": _relu,
    "sigmoid": _sigmoid,
    "tanh": _tanh,
    "softmax": _softmax,
}


def _outputs(
    stored: StoredModel, columns: Sequence[str], layer: _Layer, margins: _Layer | None
) -> CompiledModel:
    """What TO PREDICT writes (the likeliest class, or the value) and each class's
    probability, each NULL where a feature is NULL."""
    name, labels = stored.name, stored.metadata["labels"]
    width = len(layer.expressions)
    missing = exp.or_(
        *(exp.Is(this=exp.column(c, quoted=True), expression=exp.Null()) for c in columns)
    )

    def guarded(values: list[exp.Expression]) -> list[exp.Expression]:
        return [
            exp.Case(ifs=[exp.If(this=missing.copy(), true=exp.Null())], default=v) for v in values
        ]

    if labels["task"] != "classifier":
        if width != 1:
            raise _refused(name, f"its network gives {width} values a row")
        value = layer.then(guarded, name, "its prediction")
        return CompiledModel(list(columns), value.expressions[0], {}, _NOTES)
    classes = labels["classes"]
    if width != len(classes):
        raise _refused(name, f"its network gives {width} scores for {len(classes)} classes")
    chosen = (margins or layer).then(
        lambda values: guarded([compiled.argmax(values, classes)]), name, "its prediction"
    )
    scores = layer.then(guarded, name, "a class's probability")
    return CompiledModel(
        list(columns),
        chosen.expressions[0],
        dict(zip((str(c) for c in classes), scores.expressions, strict=True)),
        _NOTES,
    )
