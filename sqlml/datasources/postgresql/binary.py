"""Reading PostgreSQL results: ``COPY (query) TO STDOUT (FORMAT BINARY)``, parsed with numpy.

The rows arrive as binary COPY data (numbers as fixed-width big-endian values, no text the
server formats and the client parses). They are received here, without psycopg's per-row
machinery, into batches of a few MiB, and each batch is converted with numpy: no Python work
per numeric value, memory bounded by a batch. Each column's values are those psycopg's
cursors give (see ``fetch_batches``): integers as int64 (float64 with NaN in a batch with a
NULL), float4, float8 and numeric as float64, everything else as psycopg's Python values.
"""

from __future__ import annotations

import selectors
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
import sqlglot
from psycopg import pq
from psycopg.errors import error_from_result
from sqlglot.tokens import TokenType

from sqlml.datasources.arrays import object_array
from sqlml.datasources.base import Columns

# Type OIDs read here without psycopg: the big-endian numpy type of their binary value.
_FIXED = {21: ">i2", 23: ">i4", 20: ">i8", 26: ">u4", 700: ">f4", 701: ">f8", 16: "?"}
_INTEGER_TYPES = {21, 23, 20, 26}
_FLOAT_TYPES = {700, 701, 1700}
_NUMERIC = 1700
_NUMERIC_DIGITS = 4  # at most 16 decimal digits: an integer of int64
_POWERS = np.array([float(10**k) for k in range(23)])  # exact doubles
_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
_HEADER = len(_SIGNATURE) + 8  # the signature, flags and the header extension's length
_TRAILER = b"\xff\xff"
_BATCH_BYTES = 8 << 20
_PAD = bytes(8)
_EMPTY = {"int": np.int64, "float": np.float64, "object": object}


@dataclass(frozen=True)
class _Column:
    """How to decode one result column's binary values."""

    name: str
    oid: int
    kind: str  # "int", "float" or "object", as in fetch_batches
    loader: Any  # psycopg's binary loader, for types numpy does not decode


def columns_of(con: psycopg.Connection, description: Sequence[Any]) -> list[_Column] | None:
    """How to decode each column of a cursor's ``description``, or None if a column's type
    has no binary loader in psycopg (its cursors then read it as text)."""
    columns = []
    for d in description:
        oid = d.type_code
        kind = "int" if oid in _INTEGER_TYPES else "float" if oid in _FLOAT_TYPES else "object"
        loader = None
        if oid not in _FIXED:
            loader_class = con.adapters.get_loader(oid, pq.Format.BINARY)
            if loader_class is None:
                return None
            loader = loader_class(oid, con)
        columns.append(_Column(d.name, oid, kind, loader))
    return columns


def enclosable(select: str) -> str:
    """``select`` without the semicolons after its last token, to put in parentheses."""
    try:
        tokens = sqlglot.tokenize(select, read="postgres")
    except sqlglot.errors.TokenError:
        return select  # the server says what is wrong
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    end = tokens[-1].end + 1 if tokens else len(select)
    return select[:end] if ";" in select[end:] else select  # else only comments, if anything


def read_copy(
    cursor: psycopg.Cursor, select: str, columns: list[_Column], batch_rows: int
) -> Iterator[Columns]:
    """``select``'s rows through binary COPY on ``cursor``, in batches of at most
    ``batch_rows`` rows; an empty result is one batch of empty columns."""
    con = cursor.connection
    record = _record(columns)
    row_size = record.itemsize if record is not None and columns else -1  # not the trailer's
    try:
        # a newline before the parenthesis: the SELECT may end in a -- comment
        with cursor.copy(f"COPY ({enclosable(select)}\n) TO STDOUT (FORMAT BINARY)"):
            empty = True
            for data, ends in _row_batches(con, batch_rows, row_size):
                empty = False
                yield _fixed_batch(columns, record, data, len(ends)) or _batch(columns, data, ends)
            if empty:
                yield {c.name: np.empty(0, dtype=_EMPTY[c.kind]) for c in columns}
    except BaseException:
        _drain(con.pgconn)
        raise


def _drain(pgconn: pq.abc.PGconn) -> None:
    """Read what is left of a COPY that stopped early (psycopg has cancelled it): psycopg
    leaves the connection in the COPY when Ctrl-C comes before the COPY's first message."""
    if pgconn.transaction_status != pq.TransactionStatus.ACTIVE:
        return
    with selectors.DefaultSelector() as selector:
        selector.register(pgconn.socket, selectors.EVENT_READ)
        while True:
            result = _next_result(pgconn, selector)
            if result is None:
                return
            if result.status == pq.ExecStatus.COPY_OUT:
                while _next_message(pgconn, selector)[0] != -1:
                    pass


def _row_batches(
    con: psycopg.Connection, batch_rows: int, row_size: int
) -> Iterator[tuple[bytearray, np.ndarray]]:
    """The rows being received, in batches of at most ``batch_rows`` rows and about
    ``_BATCH_BYTES``: their bytes joined (and 8 zero bytes, so that a read of a NULL's
    value stays inside), and where each row ends.

    PostgreSQL sends each row in a CopyData message of its own (the file header comes with
    the first, or alone). Messages are taken from libpq directly: psycopg's ``Copy.read``
    costs a generator and a wait per row. Rows of ``row_size`` bytes (fixed-width values, no
    NULL) are only counted; the sizes of others are noted. Waiting for the socket lets
    signals through.
    """
    pgconn = con.pgconn
    get = pgconn.get_copy_data
    limit = min(batch_rows, _BATCH_BYTES // row_size) if row_size > 0 else batch_rows
    with selectors.DefaultSelector() as selector:
        selector.register(pgconn.socket, selectors.EVENT_READ)
        size, data = _next_message(pgconn, selector)
        if size > 0:
            data = _without_header(data)
            size = len(data)
        batch, count, other_rows, other_sizes = bytearray(), 0, [], []
        while size != -1:
            if size == row_size:
                batch += data
                count += 1
                if count == limit:
                    yield _ended(batch, count, row_size, other_rows, other_sizes)
                    batch, count, other_rows, other_sizes = bytearray(), 0, [], []
            elif size > 2 or (size == 2 and data != _TRAILER):  # a row (2 bytes: no columns)
                batch += data
                other_rows.append(count)
                other_sizes.append(size)
                count += 1
                if count == limit or len(batch) >= _BATCH_BYTES:
                    yield _ended(batch, count, row_size, other_rows, other_sizes)
                    batch, count, other_rows, other_sizes = bytearray(), 0, [], []
            elif size == 0:  # the header came alone, or libpq has no whole message yet
                size, data = _next_message(pgconn, selector)
                continue
            else:  # the trailer; the COPY's end follows (anything between is ignored)
                while _next_message(pgconn, selector)[0] != -1:
                    pass
                break
            size, data = get(1)
        if count:
            yield _ended(batch, count, row_size, other_rows, other_sizes)
        _finish(pgconn, selector, con.info.encoding)


def _ended(
    batch: bytearray, count: int, row_size: int, other_rows: list[int], other_sizes: list[int]
) -> tuple[bytearray, np.ndarray]:
    """A batch of ``count`` rows, padded, and where each row ends: ``row_size`` bytes after
    the one before, except for ``other_rows`` (``other_sizes``)."""
    sizes = np.full(count, row_size, dtype=np.int64)
    sizes[other_rows] = other_sizes
    batch += _PAD
    return batch, np.cumsum(sizes)


def _next_message(pgconn: pq.abc.PGconn, selector: selectors.BaseSelector) -> tuple[int, Any]:
    """The next CopyData message (its size and bytes), waiting for it; -1 at the COPY's end.
    What has arrived is read before waiting: half the waits of a fast stream are saved."""
    pgconn.consume_input()
    while (message := pgconn.get_copy_data(1))[0] == 0:
        selector.select()
        pgconn.consume_input()
    return message


def _without_header(data: memoryview) -> memoryview:
    if bytes(data[: len(_SIGNATURE)]) != _SIGNATURE:
        raise psycopg.DataError("the server's binary COPY data has no valid header")
    extension = int.from_bytes(data[_HEADER - 4 : _HEADER], "big")
    return data[_HEADER + extension :]


def _next_result(pgconn: pq.abc.PGconn, selector: selectors.BaseSelector) -> pq.abc.PGresult | None:
    """The connection's next result once it has all come (None: there are no more)."""
    while pgconn.is_busy():
        selector.select()
        pgconn.consume_input()
    return pgconn.get_result()


def _finish(pgconn: pq.abc.PGconn, selector: selectors.BaseSelector, encoding: str) -> None:
    """Read the results after the COPY's data; raise the error of a failed one."""
    failed = None
    while True:
        result = _next_result(pgconn, selector)
        if result is None:
            break
        if result.status != pq.ExecStatus.COMMAND_OK and failed is None:
            failed = result
    if failed is not None:
        raise error_from_result(failed, encoding=encoding)


def _record(columns: list[_Column]) -> np.dtype | None:
    """The layout of a row of ``columns`` without NULLs, if all are of fixed width: the
    number of fields, then each field's length and value."""
    if any(column.loader is not None for column in columns):
        return None
    fields = [("count", ">i2")]
    for j, column in enumerate(columns):
        fields += [(f"length{j}", ">i4"), (f"value{j}", _FIXED[column.oid])]
    return np.dtype(fields)


def _fixed_batch(
    columns: list[_Column], record: np.dtype | None, data: bytearray, rows: int
) -> Columns | None:
    """A batch whose rows all have the layout ``record`` (no NULLs), read as records; None
    if it has other rows."""
    if record is None or len(data) - len(_PAD) != rows * record.itemsize:
        return None
    rows_of = np.frombuffer(data, record, count=rows)
    if not np.all(rows_of["count"] == len(columns)):
        return None
    for j in range(len(columns)):
        if not np.all(rows_of[f"length{j}"] == record[f"value{j}"].itemsize):
            return None
    no_null = np.zeros(rows, dtype=bool)
    return {
        column.name: _numbers(column, rows_of[f"value{j}"], no_null)
        for j, column in enumerate(columns)
    }


def _batch(columns: list[_Column], data: bytearray, ends: np.ndarray) -> Columns:
    """Each column's values in one batch of binary rows, field by field across all rows."""
    buffer = np.frombuffer(data, np.uint8)
    starts = np.empty_like(ends)
    starts[0], starts[1:] = 0, ends[:-1]
    if len(data) < 2 or not np.all(_gather(data, starts, ">i2") == len(columns)):
        raise psycopg.DataError(f"binary COPY rows do not have {len(columns)} fields each")
    at = starts + 2
    out: Columns = {}
    for column in columns:
        length = _gather(data, np.minimum(at, len(buffer) - 4), ">i4").astype(np.int64)
        null = length < 0
        at = at + 4
        out[column.name] = _values(column, data, at, length, null)
        at = at + np.maximum(length, 0)
    if not np.array_equal(at, ends):
        raise psycopg.DataError("binary COPY rows end where their fields do not")
    return out


def _gather(data: bytearray, at: np.ndarray, dtype: str) -> np.ndarray:
    """The values of ``dtype`` starting at byte offsets ``at`` of ``data`` (the offsets of
    NULL fields, whose bytes are not values, must still lie inside: see ``_PAD``)."""
    width = np.dtype(dtype).itemsize
    return np.ndarray((len(data) - width + 1,), dtype, data, strides=(1,))[at]


def _values(
    column: _Column, data: bytearray, at: np.ndarray, length: np.ndarray, null: np.ndarray
) -> np.ndarray:
    """One column's values in a batch: its fields start at ``at`` and are ``length`` long."""
    if column.loader is None:
        return _numbers(column, _gather(data, at, _FIXED[column.oid]), null)
    if column.oid == _NUMERIC:
        return _numeric(column, data, at, length, null)
    return object_array(_loaded(column, data, at, length))


def _loaded(column: _Column, data: bytearray, at: np.ndarray, length: np.ndarray) -> list[Any]:
    """psycopg's values of the fields at ``at`` of ``length`` bytes (None where negative)."""
    load = column.loader.load
    view = memoryview(data)
    return [
        None if size < 0 else load(view[start : start + size])
        for start, size in zip(at.tolist(), length.tolist(), strict=True)
    ]


def _numeric(
    column: _Column, data: bytearray, at: np.ndarray, length: np.ndarray, null: np.ndarray
) -> np.ndarray:
    """Numeric values as the nearest doubles (NULL as NaN), as psycopg's Decimals convert.

    A value is its digits (base 10000) times a power of 10000. Where its digits make an
    integer n <= 2**53 and the power is 10**e with |e| <= 22, n and 10**|e| are exact
    doubles and one multiplication or division rounds correctly. Others (more digits, NaN,
    infinities) go through psycopg's Decimal."""
    count = _gather(data, at, ">i2").astype(np.int64)
    weight = _gather(data, at + 2, ">i2").astype(np.int64)
    sign = _gather(data, at + 4, ">u2")
    known = ~null & ((sign == 0) | (sign == 0x4000)) & (count <= _NUMERIC_DIGITS)
    n = np.zeros(len(at), np.int64)
    for i in range(int(count[known].max(initial=0))):
        digit = known & (i < count)
        n = np.where(
            digit, n * 10_000 + _gather(data, np.where(digit, at + 8 + 2 * i, 0), ">i2"), n
        )
    power = 4 * (weight - count + 1)
    exact = known & (n <= 2**53) & (np.abs(power) <= 22)
    scale = _POWERS[np.where(exact, np.abs(power), 0)]
    values = np.where(power >= 0, n * scale, n / scale)
    values[sign == 0x4000] *= -1
    values[null] = np.nan
    if not exact.all():
        rest = np.flatnonzero(~exact & ~null)
        values[rest] = np.array(_loaded(column, data, at[rest], length[rest]), dtype=np.float64)
    return values


def _numbers(column: _Column, values: np.ndarray, null: np.ndarray) -> np.ndarray:
    """A fixed-width column's binary ``values`` (meaningless where ``null``) as psycopg's
    cursors give them: int64 (float64 with NaN if NULLs), float64, or Python's booleans."""
    if column.oid == 16:
        return object_array(
            [None if n else v for n, v in zip(null.tolist(), values.tolist(), strict=True)]
        )
    if column.oid == 700:  # float4 reads as the double its shortest text names
        values = values.astype("U16").astype(np.float64)
    if column.kind == "float" or null.any():
        values = values.astype(np.float64)
        values[null] = np.nan
        return values
    return values.astype(np.int64)
