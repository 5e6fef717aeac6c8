"""Reading MySQL and MariaDB results: the binary protocol's row packets, parsed with numpy.

A SELECT runs as a prepared statement, so that rows arrive in the binary protocol (numbers
as fixed-width binary values, not text the server formats and the client parses); the row
packets are read here in batches of a few MiB and each batch is converted with numpy: no
Python work per numeric value, memory bounded by a batch. :func:`column_kind` gives the
kind of a column that pymysql's text protocol reads instead.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pymysql
from pymysql.connections import MAX_PACKET_LEN
from pymysql.constants import COMMAND, FIELD_TYPE, FLAG
from pymysql.protocol import FieldDescriptorPacket, MysqlPacket

from sqlml.runtime.datasource.base import Columns, object_array

_INTEGER_TYPES = {
    FIELD_TYPE.TINY,
    FIELD_TYPE.SHORT,
    FIELD_TYPE.LONG,
    FIELD_TYPE.LONGLONG,
    FIELD_TYPE.INT24,
    FIELD_TYPE.YEAR,
}
_FLOAT_TYPES = {FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE, FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL}
# Binary protocol: fixed-width values' sizes; decimals and strings are length-prefixed text.
# FLOAT is left to the text protocol, whose values the server rounds to 6 digits.
_WIDTHS = {
    FIELD_TYPE.TINY: 1,
    FIELD_TYPE.SHORT: 2,
    FIELD_TYPE.YEAR: 2,
    FIELD_TYPE.INT24: 4,
    FIELD_TYPE.LONG: 4,
    FIELD_TYPE.LONGLONG: 8,
    FIELD_TYPE.DOUBLE: 8,
}
_STRING_TYPES = {
    FIELD_TYPE.VARCHAR,
    FIELD_TYPE.VAR_STRING,
    FIELD_TYPE.STRING,
    FIELD_TYPE.TINY_BLOB,
    FIELD_TYPE.MEDIUM_BLOB,
    FIELD_TYPE.LONG_BLOB,
    FIELD_TYPE.BLOB,
    FIELD_TYPE.JSON,
}
_BINARY_CHARSET = 63
_BATCH_BYTES = 4 << 20


def column_kind(type_code: int) -> str:
    """The kind ("int", "float" or "object", as in ``fetch_batches``) of a field type."""
    if type_code in _INTEGER_TYPES:
        return "int"
    return "float" if type_code in _FLOAT_TYPES else "object"


@dataclass(frozen=True)
class _Column:
    """How to decode one result column from binary row packets."""

    name: str
    kind: str  # "int", "float" or "object", as in fetch_batches
    dtype: str | None  # the binary value's type if fixed-width; None if length-prefixed
    encoding: str | None  # text's encoding; None for bytes


def _columns(fields: list[FieldDescriptorPacket], encoding: str) -> list[_Column] | None:
    """How to decode each field, or None if the binary path leaves one's type to pymysql."""
    columns = []
    for field in fields:
        code = field.type_code
        if code == FIELD_TYPE.DOUBLE:
            columns.append(_Column(field.name, "float", "<f8", None))
        elif code in _WIDTHS:
            sign = "u" if field.flags & FLAG.UNSIGNED else "i"
            columns.append(_Column(field.name, "int", f"<{sign}{_WIDTHS[code]}", None))
        elif code in (FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL):
            columns.append(_Column(field.name, "float", None, None))
        elif code in _STRING_TYPES:
            binary = field.charsetnr == _BINARY_CHARSET and code != FIELD_TYPE.JSON
            columns.append(_Column(field.name, "object", None, None if binary else encoding))
        else:
            return None
    return columns


def read_binary(con: pymysql.Connection, select: str, batch_rows: int) -> Iterator[Columns] | None:
    """``select``'s result read in the binary protocol, in batches; None if it needs pymysql's
    text protocol."""
    try:
        con._execute_command(COMMAND.COM_STMT_PREPARE, select)
        prepared = con._read_packet()
    except pymysql.MySQLError:
        if not con.open:
            raise
        return None  # not preparable here: the text protocol runs it or reports the error
    statement, n_columns, n_params = struct.unpack_from("<xIHH", prepared.get_all_data())
    try:
        _definitions(con, n_params)
        columns = _columns(_definitions(con, n_columns), con.encoding)
        if n_params or not columns:
            _close_statement(con, statement)
            return None
        con._execute_command(COMMAND.COM_STMT_EXECUTE, struct.pack("<IBI", statement, 0, 1))
        count = con._read_packet().read_length_encoded_integer()
        columns = _columns(_definitions(con, count), con.encoding)
    except BaseException:
        _close_statement(con, statement)
        raise
    batches = _row_batches(con, batch_rows)
    if columns is None:  # the executed statement's types differ from the prepared one's
        for _ in batches:
            pass
        _close_statement(con, statement)
        return None
    return _convert(con, statement, columns, batches)


def _close_statement(con: pymysql.Connection, statement: int) -> None:
    if con.open:
        con._execute_command(COMMAND.COM_STMT_CLOSE, struct.pack("<I", statement))


def _definitions(con: pymysql.Connection, count: int) -> list[FieldDescriptorPacket]:
    """Read ``count`` column (or parameter) definitions and the EOF packet after them."""
    if not count:
        return []
    fields = [con._read_packet(FieldDescriptorPacket) for _ in range(count)]
    con._read_packet()
    return fields


def _row_batches(con: pymysql.Connection, batch_rows: int) -> Iterator[tuple[bytes, np.ndarray]]:
    """The binary rows being received, in batches of at most ``batch_rows`` rows and about
    ``_BATCH_BYTES``: their payloads joined, and where each starts.

    Reads the packets itself: pymysql would make Python values of every field of every row.
    Each batch ends with 8 zero bytes, so fixed-width reads past the last field stay inside.
    """
    read = con._read_bytes  # raises (and closes the connection) if the connection is lost
    sequence = con._next_seq_id
    batch, starts = bytearray(), []
    while True:
        header = read(4)
        if header[3] != sequence:
            _out_of_sequence(con, header[3], sequence)
        sequence = (sequence + 1) % 256
        length = header[0] | header[1] << 8 | header[2] << 16
        payload = read(length)
        if length == MAX_PACKET_LEN:
            payload, sequence = _rest_of_row(con, payload, sequence)
        if payload[0] != 0:  # an EOF or error packet ends the rows; rows start with 0
            break
        starts.append(len(batch))
        batch += payload
        if len(batch) >= _BATCH_BYTES or len(starts) == batch_rows:
            yield bytes(batch + bytes(8)), np.array(starts, dtype=np.int64)
            batch, starts = bytearray(), []
    con._next_seq_id = sequence
    if payload[0] == 0xFF:
        MysqlPacket(payload, con.encoding).raise_for_error()
    if starts:
        yield bytes(batch + bytes(8)), np.array(starts, dtype=np.int64)


def _rest_of_row(con: pymysql.Connection, payload: bytes, sequence: int) -> tuple[bytes, int]:
    """A row of 16 MiB or more: ``payload`` joined with the packets that continue it."""
    parts = [payload]
    length = MAX_PACKET_LEN
    while length == MAX_PACKET_LEN:
        header = con._read_bytes(4)
        if header[3] != sequence:
            _out_of_sequence(con, header[3], sequence)
        sequence = (sequence + 1) % 256
        length = header[0] | header[1] << 8 | header[2] << 16
        parts.append(con._read_bytes(length))
    return b"".join(parts), sequence


def _out_of_sequence(con: pymysql.Connection, got: int, expected: int) -> None:
    con._force_close()
    raise pymysql.err.InternalError(f"Packet sequence number wrong - got {got} expected {expected}")


def _convert(
    con: pymysql.Connection,
    statement: int,
    columns: list[_Column],
    batches: Iterator[tuple[bytes, np.ndarray]],
) -> Iterator[Columns]:
    """Columns from the row batches, batch by batch; the prepared statement is closed after."""
    try:
        empty = True
        for data, starts in batches:
            empty = False
            arrays = _batch_arrays(columns, data, starts)
            yield {column.name: values for column, values in zip(columns, arrays, strict=True)}
        if empty:
            yield {column.name: _EMPTY[column.kind] for column in columns}
    finally:
        for _ in batches:  # read the rest of the rows: the connection stays usable
            pass
        _close_statement(con, statement)


_EMPTY = {
    "int": np.empty(0, np.int64),
    "float": np.empty(0, np.float64),
    "object": np.empty(0, object),
}


def _batch_arrays(columns: list[_Column], data: bytes, starts: np.ndarray) -> Iterator[np.ndarray]:
    """Each column's values in one batch of binary rows, field by field across all rows at once."""
    packet = np.frombuffer(data, np.uint8)
    # each row: a 0 byte, the NULL bitmap (bits offset by 2), the non-NULL values
    at = starts + 1 + (len(columns) + 9) // 8
    for j, column in enumerate(columns):
        null = (packet[starts + 1 + (j + 2) // 8] >> (j + 2) % 8 & 1).astype(bool)
        if column.dtype is not None:
            width = np.dtype(column.dtype).itemsize
            # every byte offset viewed as the start of a value; gather the rows' offsets
            values = np.ndarray((len(packet) - width + 1,), column.dtype, data, strides=(1,))[at]
            at = at + np.where(null, 0, width)
            yield _numbers(values, null)
            continue
        start, length = _text_fields(packet, at, null)
        at = start + length
        cells = [
            None if is_null else data[begin:end]
            for is_null, begin, end in zip(null.tolist(), start.tolist(), at.tolist(), strict=True)
        ]
        if column.kind == "float":
            yield np.array(cells, dtype=np.float64)  # decimals' text; None becomes NaN
        elif column.encoding is None:
            yield object_array(cells)
        else:
            yield object_array([None if c is None else c.decode(column.encoding) for c in cells])


def _numbers(values: np.ndarray, null: np.ndarray) -> np.ndarray:
    """Fixed-width values as int64 (unsigned ones past int64 as float64) or float64 with NaN."""
    if values.dtype.kind == "f" or null.any():
        values = values.astype(np.float64, copy=False)
        values[null] = np.nan
        return values
    if values.dtype == np.uint64 and values.size and values.max() > np.iinfo(np.int64).max:
        return values.astype(np.float64)
    return values.astype(np.int64, copy=False)


def _text_fields(
    packet: np.ndarray, at: np.ndarray, null: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Where the length-prefixed fields at ``at`` start and how long they are (0 if NULL)."""
    first = packet[at].astype(np.int64)
    start, length = at + 1, np.where(null, 0, first)
    for marker, size in ((0xFC, 2), (0xFD, 3), (0xFE, 8)):  # longer lengths: 2, 3 or 8 bytes
        rows = np.flatnonzero((first == marker) & ~null)
        if rows.size:
            length[rows] = sum(
                packet[at[rows] + 1 + k].astype(np.int64) << 8 * k for k in range(size)
            )
            start[rows] += size
    start[null] = at[null]
    return start, length
