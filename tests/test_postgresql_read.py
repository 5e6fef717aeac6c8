"""PostgreSQL reads through binary COPY (sqlml/datasources/postgresql/binary.py): every type
comes back as psycopg's server-side cursor gives it, in batches, and reads stop when asked."""

from __future__ import annotations

import datetime
import os
import signal
import threading
import time
from collections.abc import Iterator
from decimal import Decimal

import numpy as np
import pytest

from sqlml.datasources import connect
from sqlml.datasources.postgresql.source import PostgreSQLSource
from sqlml.errors import DatasourceError
from sqlml.runtime.cancel import Token, interrupted_once_stopped
from tests.conftest import datasource_url

GUARD = 300  # seconds a test waits for the server's state at most: a deadlock guard
# 10**10 rows that stream: generate_series() alone would first store them all on disk
ENDLESS = (
    "SELECT a.g * 100000 + b.g AS g, b.g * 0.5::float8 AS h "
    "FROM generate_series(0, 99999) AS a(g), generate_series(1, 100000) AS b(g)"
)

TYPES = """(k int, s smallint, i int, n bigint, o oid, r real, f double precision, m numeric,
 m2 numeric(10,2), b boolean, d date, ts timestamp, tz timestamptz, t text, v varchar(5),
 c char(3), y bytea, u uuid, j jsonb, iv interval, a int[])"""
ROWS = r"""
 (1, 32767, -2147483648, 9223372036854775807, 4294967295, 0.1, 'NaN', 'NaN', 12345678.91,
  true, '2024-02-29', '2024-01-02 03:04:05.25', '2024-01-02 03:04:05+00', E'a\nb é 😀',
  'xy', 'ab', '\x00ff', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": [1, 2]}',
  '1 day 2 hours', '{1,NULL,3}'),
 (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL),
 (3, -32768, 0, -9223372036854775808, 0, 'Infinity', '-Infinity',
  '123456789012345678901234567890.123456789', -0.05, false, '0001-01-01',
  '1999-12-31 23:59:59.999999', '1970-01-01 00:00:00-08', '', '', '', '', NULL, 'null',
  '-1 mon', '{}'),
 (4, 1, 2, 9007199254740993, 1, 3.4e38, 'Infinity', '1e-30', 0, true, '9999-12-31',
  '2000-01-01', '2000-01-01 12:00+05:30', 'x', 'y', 'z', '\x01', NULL, '[1.5]', '0', NULL)"""


@pytest.fixture
def source(tmp_path) -> Iterator[PostgreSQLSource]:
    ds = connect(datasource_url("postgresql", tmp_path))
    yield ds
    ds.close()


@pytest.fixture
def typed(source, unique_name) -> Iterator[str]:
    """A table of every type, a row of NULLs among its rows."""
    source.execute(f"CREATE TABLE {unique_name} {TYPES}")
    source.execute(f"INSERT INTO {unique_name} VALUES {ROWS}")
    yield unique_name
    source.execute(f"DROP TABLE {unique_name}")


def by_cursor(source: PostgreSQLSource, select: str, batch_rows: int) -> list[dict]:
    """The batches psycopg's server-side cursor reads: what the COPY path must match."""
    with source.transaction():
        return list(source._read_cursor(select, batch_rows))


def by_copy(
    source: PostgreSQLSource, select: str, batch_rows: int, monkeypatch: pytest.MonkeyPatch
) -> list[dict]:
    """The batches of ``read_batches``, which must not fall back to the cursor."""
    with monkeypatch.context() as patch:
        patch.setattr(source, "_read_cursor", lambda *_: pytest.fail("read by the cursor"))
        return list(source.read_batches(select, batch_rows))


def assert_same(found: list[dict], expected: list[dict]) -> None:
    """Equal batches: the same columns, dtypes, values and Python types (NaN, -0.0 and
    time zones included)."""
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
            zones = [getattr(v, "tzinfo", None) for v in got]
            assert zones == [getattr(v, "tzinfo", None) for v in wanted], name


@pytest.mark.parametrize("batch_rows", [65_536, 1])
def test_every_type_reads_as_the_cursor_reads_it(source, typed, monkeypatch, batch_rows):
    select = f"SELECT * FROM {typed} ORDER BY k"
    found = by_copy(source, select, batch_rows, monkeypatch)
    assert_same(found, by_cursor(source, select, batch_rows))
    if batch_rows == 1:
        return
    [columns] = found
    assert columns["k"].dtype == np.int64 and columns["k"].tolist() == [1, 2, 3, 4]
    # a NULL makes integers floats, as it always did; without, int64 keeps 2**63 - 1
    assert columns["n"].dtype == np.float64
    [exact] = by_copy(source, f"SELECT n FROM {typed} WHERE n IS NOT NULL", 10, monkeypatch)
    assert exact["n"].dtype == np.int64
    assert exact["n"].tolist() == [2**63 - 1, -(2**63), 9007199254740993]
    assert columns["r"][0] == 0.1 and columns["r"][2] == np.inf  # real: its shortest text
    assert np.isnan(columns["f"][:2]).all() and columns["f"][2] == -np.inf
    assert columns["m2"].tolist()[::2] == [12345678.91, -0.05]
    assert np.isnan(columns["m2"][1])
    assert columns["b"].tolist() == [True, None, False, True]
    assert columns["t"].tolist() == ["a\nb é 😀", None, "", "x"]
    assert columns["ts"][0] == datetime.datetime(2024, 1, 2, 3, 4, 5, 250000)
    moment = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    assert columns["tz"][0] == moment and columns["tz"][0].tzinfo is not None
    assert columns["d"].tolist()[2] == datetime.date(1, 1, 1)


def test_numerics_read_as_the_nearest_doubles(source, unique_name, monkeypatch):
    """Short values take the exact arithmetic path, others psycopg's Decimals: each is the
    double nearest to its decimal value."""
    source.execute(
        f"CREATE TABLE {unique_name} AS SELECT "
        "((g::bigint * 7919) % 100003 * 10::numeric ^ (g % 40 - 20))::numeric(70, 30) AS a, "
        "round((g::bigint * 104729 % 1000000007)::numeric / 997, g % 12) AS b, "
        "('9' || repeat('0', g % 25) || '.5')::numeric AS c "
        "FROM generate_series(-3000, 3000) AS g"
    )
    try:
        source.execute(f"INSERT INTO {unique_name} VALUES ('NaN', 'Infinity', '-Infinity')")
        select = f"SELECT * FROM {unique_name}"
        [found] = by_copy(source, select, 100_000, monkeypatch)
        rows = source.execute(select).rows
    finally:
        source.execute(f"DROP TABLE {unique_name}")
    for j, name in enumerate(["a", "b", "c"]):
        expected = np.array([float(Decimal(row[j])) for row in rows])
        assert np.array_equal(found[name], expected, equal_nan=True), name
        assert np.array_equal(np.signbit(found[name]), np.signbit(expected)), name
    assert found["b"][-1] == np.inf and found["c"][-1] == -np.inf


def test_batches_split_inside_the_data(source, unique_name, monkeypatch):
    """Batches of at most batch_rows rows; integers are int64 in batches without NULLs."""
    source.execute(
        f"CREATE TABLE {unique_name} AS SELECT g AS i, "
        "CASE WHEN g = 7 THEN NULL ELSE g * 10 END AS n, g::text || E'\\n' AS s "
        "FROM generate_series(1, 10) AS g"
    )
    try:
        select = f"SELECT * FROM {unique_name} ORDER BY i"
        found = by_copy(source, select, 3, monkeypatch)
        assert_same(found, by_cursor(source, select, 3))
        assert [len(b["i"]) for b in found] == [3, 3, 3, 1]
        assert [b["n"].dtype for b in found] == [np.int64, np.int64, np.float64, np.int64]
        numbers = f"SELECT i, n, i * 0.5::float8 AS h FROM {unique_name} ORDER BY i"
        assert_same(by_copy(source, numbers, 4, monkeypatch), by_cursor(source, numbers, 4))
        joined = source.read(select)
    finally:
        source.execute(f"DROP TABLE {unique_name}")
    assert joined["i"].tolist() == list(range(1, 11))
    assert np.isnan(joined["n"][6]) and joined["n"][9] == 100
    assert joined["s"].tolist()[-1] == "10\n"


def test_an_empty_result_is_one_batch_of_empty_columns(source, typed, monkeypatch):
    select = f"SELECT k, f, m, t FROM {typed} WHERE false"
    [batch] = by_copy(source, select, 10, monkeypatch)
    assert {name: (len(v), v.dtype) for name, v in batch.items()} == {
        "k": (0, np.int64),
        "f": (0, np.float64),
        "m": (0, np.float64),
        "t": (0, object),
    }


def test_the_query_text_is_used_as_written(source, monkeypatch):
    """A percent sign, a final comment, a final semicolon."""
    select = "SELECT '100%' AS p, 2 AS two; -- the end"
    [batch] = by_copy(source, select, 10, monkeypatch)
    assert batch["p"].tolist() == ["100%"] and batch["two"].tolist() == [2]


def test_a_result_of_no_columns(source, monkeypatch):
    assert by_copy(source, "SELECT FROM generate_series(1, 5)", 2, monkeypatch) == [{}] * 3


def test_a_type_psycopg_reads_only_as_text_goes_through_the_cursor(source, unique_name):
    source.execute(f"CREATE TYPE {unique_name} AS ENUM ('low', 'high')")
    try:
        found = source.read(f"SELECT 'high'::{unique_name} AS e, 1.5::float8 AS f")
    finally:
        source.execute(f"DROP TYPE {unique_name}")
    assert found["e"].tolist() == ["high"] and found["f"].tolist() == [1.5]


def test_an_error_while_the_rows_stream_is_reported(source):
    with pytest.raises(DatasourceError, match="integer out of range"):
        source.read("SELECT (2147483600 + g)::int AS i FROM generate_series(1, 100000) AS g")
    assert source.execute("SELECT 1").rows == [(1,)]


@pytest.mark.parametrize(
    ("select", "streams"),
    [(ENDLESS, True), ("SELECT 1 AS x FROM pg_sleep(600)", False)],  # rows come, or none
)
def test_an_interrupted_read_stops(source, select, streams):
    """Interrupted once rows came (or at once where none come), again until it stops (an
    interrupt before the server runs the statement is lost): the read fails."""
    stopped, rows = Token(), 0
    if not streams:
        stopped.cancel("no rows come")
    interrupting = interrupted_once_stopped(stopped, source.interrupt)
    with pytest.raises(DatasourceError, match="cancel"), interrupting:
        for batch in source.read_batches(select, 10_000):
            stopped.cancel("rows came")
            rows += len(batch["x" if not streams else "g"])
    assert (rows > 0) == streams
    assert source.execute("SELECT 1").rows == [(1,)]


@pytest.mark.parametrize(
    "select",
    [
        "SELECT 1 AS x FROM pg_sleep(600)",  # before the COPY's first message
        "SELECT g AS x FROM generate_series(1, 5000) AS g, "  # after rows came
        "LATERAL (SELECT pg_sleep(CASE WHEN g = 5000 THEN 600 ELSE 0 END)) AS s",
    ],
)
def test_ctrl_c_stops_a_read_waiting_for_rows(source, select, tmp_path):
    """SIGINT reaches the main thread while it waits for the server (sent once the server
    says the read sleeps in its pg_sleep(600)): the COPY is cancelled, the read ends long
    before the sleep would."""
    pid = source.execute("SELECT pg_backend_pid()").rows[0][0]
    watcher = connect(datasource_url("postgresql", tmp_path))

    def sleeping() -> bool:
        query = "SELECT count(*) FROM pg_stat_activity WHERE pid = %s AND wait_event = 'PgSleep'"
        return watcher.execute(query, [pid]).rows == [(1,)]

    def ctrl_c_once_sleeping() -> None:
        deadline = time.monotonic() + GUARD
        while not sleeping() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    signalling = threading.Thread(target=ctrl_c_once_sleeping)
    signalling.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            source.read(select)
    finally:
        signalling.join()
        watcher.close()
    assert time.monotonic() - start < 500, "the read went on after SIGINT until the sleep ended"
    assert source.execute("SELECT 1").rows == [(1,)]


def test_a_read_left_early_ends_and_the_connection_goes_on(source):
    batches = source.read_batches(ENDLESS, 1000)
    assert len(next(batches)["g"]) == 1000
    batches.close()  # the endless read would never end: the connection answers only if it did
    assert source.execute("SELECT 1").rows == [(1,)]


def test_an_interrupt_between_a_reads_statements_stops_it(source, monkeypatch):
    """The server sees no cancel while no statement runs: the read stops after a batch."""
    from sqlml.datasources.postgresql import binary

    columns_of = binary.columns_of

    def interrupted_first(con, description):
        source.interrupt()  # between the query of the columns and the COPY
        return columns_of(con, description)

    monkeypatch.setattr(binary, "columns_of", interrupted_first)
    rows = 0
    with pytest.raises(DatasourceError, match="cancel"):
        for batch in source.read_batches(ENDLESS, 1000):
            rows += len(batch["g"])
    assert rows == 1000
    assert source.execute("SELECT 1").rows == [(1,)]
