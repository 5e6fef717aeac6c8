"""Checks on a stored GCN before it is used: JSON of names and numbers only, its layers'
shapes chained (it is parsed by :mod:`json`; nothing in it runs)."""

from __future__ import annotations

from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import TAMPERED_HINT, finite, json_document
from sqlml.models.graph.estimators import GRAPH_COLUMNS, MAX_LAYERS

MAX_DEPTH = 5  # {"layers": [{"weights": [[...]]}]}
KEYS = {"columns", "node_features", "layers"}


def gcn_document(data: bytes) -> dict[str, Any]:
    """The model ``data`` holds: ``columns`` (the graph's columns by attribute name),
    ``node_features`` (the input width) and ``layers`` (each ``weights``, inputs x units, and
    ``bias``, one per unit, each layer's inputs the previous one's units); a
    :class:`ModelError` unless it is exactly that."""
    document = json_document(data, KEYS, MAX_DEPTH, _invalid)
    columns = document["columns"]
    if (
        not isinstance(columns, dict)
        or set(columns) != set(GRAPH_COLUMNS)
        or not all(isinstance(name, str) and name for name in columns.values())
    ):
        raise _invalid(f"its columns do not name exactly {', '.join(GRAPH_COLUMNS)}")
    width, layers = document["node_features"], document["layers"]
    if not (isinstance(width, int) and not isinstance(width, bool) and width > 0):
        raise _invalid("its node_features is not a positive whole number")
    if not isinstance(layers, list) or not 2 <= len(layers) <= MAX_LAYERS:
        raise _invalid(f"it does not hold 2 to {MAX_LAYERS} layers")
    for number, layer in enumerate(layers, 1):
        width = _layer_units(layer, width, number)
    return document


def _layer_units(layer: Any, inputs: int, number: int) -> int:
    """The units of a layer taking ``inputs`` values; a :class:`ModelError` unless it is a
    ``weights`` matrix of ``inputs`` rows and a ``bias`` of one finite number per column."""
    if not isinstance(layer, dict) or set(layer) != {"weights", "bias"}:
        raise _invalid(f"its layer {number} does not hold exactly weights and bias")
    weights, bias = layer["weights"], layer["bias"]
    units = len(bias) if isinstance(bias, list) else 0
    rows = [bias, *weights] if isinstance(weights, list) and len(weights) == inputs else []
    if (
        not units
        or not rows
        or not all(
            isinstance(row, list) and len(row) == units and all(finite(v) for v in row)
            for row in rows
        )
    ):
        raise _invalid(
            f"its layer {number} is not {inputs} rows of weights and a bias of one width"
        )
    return units


def _invalid(why: str) -> ModelError:
    return ModelError(f"the stored GCN model is invalid: {why}", hint=TAMPERED_HINT)
