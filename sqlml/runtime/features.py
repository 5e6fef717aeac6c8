"""Checks on the rows a SELECT returned."""

from __future__ import annotations

from sqlml.errors import ModelError
from sqlml.runtime.datasource import Columns


def check_rows(columns: Columns) -> int:
    """The number of rows; a :class:`ModelError` if the SELECT returned none."""
    rows = len(next(iter(columns.values()))) if columns else 0
    if rows == 0:
        raise ModelError("the SELECT returned no rows", hint="check its WHERE clause and table")
    return rows
