"""Turn selected columns into the numeric matrix a model trains on."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sqlml.errors import ModelError
from sqlml.runtime.datasource import Columns


def feature_matrix(columns: Columns, names: Sequence[str]) -> np.ndarray:
    """A float32 matrix with one column per feature name; NULLs become NaN."""
    missing = [name for name in names if name not in columns]
    if missing:
        raise ModelError(
            f"feature column {', '.join(missing)} is not in the result of the SELECT",
            hint=f"the SELECT returns: {', '.join(columns)}",
        )
    for name in names:
        if columns[name].dtype.kind not in "biuf":
            raise ModelError(
                f"feature column {name} holds text; sqlml trains on numeric columns",
                hint=f"select a numeric encoding of {name} or leave it out of COLUMN",
            )
    if not names:
        raise ModelError("there are no feature columns", hint="select at least one column")
    return np.column_stack([columns[name].astype(np.float32) for name in names])


def check_rows(columns: Columns) -> int:
    """The number of rows; a :class:`ModelError` if the SELECT returned none."""
    rows = len(next(iter(columns.values()))) if columns else 0
    if rows == 0:
        raise ModelError("the SELECT returned no rows", hint="check its WHERE clause and table")
    return rows
