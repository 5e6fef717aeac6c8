"""Writing rows into PostgreSQL: one ``COPY ... FROM STDIN (FORMAT BINARY)`` for all of a
write's batches, its rows built in bulk with numpy.

A binary COPY row is its field count (int16), then each field's length (int32, -1 for NULL)
and big-endian value. Rows of numbers (booleans, integers, floats) are numpy records: a
chunk of rows is one array of a structured type filled a column at a time, its NULLs' values
cut out with one mask. Rows with text or bytes are built field by field
(:func:`~sqlml.datasources.bulk.binary_chunks`).

The COPY stays open from a write's first batch to its last, so the server stores a batch's
rows while the next is read and scored, with no statement's round trip between batches.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import numpy as np
import psycopg

from sqlml.datasources import bulk
from sqlml.datasources.base import Columns

HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags, header extension length
TRAILER = b"\xff\xff"
_FIELDS = {"b": "?", "i": ">i8", "u": ">i8", "f": ">f8"}  # BOOLEAN, BIGINT, DOUBLE PRECISION


class CopyIn:
    """A binary COPY into ``table``'s ``names`` columns (quoted already), open until
    :meth:`finish` or :meth:`abort`; every batch written has those columns."""

    def __init__(self, con: psycopg.Connection, table: str, names: list[str]) -> None:
        self.table, self.names = table, names
        listed = ", ".join(names)
        with ExitStack() as stack:
            cursor = stack.enter_context(con.cursor())
            self._copy = stack.enter_context(
                cursor.copy(f"COPY {table} ({listed}) FROM STDIN (FORMAT BINARY)")
            )
            self._copy.write(HEADER)
            self._stack = stack.pop_all()

    def write(self, columns: Columns) -> None:
        for chunk in binary_rows(columns):
            self._copy.write(chunk)

    def finish(self) -> None:
        """End the COPY; the server's error if it refused a row."""
        self._copy.write(TRAILER)
        self._stack.close()

    def abort(self, error: BaseException) -> None:
        """End the COPY as failed by ``error`` (the server discards its rows)."""
        self._stack.__exit__(type(error), error, error.__traceback__)


def binary_rows(columns: Columns) -> Iterator[Any]:
    """``columns``' rows as binary COPY rows, in chunks of about ``bulk.CHUNK_BYTES``."""
    if not all(values.dtype.kind in _FIELDS for values in columns.values()):
        yield from bulk.binary_chunks(columns)
        return
    arrays = [bulk.checked(name, values) for name, values in columns.items()]
    record = _record([values.dtype.kind for values in arrays])
    rows = len(arrays[0]) if arrays else 0
    step = max(1, bulk.CHUNK_BYTES // record.itemsize)
    for start in range(0, rows, step):
        yield _records([a[start : start + step] for a in arrays], record)


def _record(kinds: list[str]) -> np.dtype:
    """The layout of a row of numbers without NULL: the field count, then each field's
    length and value."""
    fields = [("count", ">i2")]
    for j, kind in enumerate(kinds):
        fields += [(f"length{j}", ">i4"), (f"value{j}", _FIELDS[kind])]
    return np.dtype(fields)


def _records(arrays: list[np.ndarray], record: np.dtype) -> Any:
    """Rows of numbers (NaN is NULL) as binary COPY rows: records, with each NULL's length
    set to -1 and its value's bytes left out."""
    rows = np.empty(len(arrays[0]), record)
    rows["count"] = len(arrays)
    keep = None
    for j, values in enumerate(arrays):
        rows[f"length{j}"] = record[f"value{j}"].itemsize
        rows[f"value{j}"] = values
        if values.dtype.kind != "f":
            continue
        null = np.isnan(values)
        if not null.any():
            continue
        rows[f"length{j}"][null] = -1
        if keep is None:
            keep = np.ones((len(rows), record.itemsize), bool)
        offset, width = record.fields[f"value{j}"][1], record[f"value{j}"].itemsize
        keep[null, offset : offset + width] = False
    if keep is None:
        return rows.data.cast("B")
    return rows.view(np.uint8).reshape(len(rows), -1)[keep].data
