"""Checks on a stored one-class model before it is used: JSON of numbers only, of fitting
shapes (it is parsed by :mod:`json`; nothing in it runs)."""

from __future__ import annotations

from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import TAMPERED_HINT, finite, json_document

MAX_DEPTH = 4  # {"landmarks": [[...]]}
_KEYS = {"mean", "scale", "landmarks", "gamma", "threshold"}


def one_class_document(data: bytes) -> dict[str, Any]:
    """The model ``data`` holds: ``mean`` and ``scale`` (one number per column),
    ``landmarks`` (rows x columns), ``gamma`` and ``threshold`` (positive numbers); a
    :class:`ModelError` unless it is exactly that."""
    document = json_document(data, _KEYS, MAX_DEPTH, _invalid)
    mean, landmarks = document["mean"], document["landmarks"]
    width = len(mean) if isinstance(mean, list) else -1
    rows = [mean, document["scale"], *landmarks] if isinstance(landmarks, list) else []
    if len(rows) < 3 or not all(
        isinstance(row, list) and len(row) == width and all(map(finite, row)) for row in rows
    ):
        raise _invalid("its mean, scale and landmarks are not lists of numbers of one width")
    if not all(finite(document[k]) and document[k] > 0 for k in ("gamma", "threshold")):
        raise _invalid("its gamma and threshold are not positive numbers")
    return document


def _invalid(why: str) -> ModelError:
    return ModelError(f"the stored one-class model is invalid: {why}", hint=TAMPERED_HINT)
