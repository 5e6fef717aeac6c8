"""A column's cells as features and labels read them: each one's text, the values a
delimited one holds, and what a column holds (numbers or text)."""

from __future__ import annotations

from numbers import Number
from typing import Any

import numpy as np

SAMPLE_ROWS = 1000  # non-NULL values inspected to guess a column's kind
FLOAT32_MAX = float(np.finfo(np.float32).max)  # XGBoost and Keras compute in float32


def value_kind(values: np.ndarray) -> str | None:
    """What a column holds: "numbers" (booleans too) or "text", by its type or its first
    1,000 values that are not NULL; None when that is not known (all NULL, mixed)."""
    if values.dtype.kind in "biuf":
        return "numbers"
    if values.dtype.kind in "US":
        return "text"
    sample = non_null_sample(values) if values.dtype == object else []
    if sample and all(isinstance(v, str) for v in sample):
        return "text"
    if sample and all(isinstance(v, Number) for v in sample):
        return "numbers"
    return None


def non_null_sample(values: np.ndarray) -> list[Any]:
    """The first :data:`SAMPLE_ROWS` values of ``values`` that are not NULL."""
    sample = []
    for value in values:
        if value is not None:
            sample.append(value)
            if len(sample) == SAMPLE_ROWS:
                break
    return sample


def value_texts(values: np.ndarray) -> list[str | None]:
    """Each value as category text (None for NULL); integral numbers print without '.0'."""
    return [_text(value) for value in values.tolist()]


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else str(value)


def split(text: str | None, delimiter: str | None, kv: str | None = None) -> list[str]:
    """The values in one cell: none for NULL, the text itself without a delimiter; only the
    keys of a key-value list (``kv`` between key and value)."""
    if text is None:
        return []
    if delimiter is None and kv is None:
        return [text]
    tokens = [text] if delimiter is None else text.split(delimiter)
    if kv is not None:
        tokens = [token.partition(kv)[0] for token in tokens]
    return [token.strip() for token in tokens if token.strip()]
