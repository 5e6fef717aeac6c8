"""Checks on a stored ARIMA model before it is used: JSON of numbers only, of fitting
lengths (it is parsed by :mod:`json`; nothing in it runs).

A model holds the names of its series key columns (``keys``) and one ARIMA per series
(``series``), each with its key's values and the last date and step of its rows. A model
stored before series keys (one ARIMA, no residual variance) is read as one series without
intervals.
"""

from __future__ import annotations

from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import TAMPERED_HINT, finite, json_document

MAX_DEPTH = 5  # {"series": [{"seasonals": [[...]]}]}
_LISTS = ("ar", "ma", "levels", "tail", "errors")
_ONE = {*_LISTS, "seasonals", "periods", "intercept", "scale", "length"}  # before series keys
_SERIES = {*_ONE, "variance", "key", "last", "step"}
_KEYS = {"keys", "series"}


def arima_document(data: bytes) -> dict[str, Any]:
    """The model ``data`` holds, as ``{"keys": [...], "series": [...]}``; a
    :class:`ModelError` unless it is exactly that (or one ARIMA stored before series keys)."""
    try:
        document = json_document(data, _KEYS, MAX_DEPTH, _invalid)
    except ModelError as failure:
        try:
            one = json_document(data, _ONE, MAX_DEPTH - 2, _invalid)
        except ModelError:
            raise failure from None
        _check_series(one)
        return {"keys": [], "series": [{**one, "variance": None, "key": [], "last": 0, "step": 1}]}
    keys, series = document["keys"], document["series"]
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise _invalid("its key columns are not a list of names")
    if not isinstance(series, list) or not series:
        raise _invalid("it holds no series")
    for one in series:
        if not isinstance(one, dict) or set(one) != _SERIES:
            raise _invalid(f"a series does not hold exactly {', '.join(sorted(_SERIES))}")
        _check_series(one)
        key = one["key"]
        if not (isinstance(key, list) and len(key) == len(keys) and all(map(finite, key))):
            raise _invalid("a series' key does not match its key columns")
        if not all(finite(one[k]) for k in ("variance", "last", "step")) or one["variance"] < 0:
            raise _invalid("a series' variance, last date or step is not a fitting number")
    return document


def _check_series(document: dict[str, Any]) -> None:
    if not isinstance(document["seasonals"], list):
        raise _invalid("its seasonal patterns are not a list")
    lists = [document[k] for k in _LISTS] + document["seasonals"]
    if not all(isinstance(v, list) and all(map(finite, v)) for v in lists):
        raise _invalid("its coefficients, states and patterns are not lists of numbers")
    periods = document["periods"]
    if not (
        isinstance(periods, list)
        and len(periods) == len(document["seasonals"])
        and all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 1 and p == len(s)
            for p, s in zip(periods, document["seasonals"], strict=True)
        )
    ):
        raise _invalid("its seasonal patterns do not match its periods")
    if len(document["tail"]) < len(document["ar"]) or len(document["errors"]) < len(document["ma"]):
        raise _invalid("its state is shorter than its order")
    numbers = [document[k] for k in ("intercept", "scale")]
    length = document["length"]
    fitting = isinstance(length, int) and not isinstance(length, bool) and 0 <= length < 2**53
    if not all(finite(n) for n in numbers) or not fitting:
        raise _invalid("its intercept, scale or length is not a fitting number")


def _invalid(why: str) -> ModelError:
    return ModelError(f"the stored ARIMA model is invalid: {why}", hint=TAMPERED_HINT)
