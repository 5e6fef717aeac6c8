"""The values a hyperparameter search tries: grid enumeration, seeded random sampling, and the
text form of a value that a trial receives (the same locally and from Katib).

A search space maps attribute names to ``{"kind": "choice", "values": [...]}`` or
``{"kind": "uniform" | "log_uniform" | "int_range", "low": x, "high": y}``, each with the
attribute's schema ``type`` (None: unchecked).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping
from typing import Any

from sqlml.errors import ModelError

ALGORITHMS = ("random", "grid")
GOALS = ("maximize", "minimize")
# Validation metrics that are better when smaller; the others are better when larger.
SMALLER_IS_BETTER = ("log_loss", "mae", "mse", "rmse")
DEFAULT_RANDOM_TRIALS = 10

Space = Mapping[str, Mapping[str, Any]]


def default_goal(metric: str) -> str:
    """``minimize`` for errors and losses, ``maximize`` for the other metrics."""
    return "minimize" if metric in SMALLER_IS_BETTER else "maximize"


def grid_points(space: Space) -> int:
    """How many points the grid over ``space`` (CHOICE and INT_RANGE only) has."""
    return math.prod(_grid_size(entry) for entry in space.values())


def plan(space: Space, algorithm: str, trials: int, seed: int) -> list[dict[str, Any]]:
    """The values of each trial, in trial order: the first ``trials`` points of the grid
    (the last attribute varying fastest), or ``trials`` random draws seeded with ``seed``."""
    names = sorted(space)
    if algorithm == "grid":  # ranges are never listed whole: a point is found from its number
        sizes = [_grid_size(space[name]) for name in names]
        return [
            {
                name: _grid_value(space[name], digit)
                for name, digit in zip(names, _digits(number, sizes), strict=True)
            }
            for number in range(min(trials, math.prod(sizes)))
        ]
    rng = random.Random(seed)
    return [{name: _draw(space[name], rng) for name in names} for _ in range(trials)]


def as_text(value: Any) -> str:
    """How a trial receives ``value``: strings as they are, other values as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def decode(space: Space, texts: Mapping[str, str]) -> dict[str, Any]:
    """The attribute values a trial's texts stand for, checked to lie in ``space``."""
    values = {}
    for name, entry in space.items():
        text = texts.get(name)
        if text is None:
            raise ModelError(f"the trial has no value for {name}", hint="pass every parameter")
        values[name] = _decoded(name, entry, text)
    return values


def _decoded(name: str, entry: Mapping[str, Any], text: str) -> Any:
    if entry["kind"] == "choice":
        for value in entry["values"]:
            if as_text(value) == text:
                return value
        raise ModelError(
            f"the trial's value {text!r} for {name} is not one of its candidates",
            hint="candidates: " + ", ".join(as_text(value) for value in entry["values"]),
        )
    try:
        number = int(text) if entry["kind"] == "int_range" else float(text)
    except ValueError:
        number = None
    if number is None or not entry["low"] <= number <= entry["high"]:
        raise ModelError(
            f"the trial's value {text!r} for {name} is outside {entry['low']}..{entry['high']}",
            hint="pass a number in the searched range",
        )
    return _typed(entry, number)


def _grid_size(entry: Mapping[str, Any]) -> int:
    if entry["kind"] == "choice":
        return len(entry["values"])
    if entry["kind"] == "int_range":
        return entry["high"] - entry["low"] + 1
    raise ValueError(f"a grid cannot enumerate {entry['kind']}")


def _digits(number: int, sizes: list[int]) -> list[int]:
    """``number`` in the mixed radix of ``sizes``, the last digit varying fastest."""
    digits = []
    for size in reversed(sizes):
        number, digit = divmod(number, size)
        digits.append(digit)
    return digits[::-1]


def _grid_value(entry: Mapping[str, Any], index: int) -> Any:
    """The ``index``-th value of a CHOICE or INT_RANGE, in order."""
    if entry["kind"] == "choice":
        return entry["values"][index]
    return _typed(entry, entry["low"] + index)


def _draw(entry: Mapping[str, Any], rng: random.Random) -> Any:
    kind = entry["kind"]
    if kind == "choice":
        return entry["values"][rng.randrange(len(entry["values"]))]
    if kind == "int_range":
        return _typed(entry, rng.randint(entry["low"], entry["high"]))
    if kind == "uniform":
        return rng.uniform(entry["low"], entry["high"])
    value = math.exp(rng.uniform(math.log(entry["low"]), math.log(entry["high"])))
    return min(max(value, entry["low"]), entry["high"])  # exp(log(x)) may miss x by a bit


def _typed(entry: Mapping[str, Any], number: int | float) -> int | float:
    return float(number) if entry.get("type") == "float" else number
