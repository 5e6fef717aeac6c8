"""Read a 1,000,000-row table into numpy columns: sqlml against the strongest readers there are,
on PostgreSQL, MySQL and DuckDB; and (``--memory``) the peak memory of DuckDB's batches.

Data, generated here (seeded): 10 DOUBLE columns and a BIGINT label, written to a PostgreSQL
table (sqlml's binary COPY), a MySQL table (LOAD DATA LOCAL INFILE: the server must allow
local_infile) and a DuckDB file. Readers, each run in a fresh subprocess that reports its
time, its CPU time (every thread), its peak RSS above what it held before reading, and
checks the columns it read against the data (connections are opened before the clock starts
where the reader keeps one; connectorx and polars connect inside their call). The readers
other than sqlml's (benchmarks/baselines/read.py) run in lean environments holding only what
they import, at this environment's versions (benchmarks/lean.py):

- every database: sqlml's ``Datasource.read("SELECT * FROM ...")``;
- PostgreSQL: ADBC (adbc-driver-postgresql, Arrow to numpy), connectorx (Arrow to numpy),
  polars ``read_database_uri`` with its connectorx and its ADBC engine, psycopg ``COPY ...
  TO STDOUT (FORMAT BINARY)`` received with ``Copy``'s iterator and viewed as numpy records;
- MySQL: connectorx, polars (connectorx); pymysql's SSCursor with ``fetchmany`` if named;
- DuckDB: sqlml's ``read_batches`` joined, ``execute().fetchnumpy()`` (the DB-API path),
  ``sql().fetchnumpy()`` (a relation), Arrow ``sql().to_arrow_table()`` to numpy, polars
  (``sql().pl()``) to numpy.

Readers take turns (A B C, C B A, ...: benchmarks/rounds.py); each reader's best and median
over ROUNDS rounds are reported with the load average seen before the runs.

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

import lean
from baselines.read import FEATURES, SELECT, TABLE, peak_rss_kib, timed_read
from baselines.read import generate as generate_rows
from rounds import Runs, taking_turns
from tables import copy_to_mysql, mysql_connection

from sqlml.datasources import Columns, connect
from sqlml.datasources.arrays import join_batches

ROWS = lean.rows(1_000_000)
URLS = {
    "postgresql": os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test"),
    "mysql": os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test"),
}
# Each database's readers and the modules each needs (the others' beside numpy).
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
    """The benchmark's data (baselines/read.py's)."""
    return generate_rows(rows)


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


def child_read(name: str, location: str) -> None:
    """Time one read of sqlml's (``name``: ``sqlml`` or its joined batches); print the
    seconds, CPU seconds and peak RSS growth (MiB) as JSON."""
    source = connect(location)
    read = source.read if name == "sqlml" else lambda s: join_batches(source.read_batches(s))
    print(json.dumps(timed_read(lambda: read(SELECT), ROWS)))


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


def in_child(command: list[str]) -> Callable[[], dict[str, float]]:
    """A contender: ``command`` run in a fresh process (sqlml's environment, or a lean one:
    lean.py); its JSON figures."""
    baseline = command[0].startswith(str(lean.LEAN))
    env = lean.baseline_environment() if baseline else lean.sqlml_environment()

    def run() -> dict[str, float]:
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        if done.returncode:
            raise RuntimeError(f"{' '.join(command[2:5])} failed:\n{done.stderr[-2000:]}")
        return json.loads(done.stdout)

    return run


def read_command(database: str, name: str, location: str) -> list[str]:
    """The command reading with ``name``: sqlml's in this environment, the others in their
    lean ones (made now, before any timing)."""
    if name.startswith("sqlml"):
        url = location if database != "duckdb" else f"duckdb:///{location}"
        return [sys.executable, __file__, "--read", name, url]
    modules = ["numpy", *READERS[database][name]]
    return lean.command(modules, "read.py", database, name, location, str(ROWS))


def available(database: str, wanted: list[str] | None) -> list[str]:
    """The readers of ``database`` (among ``wanted``, if given), sqlml's if their modules are
    installed (a note if not)."""
    names = []
    for name, modules in READERS[database].items():
        if (wanted and name not in wanted) or (name in OPT_IN and not wanted):
            continue
        missing = [m for m in modules if importlib.util.find_spec(m) is None]
        if missing and name.startswith("sqlml"):
            print(f"{database} {name}: skipped, {', '.join(missing)} not installed")
        else:
            names.append(name)
    return names


def report(database: str, runs: Runs) -> None:
    rounds = len(next(iter(runs.runs.values())))
    print(f"\n{database}: {rounds} rounds, readers taking turns; {runs.load()}\n")
    print("| reader | best | median | CPU (best, median) | sqlml's speed / this (best, median) "
          "| peak RSS growth |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in runs.names():
        cells = [
            f"{runs.best(name):.3f} s",
            f"{runs.median(name):.3f} s",
            f"{runs.best(name, 'cpu'):.2f} s, {runs.median(name, 'cpu'):.2f} s",
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
                    command = [sys.executable, __file__, "--stream", name, path]
                    contenders[f"{name} @ {rows}"] = in_child(command)
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
            contenders = {name: in_child(read_command(database, name, location)) for name in names}
            try:
                report(database, taking_turns(contenders, options.rounds, required=["sqlml"]))
            finally:
                drop(database, location)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--read"]:
        child_read(*sys.argv[2:4])
    elif sys.argv[1:2] == ["--stream"]:
        child_stream(*sys.argv[2:4])
    else:
        main()
