"""The rows a SELECT returned: the check that there are some, and errors naming their source."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlml.errors import ModelError, SqlmlError
from sqlml.runtime.datasource import Columns


def check_rows(columns: Columns) -> int:
    """The number of rows; a :class:`ModelError` if the SELECT returned none."""
    rows = len(next(iter(columns.values()))) if columns else 0
    if rows == 0:
        raise ModelError("the SELECT returned no rows", hint="check its WHERE clause and table")
    return rows


@contextmanager
def blame(source: str | None) -> Iterator[None]:
    """Errors in the body name ``source`` (when given) as their cause."""
    try:
        yield
    except SqlmlError as error:
        if source is None:
            raise
        raise type(error)(f"{source}: {error.message}", hint=error.hint) from None
