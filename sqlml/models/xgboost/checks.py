"""Checks on a stored XGBoost model's bytes before XGBoost reads them (no XGBoost needed).

An XGBoost model must be XGBoost's JSON or UBJSON (as XGBoost tells them apart) nested at
most :data:`MAX_DEPTH` levels: XGBoost's parser recurses, and a document nested 200,000
levels deep crashes the process. :func:`xgboost_document` decodes either without recursion,
UBJSON's typed arrays as numpy arrays (read whole, not element by element), so a large model
is read in milliseconds; :mod:`.structure` then checks what the document holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import MAX_MODEL_BYTES, TAMPERED_HINT, json_depth

MAX_DEPTH = 32  # XGBoost's documents nest about 8 levels


def xgboost_document(data: bytes, error: Callable[[str], Exception] | None = None) -> Any:
    """The document ``data`` holds, decoded; ``error(why)`` (default: a :class:`ModelError`)
    is raised unless it is XGBoost JSON or UBJSON nested at most :data:`MAX_DEPTH` levels.

    XGBoost reads a document starting ``{"`` as JSON and ``{`` and a letter as UBJSON.
    """
    error = error or _xgboost
    if len(data) > MAX_MODEL_BYTES:
        raise error(f"it is {len(data):,} bytes, more than sqlml loads ({MAX_MODEL_BYTES:,})")
    if data[:2] == b'{"':
        json_depth(data, MAX_DEPTH, error)
        try:
            return json.loads(data)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise error("its JSON is malformed") from None
    if data[:1] == b"{" and data[1:2].isalpha():
        return _ubjson(data, error)
    raise (
        not_xgboost()
        if error is _xgboost
        else error(
            "it is not in XGBoost's JSON or UBJSON format: sqlml never loads pickles or other "
            "formats that can run code"
        )
    )


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


# UBJSON: the markers XGBoost writes, each with its numpy type (big-endian) and size.
_INTEGERS = {ord("i"): ">i1", ord("U"): ">u1", ord("I"): ">i2", ord("l"): ">i4", ord("L"): ">i8"}
_NUMBERS = {**_INTEGERS, ord("d"): ">f4", ord("D"): ">f8"}
_CONSTANTS = {ord("T"): True, ord("F"): False, ord("Z"): None}
_OPEN = {ord("["): ord("]"), ord("{"): ord("}")}


class _Malformed(Exception):
    """The UBJSON document is cut short or holds something XGBoost does not write."""


def _ubjson(data: bytes, error: Callable[[str], Exception]) -> Any:
    """The value ``data`` holds; ``error(why)`` unless it is one well-formed UBJSON value
    nested at most :data:`MAX_DEPTH` deep."""
    try:
        value, end = _decode(data, error)
    except (_Malformed, IndexError, ValueError):
        raise error("its UBJSON is malformed or cut short") from None
    if end != len(data):
        raise error("its UBJSON has bytes after the model")
    return value


def _decode(data: bytes, error: Callable[[str], Exception]) -> tuple[Any, int]:
    """The value at the start of ``data`` and where it ends. Iterative: a stack of the open
    containers, each [container, closing marker, values left (None: until closed), key]."""
    import numpy as np

    at = 0
    stack: list[list[Any]] = []

    def number(marker: int) -> Any:
        nonlocal at
        kind = np.dtype(_NUMBERS[marker])
        value = np.frombuffer(data, kind, 1, at)[0].item()
        at += kind.itemsize
        return value

    def integer() -> int:
        nonlocal at
        marker = data[at]
        if marker not in _INTEGERS:
            raise _Malformed
        at += 1
        value = number(marker)
        if value < 0:
            raise _Malformed
        return value

    def text() -> str:
        nonlocal at
        size = integer()
        if at + size > len(data):
            raise _Malformed
        at += size
        return data[at - size : at].decode()

    while True:
        if stack:
            top = stack[-1]
            container, closing, left = top[0], top[1], top[2]
            if (left is None and data[at] == closing) or left == 0:
                at += 1 if left is None else 0
                stack.pop()
                value = container
                if not stack:
                    return value, at
                _add(stack[-1], value)
                continue
            if left is not None:
                top[2] = left - 1
            if closing == ord("}"):
                top[3] = text()
        marker = data[at]
        at += 1
        if marker in _OPEN:
            if len(stack) == MAX_DEPTH:
                raise error(f"it nests more than {MAX_DEPTH} levels deep")
            typed = None
            if data[at] == ord("$"):
                typed, at = data[at + 1], at + 2
                if typed not in _NUMBERS or marker != ord("[") or data[at] != ord("#"):
                    raise _Malformed
            count = None
            if data[at] == ord("#"):
                at += 1
                count = integer()
            if typed is None:
                stack.append([[] if marker == ord("[") else {}, _OPEN[marker], count, None])
                continue
            kind = np.dtype(_NUMBERS[typed])
            if at + kind.itemsize * count > len(data):
                raise _Malformed
            value = np.frombuffer(data, kind, count, at)
            at += kind.itemsize * count
        elif marker in _NUMBERS:
            value = number(marker)
        elif marker in _CONSTANTS:
            value = _CONSTANTS[marker]
        elif marker == ord("S"):
            value = text()
        else:
            raise _Malformed
        if not stack:
            return value, at
        _add(stack[-1], value)


def _add(top: list[Any], value: Any) -> None:
    """Put ``value`` in the open container ``top`` (under its pending key, for an object)."""
    if isinstance(top[0], list):
        top[0].append(value)
    else:
        top[0][top[3]] = value
