"""Checks on a stored ARIMA model before it is used: JSON of numbers only, of fitting
lengths (it is parsed by :mod:`json`; nothing in it runs)."""

from __future__ import annotations

from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import TAMPERED_HINT, finite, json_document

MAX_DEPTH = 3  # {"seasonals": [[...]]}
_LISTS = ("ar", "ma", "levels", "tail", "errors")
_KEYS = {*_LISTS, "seasonals", "periods", "intercept", "scale", "length"}


def arima_document(data: bytes) -> dict[str, Any]:
    """The model ``data`` holds: coefficient and state lists (``ar``, ``ma``, ``levels``,
    ``tail``, ``errors``), one seasonal pattern per period, and numbers; a
    :class:`ModelError` unless it is exactly that."""
    document = json_document(data, _KEYS, MAX_DEPTH, _invalid)
    lists = [document[k] for k in _LISTS] + list(document["seasonals"] or [])
    if not all(isinstance(v, list) and all(map(finite, v)) for v in lists):
        raise _invalid("its coefficients, states and patterns are not lists of numbers")
    periods = document["periods"]
    if not (
        isinstance(periods, list)
        and len(periods) == len(document["seasonals"])
        and all(
            isinstance(p, int) and p == len(s)
            for p, s in zip(periods, document["seasonals"], strict=True)
        )
    ):
        raise _invalid("its seasonal patterns do not match its periods")
    if len(document["tail"]) < len(document["ar"]) or len(document["errors"]) < len(document["ma"]):
        raise _invalid("its state is shorter than its order")
    numbers = [document[k] for k in ("intercept", "scale", "length")]
    if not all(finite(n) for n in numbers) or document["length"] < 0:
        raise _invalid("its intercept, scale or length is not a fitting number")
    return document


def _invalid(why: str) -> ModelError:
    return ModelError(f"the stored ARIMA model is invalid: {why}", hint=TAMPERED_HINT)
