"""LABEL values of several numbers a row, as SQLFlow's time-series models learn and predict
them: ``model.n_out`` future values in one text column of comma-separated numbers (the
SELECT builds it with ``concat(a, ',', b, ...)``). Training reads them as rows x n numbers;
TO EVALUATE compares them with the predictions; TO PREDICT writes its predictions back as
such a text, each number with float32's shortest digits."""

from __future__ import annotations

from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.runtime.labels import check_not_null


def width(attributes: dict[str, Any]) -> int:
    """The values a row's LABEL holds: ``model.n_out`` where the estimator takes it, else 1."""
    return int(attributes.get("model.n_out") or 1)


def parse(name: str, values: np.ndarray, count: int, source: str) -> np.ndarray:
    """The LABEL column ``name`` of ``source``, each row a text of ``count`` comma-separated
    numbers, as rows x ``count`` float64; a :class:`ModelError` at the first row that is not."""
    check_not_null(name, values, source)
    hint = _hint(name, count)
    if values.dtype.kind not in "OSU":
        raise ModelError(
            f"LABEL column {name} of {source} holds one number a row, but model.n_out is {count}",
            hint=hint,
        )
    parsed = np.empty((len(values), count))
    for row, text in enumerate(values.tolist()):
        parts = str(text).split(",")
        try:
            numbers = [float(part) for part in parts] if len(parts) == count else None
        except ValueError:
            numbers = None
        if numbers is None:
            raise ModelError(
                f"LABEL column {name} of {source} holds {str(text)[:80]!r} in row {row + 1}, "
                f"not {count} comma-separated numbers (model.n_out)",
                hint=hint,
            )
        parsed[row] = numbers
    check_not_null(name, parsed, source)  # NaN, infinities and numbers beyond float32
    return parsed


def _hint(name: str, count: int) -> str:
    shown = [f"v{i + 1}" for i in range(min(count, 3))] + (["..."] if count > 3 else [])
    separator = ", ',', "
    return f"select the {count} values as one text: concat({separator.join(shown)}) AS {name}"


def texts(values: np.ndarray) -> np.ndarray:
    """Rows x n predicted values as each row's text of comma-separated numbers."""
    return np.array([",".join(map(str, row)) for row in values.astype(np.float32)], dtype=object)
