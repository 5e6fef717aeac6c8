"""Checks on a stored k-means model before it is used: JSON of numbers only, of fitting
shapes (it is parsed by :mod:`json`; nothing in it runs)."""

from __future__ import annotations

from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import TAMPERED_HINT, finite, json_document

MAX_DEPTH = 4  # {"centers": [[...]]}


def kmeans_document(data: bytes) -> dict[str, Any]:
    """The model ``data`` holds: ``mean`` and ``scale`` (one number per column) and
    ``centers`` (clusters x columns); a :class:`ModelError` unless it is exactly that."""
    document = json_document(data, {"mean", "scale", "centers"}, MAX_DEPTH, _invalid)
    mean, scale, centers = document["mean"], document["scale"], document["centers"]
    width = len(mean) if isinstance(mean, list) else -1
    rows = [mean, scale, *centers] if isinstance(centers, list) and centers else []
    if not rows or not all(
        isinstance(row, list) and len(row) == width and all(finite(v) for v in row) for row in rows
    ):
        raise _invalid("its mean, scale and centers are not lists of numbers of one width")
    return document


def _invalid(why: str) -> ModelError:
    return ModelError(f"the stored k-means model is invalid: {why}", hint=TAMPERED_HINT)
