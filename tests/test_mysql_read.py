"""MySQL reads in the binary protocol (sqlml/datasources/mysql/read.py): every type as
the text protocol reads it, rows of one length and of many, batches split anywhere, errors
among the rows; and the row packets' parser on streams written here (split packets,
sequence numbers, what may follow the rows)."""

from __future__ import annotations

import datetime
import struct
from collections.abc import Iterator

import numpy as np
import pymysql
import pytest

from sqlml.datasources import connect
from sqlml.datasources.arrays import batch_array, fetch_batches, join_batches
from sqlml.datasources.mysql import read as reader
from sqlml.datasources.mysql.source import MySQLSource
from sqlml.errors import DatasourceError

TYPES = """(k INT, t TINYINT, s SMALLINT UNSIGNED, m MEDIUMINT, i INT, n BIGINT,
 u BIGINT UNSIGNED, y YEAR, d DOUBLE, c DECIMAL(12,3), v VARCHAR(20), x TEXT, b VARBINARY(8),
 j JSON)"""
ROWS = """
 (1, -128, 65535, -8388608, -2147483648, -9223372036854775808, 4294967296, 2024,
  -0.0, -123456789.125, 'é 😀', REPEAT('long ', 60), X'00FF', '{"a": [1, 2]}'),
 (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (3, 127, 0, 8388607, 2147483647, 9223372036854775807, 0, 1901, 1.7976931348623157e308,
  0.001, '', '', X'', 'null'),
 (4, 0, 1, NULL, 2, NULL, 3, NULL, 5e-324, NULL, 'x', NULL, X'01', NULL)"""


@pytest.fixture
def source(mysql_url) -> Iterator[MySQLSource]:
    ds = connect(mysql_url)
    yield ds
    ds.close()


@pytest.fixture
def typed(source, unique_name) -> Iterator[str]:
    """A table of every type the binary path reads, NULLs here and there."""
    source.execute(f"CREATE TABLE {unique_name} {TYPES}")
    source.execute(f"INSERT INTO {unique_name} VALUES {ROWS}")
    yield unique_name
    source.execute(f"DROP TABLE {unique_name}")


def thousands(count: int) -> str:
    """A WITH clause of a table ``n`` of the integers ``k`` from 0 to ``count`` thousand."""
    return (
        "WITH RECURSIVE r(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM r WHERE k < 999), "
        f"n AS (SELECT a.k * 1000 + b.k AS k FROM r AS a, r AS b WHERE a.k < {count})"
    )


def by_text(source: MySQLSource, select: str, batch_rows: int) -> list[dict]:
    """The batches of pymysql's text protocol: what the binary path must match."""
    with source._live().cursor(pymysql.cursors.SSCursor) as cursor:
        cursor.execute(select)
        kinds = [reader.column_kind(d[1]) for d in cursor.description]
        return list(fetch_batches(cursor, kinds, batch_rows))


def by_binary(source: MySQLSource, select: str, batch_rows: int) -> list[dict]:
    batches = reader.read_binary(source._live(), select, batch_rows)
    assert batches is not None, "read by the text protocol"
    return list(batches)


def assert_same(found: list[dict], expected: list[dict]) -> None:
    """The same batches: columns, dtypes, values and Python types (NaN and -0.0 included)."""
    assert len(found) == len(expected)
    for batch, want in zip(found, expected, strict=True):
        assert list(batch) == list(want)
        for name, values in batch.items():
            assert values.dtype == want[name].dtype, name
            if values.dtype.kind == "f":
                assert np.array_equal(values, want[name], equal_nan=True), name
                assert np.array_equal(np.signbit(values), np.signbit(want[name])), name
                continue
            got, wanted = values.tolist(), want[name].tolist()
            assert got == wanted, name
            assert [type(v) for v in got] == [type(v) for v in wanted], name


@pytest.mark.parametrize("batch_rows", [65_536, 3, 1])
def test_every_type_reads_as_the_text_protocol_reads_it(source, typed, batch_rows):
    select = f"SELECT * FROM {typed} ORDER BY k"
    found = by_binary(source, select, batch_rows)
    assert_same(found, by_text(source, select, batch_rows))
    assert found[0]["n"].dtype == (np.float64 if batch_rows > 1 else np.int64)  # NULL: NaN
    assert source.execute("SELECT 1").rows == [(1,)]  # the connection goes on


def test_unsigned_integers_past_int64_read_as_doubles(source):
    found = source.read("SELECT CAST(18446744073709551615 AS UNSIGNED) AS u, 1 AS k")
    assert found["u"].dtype == np.float64 and found["u"].tolist() == [2.0**64]
    assert found["k"].dtype == np.int64


def test_unsigned_integers_past_int64_in_text_rows_read_as_doubles():
    u = batch_array([2**64 - 1, 1], "int")
    assert u.dtype == np.float64 and u.tolist() == [2.0**64, 1.0]


def test_rows_longer_than_the_buffer_grow_it(source, typed, monkeypatch):
    """A buffer of 64 bytes: the first row (more than 300 bytes) is a batch of its own, in
    the buffer grown for it."""
    monkeypatch.setattr(reader, "_BATCH_BYTES", 64)
    select = f"SELECT * FROM {typed} ORDER BY k"
    found = by_binary(source, select, 65_536)
    assert [len(batch["k"]) for batch in found] == [1, 3]
    assert_same([join_batches(found)], [join_batches(by_text(source, select, 65_536))])


def test_rows_of_one_length_and_of_many_in_one_result(source, unique_name, monkeypatch):
    """5,000 rows: runs of one length (taken with numpy) broken by a NULL or a longer text
    every 97 rows, the sequence numbers wrapping past 255; buffers of about 10 KiB."""
    monkeypatch.setattr(reader, "_BATCH_BYTES", 10_000)
    source.execute(f"CREATE TABLE {unique_name} (k BIGINT, x DOUBLE, s VARCHAR(20))")
    try:
        source.execute(
            f"INSERT INTO {unique_name} {thousands(5)} SELECT k, IF(k % 97 = 5, NULL, k / 8), "
            "IF(k % 97 = 50, 'a longer text', 'ab') FROM n"
        )
        batches = by_binary(source, f"SELECT * FROM {unique_name} ORDER BY k", 700)
    finally:
        source.execute(f"DROP TABLE {unique_name}")
    assert len(batches) > 5 and max(len(b["k"]) for b in batches) <= 700
    k = np.concatenate([b["k"] for b in batches])
    x = np.concatenate([b["x"] for b in batches])
    s = np.concatenate([b["s"] for b in batches])
    assert k.tolist() == list(range(5000))
    expected_x = np.where(k % 97 == 5, np.nan, k / 8)
    assert np.array_equal(x, expected_x, equal_nan=True)
    assert s.tolist() == ["a longer text" if i % 97 == 50 else "ab" for i in range(5000)]


def test_an_error_among_the_rows_is_reported_and_the_connection_goes_on(source, unique_name):
    source.execute(f"CREATE TABLE {unique_name} (k INT)")
    source.execute(f"INSERT INTO {unique_name} VALUES (1), (2), (2)")
    try:
        # the subquery finds two rows only for k = 2: the error comes after row 1 was sent
        select = (
            f"SELECT k, (SELECT b.k FROM {unique_name} AS b WHERE b.k = a.k) AS same "
            f"FROM {unique_name} AS a ORDER BY k"
        )
        with pytest.raises(DatasourceError, match="more than 1 row"):
            source.read(select)
        assert source.execute(f"SELECT COUNT(*) FROM {unique_name}").rows == [(3,)]
    finally:
        source.execute(f"DROP TABLE {unique_name}")


def test_a_read_left_early_leaves_the_connection_usable(source):
    select = f"{thousands(100)} SELECT k, k * 0.5e0 AS h FROM n ORDER BY k"
    batches = source.read_batches(select, 1000)
    assert next(batches)["k"].tolist() == list(range(1000))
    batches.close()
    assert source.execute("SELECT 2").rows == [(2,)]


def test_a_type_left_to_the_text_protocol_reads_the_whole_result_there(source):
    select = "SELECT 1 AS k, DATE '2024-02-29' AS d"
    assert reader.read_binary(source._live(), select, 10) is None
    found = source.read(select)
    assert found["k"].tolist() == [1] and found["d"].tolist() == [datetime.date(2024, 2, 29)]


# The parser on streams written here ---------------------------------------------------------


class _Stream:
    """A socket giving ``data`` ``step`` bytes at a time, and a socket file that has read
    its first ``step`` bytes ahead."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step, self.at, self.ahead = data, step, 0, data[:step]

    def read1(self, size: int) -> bytes:
        if not self.ahead:
            count = self.recv_into(memoryview(bytearray(size)))
            return self.data[self.at - count : self.at]
        taken, self.ahead = self.ahead[:size], self.ahead[size:]
        self.at += len(taken)
        return taken

    def recv_into(self, view: memoryview) -> int:
        assert not self.ahead, "the socket read before the file's bytes"
        count = min(len(view), self.step, len(self.data) - self.at)
        view[:count] = self.data[self.at : self.at + count]
        self.at += count
        return count


class _Connection:
    """What the parser uses of a pymysql connection."""

    encoding = "utf8"

    def __init__(self, data: bytes, step: int, sequence: int) -> None:
        self._rfile = self._sock = _Stream(data, step)
        self._next_seq_id = sequence
        self.closed = False

    def _force_close(self) -> None:
        self.closed = True


def packets(payloads: list[bytes], sequence: int) -> bytes:
    """The payloads as packets numbered from ``sequence``."""
    out = b""
    for number, payload in enumerate(payloads, sequence):
        out += struct.pack("<I", len(payload) | number % 256 << 24) + payload
    return out


def row(*values: int) -> bytes:
    """A binary row of BIGINTs without NULLs."""
    return b"\0" + bytes((len(values) + 9) // 8) + struct.pack(f"<{len(values)}q", *values)


EOF_PACKET = b"\xfe\0\0\x22\0"
COLUMNS = [reader._Column("a", "int", "<i8", None), reader._Column("b", "int", "<i8", None)]


def parse(data: bytes, step: int, sequence: int, batch_rows: int) -> tuple[list, _Connection]:
    """Each batch's columns (COLUMNS) as lists, and the connection after the rows."""
    con = _Connection(data, step, sequence)
    batches = [
        [values.tolist() for values in reader._batch_arrays(COLUMNS, buffer, starts)]
        for buffer, starts in reader._row_batches(con, batch_rows)
    ]
    return batches, con


@pytest.mark.parametrize("step", [1, 5, 1 << 20])
def test_rows_arriving_in_pieces_of_any_size(step, monkeypatch):
    monkeypatch.setattr(reader, "_BATCH_BYTES", 200)
    rows = [row(i, -i) for i in range(300)]
    batches, con = parse(packets([*rows, EOF_PACKET], 7), step, 7, 128)
    assert con._next_seq_id == (7 + 301) % 256  # the sequence numbers wrapped past 255
    a = [value for batch in batches for value in batch[0]]
    b = [value for batch in batches for value in batch[1]]
    assert a == list(range(300)) and b == [-i for i in range(300)]
    assert max(len(batch[0]) for batch in batches) <= 128


def test_a_row_split_over_packets_is_joined(monkeypatch):
    """A row as long as a packet's largest payload continues in the next packets (here the
    largest payload is made 8 bytes: the rows are 18 bytes)."""
    monkeypatch.setattr(reader, "MAX_PACKET_LEN", 8)
    long_row = row(5, 6)
    pieces = [long_row[:8], long_row[8:16], long_row[16:]]
    data = packets([row(1, 2), *pieces, row(3, 4), EOF_PACKET], 0)
    batches, con = parse(data, 3, 0, 1000)
    assert batches == [[[1], [2]], [[5], [6]], [[3], [4]]]
    assert con._next_seq_id == 6


def test_a_packet_out_of_sequence_closes_the_connection():
    data = packets([row(1, 2)], 7) + packets([row(3, 4), EOF_PACKET], 9)
    con = _Connection(data, 1 << 20, 7)
    with pytest.raises(pymysql.err.InternalError, match="got 9 expected 8"):
        list(reader._row_batches(con, 1000))
    assert con.closed


def test_bytes_after_the_end_of_the_rows_close_the_connection():
    con = _Connection(packets([row(1, 2), EOF_PACKET, b"\0"], 7), 1 << 20, 7)
    with pytest.raises(pymysql.err.InternalError, match="after the end of the rows"):
        list(reader._row_batches(con, 1000))
    assert con.closed


def test_a_connection_lost_among_the_rows_is_reported():
    con = _Connection(packets([row(1, 2), row(3, 4)], 7)[:-3], 1 << 20, 7)
    with pytest.raises(pymysql.err.OperationalError, match="Lost connection"):
        list(reader._row_batches(con, 1000))
    assert con.closed
