"""Read a 1,000,000-row table into numpy columns: sqlml against the strongest readers there are,
on PostgreSQL, MySQL and DuckDB; and (``--memory``) the peak memory of DuckDB's batches.

Data, generated here (seeded): 10 DOUBLE columns and a BIGINT label, written to a PostgreSQL
table (sqlml's binary COPY), a MySQL table (LOAD DATA LOCAL INFILE: the server must allow
local_infile) and a DuckDB file. Readers, each run in a fresh subprocess that reports its
time, its CPU time (every thread), its peak RSS above what it held before reading, and
checks the columns it read against the data (connections are opened before the clock starts
where the reader keeps one; connectorx and polars connect inside their call):

- every database: sqlml's ``Datasource.read("SELECT * FROM ...")``;
- PostgreSQL: ADBC (adbc-driver-postgresql, Arrow to numpy), connectorx (Arrow to numpy),
  polars ``read_database_uri`` with its connectorx and its ADBC engine, psycopg ``COPY ...
  TO STDOUT (FORMAT BINARY)`` received with ``Copy``'s iterator and viewed as numpy records;
- MySQL: connectorx, polars (connectorx); pymysql's SSCursor with ``fetchmany`` if named;
- DuckDB: sqlml's ``read_batches`` joined, ``execute().fetchnumpy()`` (the DB-API path),
  ``sql().fetchnumpy()`` (a relation), Arrow ``sql().to_arrow_table()`` to numpy, polars
  (``sql().pl()``) to numpy.

Readers take turns (A B C, C B A, ...: benchmarks/rounds.py); each reader's best and median
over ROUNDS rounds are reported with the load average seen before the runs. Readers whose
package is missing are skipped with a note (``pip install -e '.[bench]'``).

Targets (issue 18): PostgreSQL: sqlml >= 1.0x the best of ADBC, connectorx, polars and
psycopg COPY BINARY; MySQL: >= 1.0x the best of connectorx and polars; DuckDB: >= 0.95x
``execute().fetchnumpy()``.

Memory (``--memory``): one pass over DuckDB's ``read_batches`` of 262,144 rows in a fresh
process, at 1,000,000 and at 4,000,000 rows, for the Arrow stream and for the temporary table
it falls back to without pyarrow. DuckDB's buffer pool keeps the blocks of the table's file
it has read (up to its memory_limit, 80% of RAM by default), whatever reads them: the Arrow
stream is also measured with the pool capped (``SET memory_limit = '64MB'``) and on rows the
query generates (no table), to show what the reader itself holds. Target: peak RSS at
4,000,000 rows <= 1.2x that at 1,000,000.

``python benchmarks/read.py [--databases postgresql,mysql,duckdb] [--rounds 5] [--readers
sqlml,connectorx] [--memory]`` uses ``$SQLML_TEST_POSTGRESQL``
(postgresql://root@127.0.0.1:5432/test) and ``$SQLML_TEST_MYSQL``
(mysql://root@127.0.0.1:3306/test). Prints tables; leaves nothing behind.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rounds import Runs, taking_turns
from tables import copy_to_mysql, mysql_connection

from sqlml.datasources import Columns, connect, parse_url
from sqlml.datasources.arrays import join_batches

ROWS = 1_000_000
FEATURES = 10
TABLE = "sqlml_read_bench"
SELECT = f"SELECT * FROM {TABLE}"
URLS = {
    "postgresql": os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test"),
    "mysql": os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test"),
}
# Each database's readers and the modules each needs.
READERS = {
    "postgresql": {
        "sqlml": ["psycopg"],
        "ADBC": ["adbc_driver_postgresql", "pyarrow"],
        "connectorx": ["connectorx", "pyarrow"],
        "polars (connectorx)": ["polars", "connectorx", "pyarrow"],
        "polars (ADBC)": ["polars", "adbc_driver_postgresql", "pyarrow"],
        "psycopg COPY BINARY + numpy": ["psycopg"],
    },
    "mysql": {
        "sqlml": ["pymysql"],
        "connectorx": ["connectorx", "pyarrow"],
        "polars (connectorx)": ["polars", "connectorx", "pyarrow"],
        "pymysql SSCursor fetchmany": ["pymysql"],
    },
    "duckdb": {
        "sqlml": ["duckdb"],
        "sqlml read_batches, joined": ["duckdb", "pyarrow"],
        "execute().fetchnumpy()": ["duckdb"],
        "sql().fetchnumpy() (a relation)": ["duckdb"],
        "Arrow sql().to_arrow_table() to numpy": ["duckdb", "pyarrow"],
        "polars sql().pl() to numpy": ["duckdb", "polars", "pyarrow"],
    },
}
# Readers run only when --readers names them: pymysql makes a Python object of every value
# (about 16 s a read on a quiet machine, 14x sqlml's time).
OPT_IN = {"pymysql SSCursor fetchmany"}
# The readers each database's target compares sqlml with (the best of them), and the ratio.
TARGETS = {
    "postgresql": (
        ["ADBC", "connectorx", "polars (connectorx)", "polars (ADBC)",
         "psycopg COPY BINARY + numpy"],
        1.0,
    ),
    "mysql": (["connectorx", "polars (connectorx)"], 1.0),
    "duckdb": (["execute().fetchnumpy()"], 0.95),
}  # fmt: skip
# DuckDB read_batches' paths for --memory, and what they read.
MEMORY = [
    "Arrow stream, table",
    "Arrow stream, table, memory_limit 64MB",
    "Arrow stream, rows generated by the query",
    "temporary table, table",
]
STREAM_ROWS = 262_144  # external_memory.BATCH_ROWS


def generate(rows: int = ROWS) -> Columns:
    """The benchmark's data: standard normal features and a label in {0, 1, 2}; each
    1,000,000 rows the same."""
    rng = np.random.default_rng(20261122)
    columns: Columns = {f"x{i}": rng.standard_normal(ROWS) for i in range(FEATURES)}
    columns["label"] = rng.integers(0, 3, ROWS)
    return {name: np.tile(values, rows // ROWS) for name, values in columns.items()}


def load(database: str, location: str, rows: int = ROWS) -> None:
    """Write the data to the database (a DuckDB file's path, else a server's URL)."""
    if database == "postgresql":
        source = connect(location)
        try:
            source.execute(f"DROP TABLE IF EXISTS {TABLE}")
            source.write_table([TABLE], generate())
        finally:
            source.close()
        return
    import duckdb

    path = location if database == "duckdb" else ":memory:"
    con = duckdb.connect(path)
    con.register("data", generate(rows))
    con.execute(f"CREATE TABLE {TABLE} AS SELECT * FROM data")
    if database == "mysql":
        definition = ", ".join([f"x{i} DOUBLE" for i in range(FEATURES)] + ["label BIGINT"])
        copy_to_mysql(con, TABLE, definition, location)
    con.close()


def drop(database: str, location: str) -> None:
    if database == "postgresql":
        source = connect(location)
        source.execute(f"DROP TABLE IF EXISTS {TABLE}")
        source.close()
    elif database == "mysql":
        with mysql_connection(location) as mysql, mysql.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")


def arrow_columns(table: object) -> Columns:
    return {name: table.column(name).to_numpy() for name in table.column_names}


def frame_columns(frame: object) -> Columns:
    return {column: frame[column].to_numpy() for column in frame.columns}


def reader(database: str, name: str, location: str) -> Callable[[], Columns]:
    """A function reading the table into numpy columns; connections open beforehand."""
    if name.startswith("sqlml"):
        source = connect(location if database != "duckdb" else f"duckdb:///{location}")
        if name == "sqlml":
            return lambda: source.read(SELECT)
        return lambda: join_batches(source.read_batches(SELECT))
    if name == "connectorx":
        import connectorx

        return lambda: arrow_columns(connectorx.read_sql(location, SELECT, return_type="arrow"))
    if name.startswith("polars ("):
        import polars

        engine = "adbc" if name == "polars (ADBC)" else "connectorx"
        return lambda: frame_columns(polars.read_database_uri(SELECT, location, engine=engine))
    if database == "postgresql":
        return postgresql_reader(name, location)
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


def pymysql_reader(location: str) -> Callable[[], Columns]:
    """The streaming reader a user would write: ``fetchmany`` batches to numpy, joined."""
    import pymysql

    con = mysql_connection(location)

    def read() -> Columns:
        with con.cursor(pymysql.cursors.SSCursor) as cursor:
            cursor.execute(SELECT)
            names = [d[0] for d in cursor.description]
            chunks: list[list[np.ndarray]] = [[] for _ in names]
            while rows := cursor.fetchmany(10_000):
                for chunk, values in zip(chunks, zip(*rows, strict=True), strict=True):
                    chunk.append(np.array(values))
        return {name: np.concatenate(chunk) for name, chunk in zip(names, chunks, strict=True)}

    return read


def postgresql_reader(name: str, location: str) -> Callable[[], Columns]:
    if name == "ADBC":
        import adbc_driver_postgresql.dbapi

        con = adbc_driver_postgresql.dbapi.connect(location)

        def read_adbc() -> Columns:
            with con.cursor() as cursor:
                cursor.execute(SELECT)
                return arrow_columns(cursor.fetch_arrow_table())

        return read_adbc
    import psycopg

    parsed = parse_url(location)
    con = psycopg.connect(
        host=parsed.host,
        port=parsed.port or 5432,
        user=parsed.user or None,
        password=parsed.password or None,
        dbname=parsed.path,
    )
    # COPY BINARY: each row is its field count, then each field's length and value
    names = [f"x{i}" for i in range(FEATURES)] + ["label"]
    fields = [("count", ">i2")]
    for column in names:
        fields += [(f"{column} length", ">i4"), (column, ">i8" if column == "label" else ">f8")]
    record = np.dtype(fields)

    def read_copy() -> Columns:
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

    return read_copy


def peak_rss_kib() -> int:
    """This process's peak resident memory so far (Linux; a child's own, unlike ru_maxrss)."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0])


def child_read(database: str, name: str, location: str) -> None:
    """Time one read; print the seconds, CPU seconds and peak RSS growth (MiB) as JSON."""
    read = reader(database, name, location)
    before = peak_rss_kib()
    start, cpu = time.perf_counter(), time.process_time()
    columns = read()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = (peak_rss_kib() - before) / 1024
    expected = generate()
    assert list(columns) == list(expected), list(columns)
    for column, values in expected.items():
        assert columns[column].dtype == values.dtype, (column, columns[column].dtype)
        assert np.array_equal(columns[column], values), column
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mib": peak}))


def child_stream(name: str, path: str) -> None:
    """One pass over DuckDB's read_batches; print the seconds, rows and peak RSS growth."""
    from sqlml.datasources.duckdb import source as duckdb_source

    if name.startswith("temporary table"):
        duckdb_source._arrow_installed = lambda: False
    source = connect(f"duckdb:///{path}")
    select = SELECT
    if name.endswith("memory_limit 64MB"):
        source.execute("SET memory_limit = '64MB'")
    if name.endswith("generated by the query"):
        count = source.execute(f"SELECT count(*) FROM {TABLE}").rows[0][0]
        features = ", ".join(f"random() AS x{i}" for i in range(FEATURES))
        select = f"SELECT {features}, i % 3 AS label FROM range({count}) AS r(i)"
    before = peak_rss_kib()
    start = time.perf_counter()
    rows = sum(len(batch["label"]) for batch in source.read_batches(select, STREAM_ROWS))
    seconds = time.perf_counter() - start
    peak = (peak_rss_kib() - before) / 1024
    print(json.dumps({"seconds": seconds, "rows": rows, "peak_mib": peak}))


def in_child(*args: str) -> Callable[[], dict[str, float]]:
    """A contender: this script run in a fresh process with ``args``; its JSON figures."""

    def run() -> dict[str, float]:
        done = subprocess.run(
            [sys.executable, __file__, *args], capture_output=True, text=True, check=False
        )
        if done.returncode:
            raise RuntimeError(f"{' '.join(args[:3])} failed:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout)

    return run


def available(database: str, wanted: list[str] | None) -> list[str]:
    """The readers of ``database`` whose modules are installed (among ``wanted``, if given);
    a note on the others."""
    names = []
    for name, modules in READERS[database].items():
        if (wanted and name not in wanted) or (name in OPT_IN and not wanted):
            continue
        missing = [m for m in modules if importlib.util.find_spec(m) is None]
        if missing:
            print(f"{database} {name}: skipped, {', '.join(missing)} not installed")
        else:
            names.append(name)
    return names


def report(database: str, runs: Runs) -> None:
    rounds = len(next(iter(runs.runs.values())))
    print(f"\n{database}: {rounds} rounds, readers taking turns; {runs.load()}\n")
    print("| reader | best | median | CPU (best) | sqlml's speed / this (best, median) "
          "| peak RSS growth |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in runs.names():
        cells = [
            f"{runs.best(name):.3f} s",
            f"{runs.median(name):.3f} s",
            f"{runs.best(name, 'cpu'):.2f} s",
            runs.ratios(name, "sqlml"),
            f"{runs.largest(name, 'peak_mib'):,.0f} MiB",
        ]
        print(f"| {name} | {' | '.join(cells)} |")
    print()
    strong, target = TARGETS[database]
    strong = [name for name in strong if name in runs.runs]
    if not strong:
        print(f"{database}: no strong reader installed, no verdict")
        return
    top = min(strong, key=runs.best)
    top_median = min(strong, key=runs.median)
    ratio = runs.best(top) / runs.best("sqlml")
    median_ratio = runs.median(top_median) / runs.median("sqlml")
    verdict = "met" if ratio >= target else "NOT met"
    print(
        f"{database}: sqlml = {ratio:.2f}x the best strong reader on best times ({top}), "
        f"{median_ratio:.2f}x on medians ({top_median}) (target >= {target}x): {verdict}"
    )


def report_memory(runs: Runs) -> None:
    print(f"\nread_batches({STREAM_ROWS:,} rows), taking turns; {runs.load()}\n")
    print("| path | rows | best | median | peak RSS growth (largest) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    peaks: dict[tuple[str, int], float] = {}
    for key in runs.names():
        name, rows = key.rsplit(" @ ", 1)
        peaks[name, int(rows)] = runs.largest(key, "peak_mib")
        print(
            f"| {name} | {int(rows):,} | {runs.best(key):.2f} s | {runs.median(key):.2f} s "
            f"| {peaks[name, int(rows)]:,.0f} MiB |"
        )
    for name in MEMORY:
        small, large = peaks[name, ROWS], peaks[name, 4 * ROWS]
        verdict = "met" if large <= 1.2 * small else "NOT met"
        print(f"{name}: peak RSS at 4,000,000 rows = {large / small:.2f}x that at 1,000,000 "
              f"(target <= 1.2x): {verdict}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="postgresql,mysql,duckdb")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--readers", help="comma-separated reader names (sqlml always runs)")
    parser.add_argument("--memory", action="store_true", help="peak RSS of read_batches")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if options.memory:
            contenders = {}
            for rows in (ROWS, 4 * ROWS):
                path = str(Path(folder) / f"{rows}.duckdb")
                load("duckdb", path, rows)
                for name in MEMORY:
                    contenders[f"{name} @ {rows}"] = in_child("--stream", name, path)
            report_memory(taking_turns(contenders, options.rounds))
            return
        wanted = ["sqlml", *options.readers.split(",")] if options.readers else None
        for database in options.databases.split(","):
            location = URLS.get(database) or str(Path(folder) / "read.duckdb")
            start = time.perf_counter()
            load(database, location)
            print(
                f"\n{database}: {ROWS:,} rows x {FEATURES} DOUBLE + BIGINT label, "
                f"loaded in {time.perf_counter() - start:.1f} s"
            )
            names = available(database, wanted)
            contenders = {name: in_child("--read", database, name, location) for name in names}
            try:
                report(database, taking_turns(contenders, options.rounds, required=["sqlml"]))
            finally:
                drop(database, location)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--read"]:
        child_read(*sys.argv[2:5])
    elif sys.argv[1:2] == ["--stream"]:
        child_stream(*sys.argv[2:4])
    else:
        main()
