"""The weights of a Keras network, counted before TensorFlow builds it, against the model
store's limit (:data:`~sqlml.models.checks.MAX_MODEL_BYTES`, 1 GiB: a larger model could
not be stored, and TensorFlow would first allocate it, and its optimizer's copies, whole).

``sqlml check`` counts the weights between the layers that ``model.hidden_units`` (and the
like) lists; the training counts those of the whole network, its inputs included, before
TensorFlow is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import MAX_MODEL_BYTES

WEIGHT_BYTES = 4  # float32
MAX_WEIGHTS = MAX_MODEL_BYTES // WEIGHT_BYTES
WHOLE = (  # said of the attributes listing layers' units
    f"the network's layers together hold at most {MAX_WEIGHTS:,} weights "
    f"({MAX_MODEL_BYTES >> 30} GiB, the model store's limit)"
)
# The attributes listing layers' units, each feeding the next.
LAYER_LISTS = ("model.hidden_units", "model.dnn_hidden_units", "model.stack_units")


def stacked(widths: Sequence[int]) -> int:
    """The weights of dense layers of ``widths`` units, each fed by the one before (the
    first is the input): a recurrent layer holds more."""
    return sum((before + 1) * units for before, units in pairwise(widths))


def too_many(weights: int) -> str:
    """What a network of ``weights`` weights beyond :data:`MAX_WEIGHTS` is said to be."""
    return (
        f"makes a network of at least {weights:,} weights ({weights * WEIGHT_BYTES / 1e9:.1f} "
        f"GB), more than a model may hold ({MAX_WEIGHTS:,} weights: "
        f"{MAX_MODEL_BYTES >> 30} GiB)"
    )


def check_units(units: list[int]) -> None:
    """A ValueError if layers of ``units`` alone hold more weights than a model may."""
    weights = stacked(units)
    if weights > MAX_WEIGHTS:
        raise ValueError(too_many(weights))


def check_network(input_width: int, embedded: int, attributes: dict[str, Any]) -> None:
    """A :class:`ModelError` naming the attribute if the network of ``attributes`` over
    ``input_width`` input values (and ``embedded`` embedding weights) holds more weights
    than a model may."""
    for name in LAYER_LISTS:
        units = attributes.get(name)
        if units:  # a recurrent stack's input is a step's values, not all the features'
            dense = name != "model.stack_units"
            weights = embedded + stacked([input_width, *units, 1] if dense else units)
            if weights > MAX_WEIGHTS:
                raise ModelError(
                    f"{name} over the features' {input_width:,} values {too_many(weights)}",
                    hint=f"fewer or smaller layers in {name}, or fewer feature values "
                    "(smaller bucket sizes or embedding dimensions)",
                )
