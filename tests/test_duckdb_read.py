"""DuckDB's reads: every type exactly as DuckDB converts it, whole (``read``) or streamed
from the query itself in batches (``read_batches``), with or without pyarrow."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from sqlml.datasources import connect
from sqlml.datasources.arrays import join_batches
from sqlml.datasources.duckdb import source as duckdb_source
from sqlml.errors import DatasourceError
from sqlml.runtime.cancel import Token, interrupted_once_stopped

BIG = 2**53 + 1  # not a float64
# Each column: a type, a value without NULLs, and the same column with a NULL row
COLUMNS = """
    SELECT * FROM (VALUES
      (0, 9007199254740993::BIGINT, 'nan'::DOUBLE, 'inf'::DOUBLE, 12.34::DECIMAL(10, 2),
       DATE '2024-02-29', TIMESTAMP '2024-01-01 12:34:56.789012',
       TIMESTAMPTZ '2024-06-01 10:00:00+02', 'é😀\n"x"\t', true, 3::INTEGER,
       -7::BIGINT, 1.5::DOUBLE, 1.25::DECIMAL(10, 2), DATE '1999-12-31',
       TIMESTAMP '1970-01-01 00:00:00', TIMESTAMPTZ '2000-01-01 00:00:00+00', 'a\rb', false),
      (1, -9007199254740993::BIGINT, '-inf'::DOUBLE, 5e-324::DOUBLE, -0.01::DECIMAL(10, 2),
       DATE '0001-01-01', TIMESTAMP '2262-04-11 23:47:16', TIMESTAMPTZ '1969-12-31 23:59:59+00',
       '', false, -3::INTEGER, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
    ) t(k, i, f, g, d, dd, ts, tz, s, b, n, ni, nf, nd, ndd, nts, ntz, ns, nb)
"""


@pytest.fixture
def source(tmp_path):
    ds = connect(f"duckdb:///{tmp_path / 'read.duckdb'}")
    ds.execute("SET TimeZone = 'Europe/Berlin'")  # TIMESTAMPTZ values come in UTC anyway
    ds.execute(f"CREATE TABLE t AS {COLUMNS}")
    yield ds
    ds.close()


@pytest.fixture(params=["arrow", "temporary table"])
def batches_path(request, monkeypatch):
    """read_batches streamed from Arrow (pyarrow installed) or from a temporary table."""
    if request.param == "arrow":
        pytest.importorskip("pyarrow")
    else:
        monkeypatch.setattr(duckdb_source, "_arrow_installed", lambda: False)
    return request.param


def check_every_type(columns: dict[str, np.ndarray]) -> None:
    assert columns["k"].tolist() == [0, 1]
    assert columns["i"].dtype == np.int64 and columns["i"].tolist() == [BIG, -BIG]
    f, g = columns["f"], columns["g"]
    assert f.dtype == np.float64 and np.isnan(f[0]) and f[1] == -np.inf
    assert g.tolist() == [np.inf, 5e-324]
    assert columns["d"].dtype == np.float64 and columns["d"].tolist() == [12.34, -0.01]
    assert columns["dd"].dtype == np.dtype("datetime64[us]")
    assert columns["dd"].tolist() == [dt.datetime(2024, 2, 29), dt.datetime(1, 1, 1)]
    assert columns["ts"].dtype == np.dtype("datetime64[us]")
    assert columns["ts"].tolist() == [
        dt.datetime(2024, 1, 1, 12, 34, 56, 789012),
        dt.datetime(2262, 4, 11, 23, 47, 16),
    ]
    assert columns["tz"].dtype == np.dtype("datetime64[us]")  # in UTC
    assert columns["tz"].tolist() == [
        dt.datetime(2024, 6, 1, 8),
        dt.datetime(1969, 12, 31, 23, 59, 59),
    ]
    assert columns["s"].dtype == object and columns["s"].tolist() == ['é😀\n"x"\t', ""]
    assert columns["b"].dtype == bool and columns["b"].tolist() == [True, False]
    assert columns["n"].dtype == np.int32 and columns["n"].tolist() == [3, -3]
    # NULLs: NaN in numeric columns (float64), None in the others
    for name, value in [("ni", -7.0), ("nf", 1.5), ("nd", 1.25), ("nb", 0.0)]:
        assert columns[name].dtype == np.float64, name
        assert columns[name][0] == value and np.isnan(columns[name][1]), name
    for name, value in [
        ("ndd", dt.datetime(1999, 12, 31)),
        ("nts", dt.datetime(1970, 1, 1)),
        ("ntz", dt.datetime(2000, 1, 1)),
        ("ns", "a\rb"),
    ]:
        assert columns[name].dtype == object and columns[name].tolist() == [value, None], name


def test_read_keeps_every_type(source):
    check_every_type(source.read("SELECT * FROM t ORDER BY k"))


def test_read_batches_keep_every_type(source, batches_path):
    batches = list(source.read_batches("SELECT * FROM t ORDER BY k", batch_rows=2))
    assert len(batches) == 1
    check_every_type(batches[0])


def test_read_batches_split_inside_the_data_and_join_to_the_read(source, batches_path):
    select = (
        "SELECT i, i * 0.5 AS x, CASE WHEN i % 5 = 0 THEN NULL ELSE i END AS late, "
        "'row ' || i AS s FROM range(10) r(i) ORDER BY i"
    )
    batches = list(source.read_batches(select, batch_rows=3))
    assert [len(b["i"]) for b in batches] == [3, 3, 3, 1]
    assert batches[1]["i"].tolist() == [3, 4, 5] and batches[1]["s"].tolist()[0] == "row 3"
    assert batches[1]["late"].dtype == np.float64 and np.isnan(batches[1]["late"][2])
    assert batches[2]["late"].dtype == np.int64  # no NULL in rows 6 to 8
    whole, joined = source.read(select), join_batches(batches)
    assert list(joined) == list(whole)
    for name, values in whole.items():
        assert joined[name].dtype == values.dtype, name
        assert joined[name].tolist() == pytest.approx(values.tolist(), nan_ok=True), name


def test_read_batches_fill_each_batch_across_arrow_record_batches(source):
    pytest.importorskip("pyarrow")
    rows = 300_000  # DuckDB's record batches hold at most 122,880 rows
    batches = source.read_batches(f"SELECT i FROM range({rows}) r(i) ORDER BY i", 200_000)
    sizes, firsts = zip(*[(len(b["i"]), int(b["i"][0])) for b in batches], strict=True)
    assert sizes == (200_000, 100_000) and firsts == (0, 200_000)


def test_an_empty_result(source, batches_path):
    select = "SELECT k, i, f, s, ts FROM t WHERE k < 0"
    batches = list(source.read_batches(select))
    whole = source.read(select)
    assert len(batches) == 1 and list(batches[0]) == list(whole) == ["k", "i", "f", "s", "ts"]
    for name, values in whole.items():
        assert len(values) == 0 and batches[0][name].dtype == values.dtype, name


def test_read_batches_stream_the_query_itself(source):
    """The first batch of an endless query comes at once, and closing the stream early
    leaves the connection usable: nothing materialises the result first."""
    pytest.importorskip("pyarrow")
    stream = source.read_batches("SELECT i FROM range(1000000000000) r(i)", batch_rows=1000)
    first = next(stream)  # materialised first, the result would take hours
    stream.close()
    assert len(first["i"]) == 1000
    assert source.read("SELECT 42 AS x")["x"].tolist() == [42]


def test_interrupt_stops_a_long_read(source, batches_path):
    slow = "SELECT sum(i * i % 13) AS s FROM range(10000000000000) r(i)"
    for read in (source.read, lambda select: join_batches(source.read_batches(select))):
        stopped = Token()  # interrupted again until the read ends: one before it ran is lost
        stopped.cancel("a test")
        interrupting = interrupted_once_stopped(stopped, source.interrupt)
        with pytest.raises(DatasourceError, match="DuckDB"), interrupting:
            read(slow)
        assert source.read("SELECT 1 AS x")["x"].tolist() == [1]


def test_errors_name_the_database(source, batches_path):
    with pytest.raises(DatasourceError, match=r"DuckDB: .*no_such_table"):
        next(source.read_batches("SELECT * FROM no_such_table"))
    with pytest.raises(DatasourceError, match=r"DuckDB: .*no_such_table"):
        source.read("SELECT * FROM no_such_table")


def test_a_stream_left_open_does_not_hold_the_connection(source):
    """A reader that stopped without closing its batches (an error, a cancellation) leaves
    the connection usable: the next statement closes the stream, which then says so."""
    pytest.importorskip("pyarrow")
    left = source.read_batches("SELECT i FROM range(1000000) r(i)", batch_rows=1000)
    assert len(next(left)["i"]) == 1000
    assert source.execute("SELECT 2").rows == [(2,)]
    assert source.read("SELECT 3 AS x")["x"].tolist() == [3]
    with pytest.raises(DatasourceError, match="another statement ran on the connection"):
        next(left)


def _cached(ds) -> int:
    """Bytes of table blocks in DuckDB's buffer pool."""
    query = "SELECT sum(memory_usage_bytes) AS b FROM duckdb_memory() WHERE tag = 'BASE_TABLE'"
    return int(ds.read(query)["b"][0])


@pytest.mark.parametrize("limit", [None, "500MB"])
def test_a_stream_trims_the_cached_table_blocks_under_the_default_limit(tmp_path, limit):
    """DuckDB caches every table block read, up to its memory_limit: between batches a
    stream gives back those beyond duckdb_cache.KEPT, and resets the limit, when it is
    DuckDB's default; a limit the user set is left alone, and so is its cache."""
    from sqlml.datasources.duckdb import cache as duckdb_cache

    url = f"duckdb:///{tmp_path / 'cache.duckdb'}"
    ds, probe = connect(url), connect(url)  # one database: DuckDB shares it in a process
    try:
        ds.execute("CREATE TABLE big AS SELECT random() AS x, random() AS y FROM range(2000000)")
        if limit:
            ds.execute(f"SET memory_limit = '{limit}'")
        shown = probe.read("SELECT current_setting('memory_limit') AS m")["m"][0]
        ds.execute("CHECKPOINT")
        ds.read("SELECT sum(x), sum(y) FROM big")
        assert _cached(probe) > 20 << 20  # a whole read keeps the blocks: 32 MB of doubles
        kept, duckdb_cache.KEPT = duckdb_cache.KEPT, 4 << 20
        try:
            cached = [_cached(probe) for _ in ds.read_batches("SELECT x, y FROM big", 100_000)]
        finally:
            duckdb_cache.KEPT = kept
        assert len(cached) == 20
        if limit:
            assert min(cached) > 20 << 20
        else:  # KEPT and the blocks read ahead, from the second batch on
            assert max(cached[1:]) < 12 << 20
        assert probe.read("SELECT current_setting('memory_limit') AS m")["m"][0] == shown
    finally:
        ds.close()
        probe.close()
