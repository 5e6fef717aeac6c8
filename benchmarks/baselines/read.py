"""read.py's other readers, each run in a lean environment holding only what it imports
(benchmarks/lean.py): read the benchmark's table into numpy columns, check them against the
data, print the read's seconds, CPU seconds and peak RSS growth (MiB) as JSON.

``python read.py DATABASE READER LOCATION ROWS``; ``generate`` is the benchmark's data.
"""

import json
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np

FEATURES = 10
TABLE = "sqlml_read_bench"
SELECT = f"SELECT * FROM {TABLE}"
BASE_ROWS = 1_000_000  # the seeded block, repeated for more rows


def generate(rows: int) -> dict[str, np.ndarray]:
    """The benchmark's data: standard normal features and a label in {0, 1, 2}; each
    1,000,000 rows the same (fewer: the first ``rows``)."""
    rng = np.random.default_rng(20261122)
    block = min(rows, BASE_ROWS)
    columns = {f"x{i}": rng.standard_normal(block) for i in range(FEATURES)}
    columns["label"] = rng.integers(0, 3, block)
    return {name: np.tile(values, max(1, rows // block)) for name, values in columns.items()}


def arrow_columns(table) -> dict:
    return {name: table.column(name).to_numpy() for name in table.column_names}


def frame_columns(frame) -> dict:
    return {column: frame[column].to_numpy() for column in frame.columns}


def reader(database: str, name: str, location: str):
    """A function reading the table into numpy columns; connections open beforehand."""
    if name == "connectorx":
        import connectorx

        return lambda: arrow_columns(connectorx.read_sql(location, SELECT, return_type="arrow"))
    if name.startswith("polars ("):
        import polars

        engine = "adbc" if name == "polars (ADBC)" else "connectorx"
        return lambda: frame_columns(polars.read_database_uri(SELECT, location, engine=engine))
    if database == "postgresql":
        return adbc_reader(location) if name == "ADBC" else copy_reader(location)
    if database == "mysql":
        return pymysql_reader(location)
    import duckdb

    con = duckdb.connect(location)
    if name == "execute().fetchnumpy()":
        return lambda: dict(con.execute(SELECT).fetchnumpy())
    if name.startswith("sql().fetchnumpy()"):
        return lambda: dict(con.sql(SELECT).fetchnumpy())
    if name.startswith("polars"):
        return lambda: frame_columns(con.sql(SELECT).pl())
    return lambda: arrow_columns(con.sql(SELECT).to_arrow_table())


def pymysql_reader(location: str):
    """The streaming reader a user would write: ``fetchmany`` batches to numpy, joined."""
    import pymysql

    parts = urlsplit(location)
    con = pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=unquote(parts.username or "") or None,
        password=unquote(parts.password or ""),
        database=parts.path.lstrip("/"),
    )

    def read() -> dict:
        with con.cursor(pymysql.cursors.SSCursor) as cursor:
            cursor.execute(SELECT)
            names = [d[0] for d in cursor.description]
            chunks = [[] for _ in names]
            while rows := cursor.fetchmany(10_000):
                for chunk, values in zip(chunks, zip(*rows, strict=True), strict=True):
                    chunk.append(np.array(values))
        return {name: np.concatenate(chunk) for name, chunk in zip(names, chunks, strict=True)}

    return read


def adbc_reader(location: str):
    import adbc_driver_postgresql.dbapi

    con = adbc_driver_postgresql.dbapi.connect(location)

    def read() -> dict:
        with con.cursor() as cursor:
            cursor.execute(SELECT)
            return arrow_columns(cursor.fetch_arrow_table())

    return read


def copy_reader(location: str):
    """psycopg's COPY BINARY viewed as numpy records: each row is its field count, then each
    field's length and value."""
    import psycopg

    parts = urlsplit(location)
    con = psycopg.connect(
        host=parts.hostname,
        port=parts.port or 5432,
        user=unquote(parts.username or "") or None,
        password=unquote(parts.password or "") or None,
        dbname=parts.path.lstrip("/"),
    )
    names = [f"x{i}" for i in range(FEATURES)] + ["label"]
    fields = [("count", ">i2")]
    for column in names:
        fields += [(f"{column} length", ">i4"), (column, ">i8" if column == "label" else ">f8")]
    record = np.dtype(fields)

    def read() -> dict:
        data = bytearray()
        with (
            con.cursor() as cursor,
            cursor.copy(f"COPY ({SELECT}) TO STDOUT (FORMAT BINARY)") as copy,
        ):
            for chunk in copy:
                data += chunk
        # a 19-byte header before the rows, a 2-byte trailer after
        rows = np.frombuffer(data, record, count=(len(data) - 21) // record.itemsize, offset=19)
        return {n: rows[n].astype(np.int64 if n == "label" else np.float64) for n in names}

    return read


def peak_rss_kib() -> int:
    """This process's peak resident memory so far (Linux; a child's own, unlike ru_maxrss)."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0])


def timed_read(read, rows: int) -> dict[str, float]:
    """Time ``read``; check its columns against the data; the seconds, CPU seconds and peak
    RSS growth (MiB)."""
    before = peak_rss_kib()
    start, cpu = time.perf_counter(), time.process_time()
    columns = read()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = (peak_rss_kib() - before) / 1024
    expected = generate(rows)
    assert list(columns) == list(expected), list(columns)
    for column, values in expected.items():
        assert columns[column].dtype == values.dtype, (column, columns[column].dtype)
        assert np.array_equal(columns[column], values), column
    return {"seconds": seconds, "cpu": cpu, "peak_mib": peak}


if __name__ == "__main__":
    database, name, location, rows = sys.argv[1:5]
    print(json.dumps(timed_read(reader(database, name, location), int(rows))))
