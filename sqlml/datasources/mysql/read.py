"""Reading MySQL and MariaDB results: the binary protocol's row packets, parsed with numpy.

A SELECT runs as a prepared statement, so that rows arrive in the binary protocol (numbers
as fixed-width binary values, not text the server formats and the client parses); the row
packets are received here straight from the socket into a buffer of a few MiB, found in it
with numpy where rows of one length follow each other, and each batch is converted with
numpy: no Python work per numeric value (nor per row where the rows have one length),
memory bounded by a batch. :func:`column_kind` gives the
kind of a column that pymysql's text protocol reads instead.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pymysql
from pymysql.connections import MAX_PACKET_LEN
from pymysql.constants import COMMAND, CR, FIELD_TYPE, FLAG
from pymysql.protocol import FieldDescriptorPacket, MysqlPacket

from sqlml.datasources.arrays import object_array
from sqlml.datasources.base import Columns

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


def _row_batches(
    con: pymysql.Connection, batch_rows: int
) -> Iterator[tuple[bytearray, np.ndarray]]:
    """The binary rows being received, in batches of at most ``batch_rows`` rows and about
    ``_BATCH_BYTES``: the buffer they arrived in, and where each row's payload starts in it.

    Reads the socket itself, into buffers of a few MiB (pymysql would read each packet with
    two calls and make Python values of every field); rows of one length in a row are found
    with numpy, others one by one. The buffer handed out is written again once the next batch
    is asked for (convert each batch first); it has ``_SLACK`` bytes past its data, so
    fixed-width reads past a row's last field stay inside.
    """
    received = _Received(con)
    sequence = con._next_seq_id
    pending: list[np.ndarray] = []
    count = 0
    while True:
        starts, sequence, state = _walk(received, sequence, batch_rows - count)
        pending.append(starts)
        count += len(starts)
        if state == _MORE and count < batch_rows and received.fits_next():
            received.receive()
            continue
        if count:
            yield received.buffer, np.concatenate(pending)
            pending, count = [], 0
            received.compact()
        elif not received.fits_next():
            received.compact()
        if state == _LONG:
            row, sequence = _long_row(received, sequence)
            yield bytearray(row + bytes(_SLACK)), np.zeros(1, np.int64)
        elif state == _END:
            break
    received.end(sequence)
    con._next_seq_id = (sequence + 1) % 256


# How _walk stopped: more bytes needed, a terminating packet reached, a row of 16 MiB or more.
_MORE, _END, _LONG = range(3)
_SLACK = 8
_RUN = 16  # the fewest rows of one length in a row taken as a run
_PROBE = 256  # rows checked at first for a run
_WALK = 64  # rows walked one by one after a probe found no run


class _Received:
    """A result's bytes as they arrive: a buffer filled straight from the socket, the part of
    it walked (``at``) and the part received (``filled``). The bytes pymysql's socket file
    has read ahead come first (``buffered``: it may still hold some)."""

    def __init__(self, con: pymysql.Connection) -> None:
        self.con = con
        self.buffer = bytearray(_BATCH_BYTES + _SLACK)
        self.at = self.filled = 0
        self.buffered = True

    def length(self) -> int | None:
        """The length of the packet at ``at`` if its header has arrived."""
        at, buffer = self.at, self.buffer
        if at + 4 > self.filled:
            return None
        return buffer[at] | buffer[at + 1] << 8 | buffer[at + 2] << 16

    def fits_next(self) -> bool:
        """Whether the packet at ``at`` can arrive whole in this buffer."""
        length = self.length()
        return self.at + 4 + (length or 0) <= len(self.buffer) - _SLACK

    def compact(self) -> None:
        """The bytes not yet walked moved to the buffer's start, the buffer grown if the next
        packet would not fit whole."""
        left = self.buffer[self.at : self.filled]
        size = 4 + (self.length() or 0) + _SLACK
        if size > len(self.buffer):
            self.buffer = bytearray(size)
        self.buffer[: len(left)] = left
        self.at, self.filled = 0, len(left)

    def receive(self) -> None:
        """At least one more byte from the socket, as many as have arrived and fit."""
        view = memoryview(self.buffer)[self.filled : len(self.buffer) - _SLACK]
        try:
            if self.buffered:  # the file's bytes if it holds any, else what one read gets
                data = self.con._rfile.read1(len(view))
                count = len(data)
                view[:count] = data
                self.buffered = count == len(view)
            else:
                count = self.con._sock.recv_into(view)
        except OSError as error:
            self.con._force_close()
            raise pymysql.err.OperationalError(
                CR.CR_SERVER_LOST, f"Lost connection to MySQL server during query ({error})"
            ) from None
        except BaseException:
            self.con._force_close()
            raise
        finally:
            view.release()
        if not count:
            self.con._force_close()
            raise pymysql.err.OperationalError(
                CR.CR_SERVER_LOST, "Lost connection to MySQL server during query"
            )
        self.filled += count

    def packet(self) -> tuple[int, bytes]:
        """The packet at ``at`` whole, waiting for it: its sequence number and payload."""
        while True:
            length = self.length()
            if length is not None and self.at + 4 + length <= self.filled:
                break
            if not self.fits_next():
                self.compact()
            self.receive()
        at = self.at
        self.at = at + 4 + length
        return self.buffer[at + 3], bytes(self.buffer[at + 4 : self.at])

    def end(self, sequence: int) -> None:
        """The packet at ``at`` ends the rows (number ``sequence``): raise its error, if it
        is one."""
        number, payload = self.packet()
        if number != sequence:
            _out_of_sequence(self.con, number, sequence)
        if self.at != self.filled:
            _protocol_error(self.con, "bytes after the end of the rows")
        if payload[:1] == b"\xff":
            MysqlPacket(payload, self.con.encoding).raise_for_error()
        if payload[:1] != b"\xfe":
            _protocol_error(self.con, f"a packet starting with {payload[:1]!r} after the rows")


def _walk(received: _Received, sequence: int, batch_rows: int) -> tuple[np.ndarray, int, int]:
    """The rows whose packets have arrived whole from ``received.at`` on (``batch_rows`` at
    most): where their payloads start, the next sequence number, and why the walk stopped."""
    buffer, filled = received.buffer, received.filled
    at, room, walk = received.at, batch_rows, 0
    parts: list[np.ndarray] = []
    single: list[int] = []
    state = _MORE
    while room:
        if at + 4 > filled:
            break
        length = buffer[at] | buffer[at + 1] << 8 | buffer[at + 2] << 16
        if at + 4 + length > filled:
            break
        if buffer[at + 3] != sequence:
            _out_of_sequence(received.con, buffer[at + 3], sequence)
        if length == MAX_PACKET_LEN:
            state = _LONG
            break
        if not length or buffer[at + 4]:  # rows start with a 0 byte; an EOF or error packet
            state = _END
            break
        stride = length + 4
        run = 0 if walk else _run(buffer, at, min((filled - at) // stride, room), stride, sequence)
        if run:
            if single:
                parts.append(np.array(single, np.int64))
                single = []
            parts.append(np.arange(at + 4, at + 4 + run * stride, stride, dtype=np.int64))
        else:
            single.append(at + 4)
            walk = walk - 1 if walk else _WALK
            run = 1
        at += run * stride
        sequence = (sequence + run) % 256
        room -= run
    received.at = at
    if single:
        parts.append(np.array(single, np.int64))
    starts = np.concatenate(parts) if parts else np.empty(0, np.int64)
    return starts, sequence, state


def _run(buffer: bytearray, at: int, count: int, stride: int, sequence: int) -> int:
    """How many of the next ``count`` packets from ``at`` are rows of the first one's length
    in sequence (0 if fewer than ``_RUN``): checked with numpy, ``_PROBE`` first, then in
    windows growing eightfold (to ``_WINDOW``). Each packet's first 8 bytes are read as one
    number: its header (length, sequence number), the row's 0 byte and 3 more, masked."""
    if count < _RUN:
        return 0
    total, window = 0, _PROBE
    while total < count:
        window = min(window, count - total)
        offset = at + total * stride
        starts = np.ndarray((window,), "<u8", buffer, offset, (stride,))
        first = (sequence + total) % 256
        expected = _SEQUENCES[first : first + window] | np.uint64(stride - 4)
        same = (starts & _HEADER_AND_ZERO) == expected
        if not same.all():
            total += int(same.argmin())
            break
        total += window
        window = min(window * 8, _WINDOW)
    return total if total >= _RUN else 0


_WINDOW = 1 << 16
_SEQUENCES = (np.arange(_WINDOW + 256, dtype=np.uint64) % 256) << np.uint64(24)
_HEADER_AND_ZERO = np.uint64(0xFF_FFFF_FFFF)  # the header's 4 bytes and the row's 0 byte


def _long_row(received: _Received, sequence: int) -> tuple[bytes, int]:
    """A row of 16 MiB or more, its packets joined; the next sequence number."""
    parts = []
    length = MAX_PACKET_LEN
    while length == MAX_PACKET_LEN:
        number, payload = received.packet()
        if number != sequence:
            _out_of_sequence(received.con, number, sequence)
        sequence = (sequence + 1) % 256
        parts.append(payload)
        length = len(payload)
    return b"".join(parts), sequence


def _out_of_sequence(con: pymysql.Connection, got: int, expected: int) -> None:
    _protocol_error(con, f"Packet sequence number wrong - got {got} expected {expected}")


def _protocol_error(con: pymysql.Connection, message: str) -> None:
    """Close the connection, whose state is unknown, and raise ``message``."""
    con._force_close()
    raise pymysql.err.InternalError(message)


def _convert(
    con: pymysql.Connection,
    statement: int,
    columns: list[_Column],
    batches: Iterator[tuple[bytearray, np.ndarray]],
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


def _batch_arrays(
    columns: list[_Column], data: bytes | bytearray, starts: np.ndarray
) -> Iterator[np.ndarray]:
    """Each column's values in one batch of binary rows, field by field across all rows at once."""
    if any(column.dtype is None for column in columns):
        data = bytes(data)  # text fields sliced as bytes
    packet = np.frombuffer(data, np.uint8)
    stride = _stride(starts)
    # each row: a 0 byte, the NULL bitmap (bits offset by 2), the non-NULL values. A field's
    # place: an offset, the same in every row while no NULL or text came before it, else an
    # array of each row's position
    at: int | np.ndarray = 1 + (len(columns) + 9) // 8
    for j, column in enumerate(columns):
        flags = _gather(data, np.uint8, starts, 1 + (j + 2) // 8, stride)
        null = (flags >> (j + 2) % 8 & 1).astype(bool)
        if column.dtype is not None:
            width = np.dtype(column.dtype).itemsize
            values = _gather(data, column.dtype, starts, at, stride)
            if isinstance(at, int) and not null.any():
                at += width
            else:
                at = _positions(starts, at) + np.where(null, 0, width)
            yield _numbers(values, null)
            continue
        at = _positions(starts, at)
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


def _stride(starts: np.ndarray) -> int | None:
    """The distance between consecutive rows if it is the same throughout the batch."""
    if len(starts) < 2:
        return 1
    steps = np.diff(starts)
    return int(steps[0]) if (steps == steps[0]).all() else None


def _positions(starts: np.ndarray, at: int | np.ndarray) -> np.ndarray:
    """Each row's position of a field at ``at`` (an offset in every row, or the positions)."""
    return starts + at if isinstance(at, int) else at


def _gather(
    data: bytes | bytearray,
    dtype: str | type,
    starts: np.ndarray,
    at: int | np.ndarray,
    stride: int | None,
) -> np.ndarray:
    """A copy of the values of type ``dtype`` at ``at`` in every row: a strided view's copy
    where the rows are evenly spaced and the field at one offset, else a gather."""
    if isinstance(at, int) and stride is not None:
        return np.ndarray((len(starts),), dtype, data, int(starts[0]) + at, (stride,)).copy()
    # every byte offset viewed as the start of a value; gather the rows' positions
    width = np.dtype(dtype).itemsize
    return np.ndarray((len(data) - width + 1,), dtype, data, strides=(1,))[_positions(starts, at)]


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
