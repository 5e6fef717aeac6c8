"""Checks on a stored XGBoost model's bytes before XGBoost reads them (no XGBoost needed).

An XGBoost model must be XGBoost's JSON or UBJSON (as XGBoost tells them apart) nested at
most :data:`MAX_DEPTH` levels: XGBoost's parser recurses, and a document nested 200,000
levels deep crashes the process. The scan is iterative and skips UBJSON's typed arrays
whole, so it reads a large model in milliseconds.
"""

from __future__ import annotations

from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import MAX_MODEL_BYTES, TAMPERED_HINT, json_depth

MAX_DEPTH = 32  # XGBoost's documents nest about 8 levels


def xgboost_document(data: bytes) -> None:
    """A :class:`ModelError` unless ``data`` is XGBoost JSON or UBJSON nested at most
    :data:`MAX_DEPTH` levels.

    XGBoost reads a document starting ``{"`` as JSON and ``{`` and a letter as UBJSON.
    """
    if len(data) > MAX_MODEL_BYTES:
        raise _xgboost(f"it is {len(data):,} bytes, more than sqlml loads ({MAX_MODEL_BYTES:,})")
    if data[:2] == b'{"':
        json_depth(data, MAX_DEPTH, _xgboost)
    elif data[:1] == b"{" and data[1:2].isalpha():
        _ubjson_depth(data)
    else:
        raise not_xgboost()


def not_xgboost(reason: str | None = None) -> ModelError:
    """The error of bytes that are not an XGBoost model (``reason``: XGBoost's words)."""
    why = (
        f"XGBoost says: {reason}"
        if reason
        else "sqlml never loads pickles or other formats that can run code"
    )
    return ModelError(
        "the stored XGBoost model is not in XGBoost's JSON or UBJSON format and is not "
        f"loaded ({why})",
        hint=TAMPERED_HINT,
    )


def _xgboost(why: str) -> ModelError:
    return ModelError(f"the stored XGBoost model is not loaded: {why}", hint=TAMPERED_HINT)


# UBJSON: the markers XGBoost writes, each with the size of its value in bytes.
_INTEGERS = {ord("i"): (1, True), ord("U"): (1, False), ord("I"): (2, True)}
_INTEGERS |= {ord("l"): (4, True), ord("L"): (8, True)}
_SCALARS = {marker: size for marker, (size, _) in _INTEGERS.items()}
_SCALARS |= {ord("d"): 4, ord("D"): 8, ord("T"): 0, ord("F"): 0, ord("Z"): 0}
_OPEN = {ord("["): ord("]"), ord("{"): ord("}")}


class _Malformed(Exception):
    """The UBJSON document is cut short or holds something XGBoost does not write."""


def _ubjson_depth(data: bytes) -> None:
    """A :class:`ModelError` unless ``data`` is one well-formed UBJSON value nested at most
    :data:`MAX_DEPTH` deep. Typed arrays (``[$<type>#<count>``) are skipped whole."""
    try:
        end = _ubjson_end(data)
    except (_Malformed, IndexError):
        raise _xgboost("its UBJSON is malformed or cut short") from None
    if end != len(data):
        raise _xgboost("its UBJSON has bytes after the model")


def _ubjson_end(data: bytes) -> int:
    """Where the value at the start of ``data`` ends. Iterative: a stack of the open
    containers, each its closing marker and the values it has left (None: until closed)."""
    at = 0
    stack: list[list[Any]] = []

    def integer() -> int:
        nonlocal at
        size, signed = _INTEGERS.get(data[at], (0, False))
        if not size:
            raise _Malformed
        value = int.from_bytes(data[at + 1 : at + 1 + size], "big", signed=signed)
        at += 1 + size
        if value < 0 or at > len(data):
            raise _Malformed
        return value

    def skip(size: int) -> None:
        nonlocal at
        at += size
        if at > len(data):
            raise _Malformed

    while True:
        if stack:
            closing, left = stack[-1]
            if left is None and data[at] == closing:
                at += 1
                stack.pop()
                if not stack:
                    return at
                continue
            if left == 0:
                stack.pop()
                if not stack:
                    return at
                continue
            if left is not None:
                stack[-1][1] = left - 1
            if closing == ord("}"):
                skip(integer())  # the key
        marker = data[at]
        at += 1
        if marker in _OPEN:
            if len(stack) == MAX_DEPTH:
                raise _xgboost(f"it nests more than {MAX_DEPTH} levels deep")
            typed = None
            if data[at] == ord("$"):
                typed, at = data[at + 1], at + 2
                if typed not in _SCALARS or marker != ord("[") or data[at] != ord("#"):
                    raise _Malformed
            count = None
            if data[at] == ord("#"):
                at += 1
                count = integer()
            if typed is None:
                stack.append([_OPEN[marker], count])
                continue
            skip(_SCALARS[typed] * count)
        elif marker in _SCALARS:
            skip(_SCALARS[marker])
        elif marker == ord("S"):
            skip(integer())
        else:
            raise _Malformed
        if not stack:
            return at
