"""Columns as the byte streams of the databases' bulk loads, built a chunk of rows at a time.

- :func:`text_chunks`: the text of MySQL's ``LOAD DATA`` with its default FIELDS and LINES
  clauses: a tab after each field but the last, a newline after each row, ``\\N`` for NULL,
  and backslash, tab, newline and NUL inside values escaped with a backslash. Numbers are
  made text by Arrow's cast, a column at a time: floats in their shortest form that reads
  back as exactly the same double (``0.1``, ``-0``, ``1e+22``, ``5e-324``; a float32 as the
  double it widens to), and the fields joined into rows by Arrow too.
- :func:`binary_chunks`: rows of PostgreSQL's binary ``COPY``: big-endian values, each with its
  length (:mod:`~sqlml.datasources.postgresql.binary_write` writes the header and the trailer,
  and rows of numbers alone). Each chunk of rows is laid out as a byte matrix, one table row
  per matrix row, and compacted once.

NaN is written as NULL, as every datasource does. No Python work per number. Text and bytes
are Python objects, so they are encoded one value at a time, then escaped in bulk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml import imports
from sqlml.datasources.base import Columns
from sqlml.errors import DatasourceError

CHUNK_BYTES = 8 << 20  # about the size of one chunk's byte matrix


_BACKSLASH = ord("\\")
_ESCAPED = np.zeros(256, dtype=bool)  # bytes that LOAD DATA reads as a backslash sequence
_ESCAPED[[_BACKSLASH, ord("\t"), ord("\n"), 0]] = True
_ESCAPE_CODE = np.zeros(256, dtype=np.uint8)  # the letter after the backslash
_ESCAPE_CODE[[_BACKSLASH, ord("\t"), ord("\n"), 0]] = [_BACKSLASH, ord("t"), ord("n"), ord("0")]
_WIDTHS = {"f": 24, "i": 21, "u": 21, "b": 2}  # bytes per value in a chunk's matrix, about
_GUESSED_WIDTH = 32  # of a text value


@dataclass(frozen=True)
class Cells:
    """A column's values in some rows: row i's bytes are ``data[i][keep[i]]``."""

    data: np.ndarray  # uint8, rows x width
    keep: np.ndarray | None  # bool, rows x width; None: every byte
    null: np.ndarray | None  # bool, rows; None: no NULL


def text_chunks(columns: Columns) -> Iterator[bytes]:
    """``columns`` as ``LOAD DATA`` text, in chunks of about :data:`CHUNK_BYTES`."""
    check_finite(columns)
    for arrays in _row_chunks(columns):
        yield from _text_chunk(arrays)


def binary_chunks(columns: Columns) -> Iterator[bytes]:
    """``columns``' rows as binary ``COPY`` rows, in chunks of about :data:`CHUNK_BYTES`."""
    for arrays in _row_chunks(columns):
        yield from _chunk(arrays, _binary_cells, _binary_rows)


def check_finite(columns: Columns) -> None:
    """Raise if a float column holds an infinity, which MySQL cannot store."""
    for name, values in columns.items():
        if values.dtype.kind == "f" and np.isinf(values).any():
            raise DatasourceError(
                f"column {name} holds an infinite value, which MySQL cannot store",
                hint="replace infinities in the SELECT (e.g. with NULL) before writing to MySQL",
            )


def _row_chunks(columns: Columns) -> Iterator[list[np.ndarray]]:
    """The columns' values (as :func:`checked` makes them) a chunk of rows at a time."""
    arrays = [checked(name, values) for name, values in columns.items()]
    rows = len(arrays[0]) if arrays else 0
    step = max(1, CHUNK_BYTES // sum(_WIDTHS.get(a.dtype.kind, _GUESSED_WIDTH) for a in arrays))
    for start in range(0, rows, step):
        yield [a[start : start + step] for a in arrays]


def _text_chunk(arrays: list[np.ndarray]) -> Iterator[bytes]:
    """One chunk's ``LOAD DATA`` text; halved while its text values are far over budget."""
    encoded = {
        j: _encoded_values(a, escape=True) for j, a in enumerate(arrays) if a.dtype == object
    }
    rows = len(arrays[0])
    if rows > 1 and sum(flat.size for flat, _, _ in encoded.values()) > 4 * CHUNK_BYTES:
        half = rows // 2
        yield from _text_chunk([a[:half] for a in arrays])
        yield from _text_chunk([a[half:] for a in arrays])
        return
    texts = [
        _binary_array(*encoded[j]) if j in encoded else _number_text(a)
        for j, a in enumerate(arrays)
    ]
    yield _text_rows(texts)


def _number_text(values: np.ndarray) -> Any:
    """Numbers as an Arrow array of their text (NaN as null): 0/1 for booleans. The array
    is made on the values' buffer: ``pyarrow.array`` would import pandas (0.3 s) to ask
    whether they are a pandas object."""
    pa, pc = imports.load("pyarrow"), imports.load("pyarrow.compute")
    if values.dtype.kind == "b":
        values = values.view(np.uint8)
    valid = None
    if values.dtype.kind == "f":
        values = values.astype(np.float64, copy=False)  # float32 too: its exact value
        null = _nulls(np.isnan(values))
        valid = None if null is None else pa.py_buffer(np.packbits(~null, bitorder="little"))
    values = np.ascontiguousarray(values)
    kind = pa.from_numpy_dtype(values.dtype)
    array = pa.Array.from_buffers(kind, len(values), [valid, pa.py_buffer(values)])
    return pc.cast(array, pa.large_string()).view(pa.large_binary())


def _binary_array(flat: np.ndarray, lengths: np.ndarray, null: np.ndarray | None) -> Any:
    """Values encoded by :func:`_encoded_values` as an Arrow array; None as null."""
    pa = imports.load("pyarrow")
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    valid = None if null is None else pa.py_buffer(np.packbits(~null, bitorder="little"))
    buffers = [valid, pa.py_buffer(offsets), pa.py_buffer(flat)]
    return pa.Array.from_buffers(pa.large_binary(), len(lengths), buffers)


def _binary(value: bytes) -> Any:
    """``value`` as an Arrow scalar (``pyarrow.scalar`` would import pandas)."""
    return _binary_array(np.frombuffer(value, np.uint8), np.array([len(value)]), None)[0]


def _text_rows(texts: list[Any]) -> bytes:
    """Arrow arrays of the columns' texts as rows of tab-separated fields; null as ``\\N``."""
    pc = imports.load("pyarrow.compute")

    def join(arrays: list[Any], separator: bytes) -> Any:
        return pc.binary_join_element_wise(
            *arrays, _binary(separator), null_handling="replace", null_replacement="\\N"
        )

    *fields, last = texts
    ended = join([last, _binary(b"\n")], b"")
    rows = join([*fields, ended], b"\t")
    offsets = np.frombuffer(rows.buffers()[1], np.int64)
    start, stop = offsets[rows.offset], offsets[rows.offset + len(rows)]
    return rows.buffers()[2][start:stop].to_pybytes()


def _chunk(
    arrays: list[np.ndarray],
    cells: Callable[[np.ndarray], Cells],
    rows_of: Callable[[list[Cells]], bytes],
) -> Iterator[bytes]:
    """One chunk's bytes; halved while its matrix would be far over budget (long values)."""
    made = [cells(values) for values in arrays]
    rows = len(arrays[0])
    if rows > 1 and rows * sum(c.data.shape[1] for c in made) > 4 * CHUNK_BYTES:
        half = rows // 2
        yield from _chunk([a[:half] for a in arrays], cells, rows_of)
        yield from _chunk([a[half:] for a in arrays], cells, rows_of)
        return
    yield rows_of(made)


def checked(name: str, values: np.ndarray) -> np.ndarray:
    """``values`` as they can be written: numbers and Python objects; raise if the integers
    exceed a BIGINT."""
    if values.dtype.kind == "u" and values.size and values.max() > np.iinfo(np.int64).max:
        raise DatasourceError(
            f"column {name} holds integers above 2**63 - 1, more than a BIGINT holds",
            hint="cast the column to a floating-point type in the SELECT",
        )
    if values.dtype.kind not in "fiub" and values.dtype != object:
        return values.astype(object)  # numpy strings, dates: their Python values
    return values


def _binary_rows(made: list[Cells]) -> bytes:
    """Rows of the binary COPY format: the field count, then each field's length and bytes."""
    rows = len(made[0].data)
    blocks = [_big_endian(np.full(rows, len(made)), ">i2")]
    keeps = [np.ones((rows, 2), bool)]
    for cells in made:
        keep = _keep(cells)
        length = keep.sum(axis=1)
        if cells.null is not None:
            length[cells.null] = -1
            keep[cells.null] = False
        blocks += [_big_endian(length, ">i4"), cells.data]
        keeps += [np.ones((rows, 4), bool), keep]
    return _compact(blocks, keeps)


def _keep(cells: Cells) -> np.ndarray:
    if cells.keep is None:
        return np.ones(cells.data.shape, bool)
    return cells.keep.copy()


def _big_endian(values: np.ndarray, dtype: str) -> np.ndarray:
    return values.astype(dtype).view(np.uint8).reshape(len(values), -1)


def _compact(blocks: list[np.ndarray], keeps: list[np.ndarray]) -> bytes:
    """The rows of the blocks side by side, with only the bytes marked to keep."""
    matrix = np.concatenate(blocks, axis=1)
    keep = np.concatenate(keeps, axis=1)
    return matrix.tobytes() if keep.all() else matrix[keep].tobytes()


def _binary_cells(values: np.ndarray) -> Cells:
    kind = values.dtype.kind
    if kind == "b":
        return Cells(values.astype(np.uint8).reshape(-1, 1), None, None)
    if kind in "iu":
        return Cells(_big_endian(values, ">i8"), None, None)
    if kind == "f":
        return Cells(_big_endian(values, ">f8"), None, _nulls(np.isnan(values)))
    return _object_cells(values)


def _nulls(null: np.ndarray) -> np.ndarray | None:
    return null if null.any() else None


def _encoded_values(
    values: np.ndarray, escape: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Text (UTF-8) and bytes, encoded one value at a time and escaped for LOAD DATA if
    ``escape``: the values' bytes one after another, each value's length (0 for None), and
    where None is."""
    items = values.tolist()
    null = np.fromiter((v is None for v in items), bool, len(items))
    parts = [b"" if v is None else _encoded(v) for v in items]
    flat = np.frombuffer(b"".join(parts), np.uint8)
    lengths = np.fromiter(map(len, parts), np.int64, len(parts))
    if escape:
        flat, lengths = _escaped(flat, lengths)
    return flat, lengths, _nulls(null)


def _object_cells(values: np.ndarray) -> Cells:
    """Text (UTF-8) and bytes as cells; None is NULL."""
    flat, lengths, null = _encoded_values(values, escape=False)
    keep = np.arange(max(int(lengths.max(initial=0)), 1)) < lengths[:, None]
    data = np.zeros(keep.shape, np.uint8)
    data[keep] = flat  # row by row, in order
    return Cells(data, keep, null)


def _encoded(value: object) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    return str(value).encode()


def _escaped(flat: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each backslash, tab, newline and NUL byte as a backslash and a letter (UTF-8 never has
    these bytes inside a character)."""
    special = _ESCAPED[flat]
    count = int(special.sum())
    if not count:
        return flat, lengths
    owner = np.repeat(np.arange(len(lengths)), lengths)
    lengths = lengths + np.bincount(owner[special], minlength=len(lengths))
    escaped = np.repeat(flat, np.where(special, 2, 1))
    first = np.flatnonzero(special) + np.arange(count)  # where each special byte lands
    escaped[first + 1] = _ESCAPE_CODE[flat[special]]
    escaped[first] = _BACKSLASH
    return escaped, lengths
