"""Read a 1,000,000-row table into numpy columns: sqlml against the strongest readers there are,
on PostgreSQL, MySQL and DuckDB.

Data, generated here (seeded): 10 DOUBLE columns and an integer label, written to a
PostgreSQL table (sqlml's binary COPY), a MySQL table (LOAD DATA LOCAL INFILE: the server
must allow local_infile) and a DuckDB file. Readers, each run in a fresh subprocess that
also reports its peak RSS above what it held before reading and checks the columns it read
against the data (connections are opened before the clock starts where the reader keeps
one; connectorx and polars connect inside their call):

- sqlml: ``Datasource.read("SELECT * FROM ...")``;
- PostgreSQL: ADBC (adbc-driver-postgresql, Arrow to numpy), connectorx (Arrow to numpy),
  polars (``read_database_uri``, connectorx inside), psycopg ``COPY ... TO STDOUT (FORMAT
  BINARY)`` received with ``Copy``'s iterator and parsed in bulk with numpy (a structured
  view of the fixed rows), and psycopg's server-side cursor with ``fetchmany``;
- MySQL: pandas.read_sql (pymysql), connectorx, polars, and pymysql's SSCursor with
  ``fetchmany``; DuckDB: pandas.read_sql, ``.df()``, ``fetchnumpy()`` and ``fetchmany``.

Readers take turns: round 1 runs them in order, round 2 in reverse order, and so on, so
that a change in the machine's load falls on all of them; each reader's best and median
time over ROUNDS rounds are reported with the load average seen during the runs. Readers
whose package is missing are skipped with a note (``pip install adbc-driver-postgresql
pyarrow connectorx polars pandas``).

Targets: PostgreSQL: sqlml >= 1.0x the best of ADBC, connectorx and psycopg COPY BINARY.
MySQL and DuckDB: sqlml >= 0.9x the hand-written (fetchmany) reader and >= 2x pandas.

``python benchmarks/read.py [--databases postgresql,mysql,duckdb] [--rounds 5]`` uses
``$SQLML_TEST_POSTGRESQL`` (postgresql://root@127.0.0.1:5432/test) and ``$SQLML_TEST_MYSQL``
(mysql://root@127.0.0.1:3306/test). Prints tables; leaves nothing behind.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sqlml.runtime.datasource import Columns, connect, parse_url

ROWS = 1_000_000
FEATURES = 10
TABLE = "sqlml_read_bench"
SELECT = f"SELECT * FROM {TABLE}"
URLS = {
    "postgresql": os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test"),
    "mysql": os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test"),
}
# Each reader and the modules it needs.
READERS = {
    "postgresql": {
        "sqlml": ["psycopg"],
        "ADBC": ["adbc_driver_postgresql", "pyarrow"],
        "connectorx": ["connectorx", "pyarrow"],
        "polars": ["polars", "connectorx", "pyarrow"],
        "psycopg COPY BINARY + numpy": ["psycopg"],
        "psycopg fetchmany": ["psycopg"],
    },
    "mysql": {
        "sqlml": ["pymysql"],
        "pandas.read_sql": ["pandas", "pymysql"],
        "connectorx": ["connectorx", "pyarrow"],
        "polars": ["polars", "connectorx", "pyarrow"],
        "hand-written (SSCursor fetchmany)": ["pymysql"],
    },
    "duckdb": {
        "sqlml": ["duckdb"],
        "pandas.read_sql": ["pandas", "duckdb"],
        "duckdb .df()": ["pandas", "duckdb"],
        "duckdb fetchnumpy()": ["duckdb"],
        "hand-written (fetchmany)": ["duckdb"],
    },
}


def generate() -> Columns:
    """The benchmark's data: standard normal features and a label in {0, 1, 2}."""
    rng = np.random.default_rng(20261122)
    columns: Columns = {f"x{i}": rng.standard_normal(ROWS) for i in range(FEATURES)}
    columns["label"] = rng.integers(0, 3, ROWS)
    return columns


def mysql_connection(url: str, **options: object) -> object:
    import pymysql

    parsed = parse_url(url)
    return pymysql.connect(
        host=parsed.host,
        port=parsed.port or 3306,
        user=parsed.user or None,
        password=parsed.password,
        database=parsed.path,
        charset="utf8mb4",
        autocommit=True,
        **options,
    )


def load(database: str, location: str) -> None:
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

    with tempfile.TemporaryDirectory() as folder:
        path = location if database == "duckdb" else str(Path(folder) / "load.duckdb")
        con = duckdb.connect(path)
        con.register("data", generate())
        con.execute(f"CREATE TABLE {TABLE} AS SELECT * FROM data")
        if database == "duckdb":
            con.close()
            return
        csv = Path(folder) / "data.csv"
        con.execute(f"COPY {TABLE} TO '{csv}' (HEADER false)")  # shortest exact decimals
        con.close()
        definition = ", ".join([f"x{i} DOUBLE" for i in range(FEATURES)] + ["label BIGINT"])
        with mysql_connection(location, local_infile=True) as mysql, mysql.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
            cursor.execute(f"CREATE TABLE {TABLE} ({definition})")
            cursor.execute(
                f"LOAD DATA LOCAL INFILE '{csv}' INTO TABLE {TABLE} FIELDS TERMINATED BY ','"
            )


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


def reader(database: str, name: str, location: str) -> Callable[[], Columns]:
    """A function reading the table into numpy columns; connections open beforehand."""
    if name == "sqlml":
        source = connect(location if database != "duckdb" else f"duckdb:///{location}")
        return lambda: source.read(SELECT)
    if name == "connectorx":
        import connectorx

        return lambda: arrow_columns(connectorx.read_sql(location, SELECT, return_type="arrow"))
    if name == "polars":
        import polars

        def read_polars() -> Columns:
            frame = polars.read_database_uri(SELECT, location, engine="connectorx")
            return {column: frame[column].to_numpy() for column in frame.columns}

        return read_polars
    if database == "postgresql":
        return postgresql_reader(name, location)
    if database == "mysql":
        import pymysql

        con = mysql_connection(location)
        cursor_class = pymysql.cursors.SSCursor
    else:
        import duckdb

        con, cursor_class = duckdb.connect(location), None
    if name == "pandas.read_sql":
        import pandas as pd

        warnings.simplefilter("ignore", UserWarning)  # pandas would rather have SQLAlchemy

        def read_sql() -> Columns:
            frame = pd.read_sql(SELECT, con)
            return {column: frame[column].to_numpy() for column in frame.columns}

        return read_sql
    if name == "duckdb .df()":

        def df() -> Columns:
            frame = con.execute(SELECT).df()
            return {column: frame[column].to_numpy() for column in frame.columns}

        return df
    if name == "duckdb fetchnumpy()":
        return lambda: dict(con.execute(SELECT).fetchnumpy())

    def hand_written() -> Columns:
        cursor = con.cursor(cursor_class) if cursor_class else con.cursor()
        cursor.execute(SELECT)
        return fetch_columns(cursor)

    return hand_written


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
    if name == "psycopg fetchmany":

        def read_fetchmany() -> Columns:
            with con.transaction(), con.cursor(name="bench") as cursor:
                cursor.execute(SELECT)
                return fetch_columns(cursor)

        return read_fetchmany
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


def fetch_columns(cursor: object) -> Columns:
    """The streaming reader a user would write: ``fetchmany`` batches to numpy, joined."""
    names = [d[0] for d in cursor.description]
    chunks: list[list[np.ndarray]] = [[] for _ in names]
    while rows := cursor.fetchmany(10_000):
        for chunk, values in zip(chunks, zip(*rows, strict=True), strict=True):
            chunk.append(np.array(values))
    cursor.close()
    return {name: np.concatenate(chunk) for name, chunk in zip(names, chunks, strict=True)}


def peak_rss_kib() -> int:
    """This process's peak resident memory so far (Linux).

    Not ``getrusage``'s ``ru_maxrss``: a child starts with its parent's peak in it.
    """
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0])


def child(database: str, name: str, location: str) -> None:
    """Time one read; print the seconds and the growth of the peak RSS (MiB) as JSON."""
    read = reader(database, name, location)
    before = peak_rss_kib()
    start = time.perf_counter()
    columns = read()
    seconds = time.perf_counter() - start
    peak = peak_rss_kib() - before
    expected = generate()
    assert list(columns) == list(expected), list(columns)
    for column, values in expected.items():
        assert columns[column].dtype == values.dtype, (column, columns[column].dtype)
        assert np.array_equal(columns[column], values), column
    print(json.dumps({"seconds": seconds, "peak_mib": peak / 1024}))


def run_once(database: str, name: str, location: str) -> dict[str, float]:
    load_average = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, __file__, "--child", database, name, location],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"{database} {name} failed:\n{done.stderr}")
    return {**json.loads(done.stdout), "load": load_average}


def available(database: str) -> tuple[list[str], list[str]]:
    """The readers of ``database`` whose modules are installed, and notes on the others."""
    names, notes = [], []
    for name, modules in READERS[database].items():
        missing = [m for m in modules if importlib.util.find_spec(m) is None]
        if missing:
            notes.append(f"{database} {name}: skipped, {', '.join(missing)} not installed")
        else:
            names.append(name)
    return names, notes


def measure(database: str, location: str, rounds: int) -> dict[str, list[dict[str, float]]]:
    """Every available reader's runs, the readers taking turns (A B C, C B A, ...)."""
    names, notes = available(database)
    for note in notes:
        print(note)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for round_number in range(rounds):
        for name in names if round_number % 2 == 0 else names[::-1]:
            if name not in runs:
                continue
            try:
                runs[name].append(run_once(database, name, location))
            except RuntimeError as error:
                if name == "sqlml":
                    raise
                print(f"{database} {name}: left out, it failed: {error}")
                del runs[name]
    return runs


def report(database: str, runs: dict[str, list[dict[str, float]]]) -> None:
    best = {name: min(r["seconds"] for r in each) for name, each in runs.items()}
    median = {name: statistics.median(r["seconds"] for r in each) for name, each in runs.items()}
    loads = [r["load"] for each in runs.values() for r in each]
    print(
        f"\n{database}: {len(next(iter(runs.values())))} rounds, readers taking turns; "
        f"load average (1 min) {min(loads):.1f} to {max(loads):.1f}, "
        f"median {statistics.median(loads):.1f}\n"
    )
    print("| reader | best | median | rows/s (best) | sqlml's speed / this (best, median) "
          "| peak RSS growth |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, each in runs.items():
        cells = [
            f"{best[name]:.2f} s",
            f"{median[name]:.2f} s",
            f"{ROWS / best[name]:,.0f}",
            f"{best[name] / best['sqlml']:.2f}x, {median[name] / median['sqlml']:.2f}x",
            f"{max(r['peak_mib'] for r in each):,.0f} MiB",
        ]
        print(f"| {name} | {' | '.join(cells)} |")
    print()
    if database == "postgresql":
        strong = [n for n in ("ADBC", "connectorx", "psycopg COPY BINARY + numpy") if n in runs]
        if not strong:
            print("postgresql: no strong baseline installed, no verdict")
            return
        top = min(strong, key=best.get)
        ratio = best[top] / best["sqlml"]
        median_ratio = min(median[n] for n in strong) / median["sqlml"]
        verdict = "met" if ratio >= 1.0 else "NOT met"
        print(
            f"postgresql: sqlml = {ratio:.2f}x the best strong reader ({top}) on best times, "
            f"{median_ratio:.2f}x on medians (target >= 1.0x): {verdict}"
        )
        return
    hand = next(n for n in runs if n.startswith("hand-written"))
    hand_ratio = best[hand] / best["sqlml"]
    checks = [f"{hand_ratio:.2f}x the hand-written reader (target >= 0.9x)"]
    met = hand_ratio >= 0.9
    if "pandas.read_sql" in runs:
        pandas_ratio = best["pandas.read_sql"] / best["sqlml"]
        checks.append(f"{pandas_ratio:.2f}x pandas.read_sql (target >= 2x)")
        met = met and pandas_ratio >= 2
    others = [n for n in runs if n != "sqlml"]
    top = min(others, key=best.get)
    checks.append(f"{best[top] / best['sqlml']:.2f}x the fastest other reader ({top})")
    print(f"{database}: sqlml = {', '.join(checks)}: {'met' if met else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="postgresql,mysql,duckdb")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for database in options.databases.split(","):
            location = URLS.get(database) or str(Path(folder) / "read.duckdb")
            start = time.perf_counter()
            load(database, location)
            print(
                f"\n{database}: {ROWS:,} rows x {FEATURES} DOUBLE + BIGINT label, "
                f"loaded in {time.perf_counter() - start:.1f} s"
            )
            try:
                report(database, measure(database, location, options.rounds))
            finally:
                drop(database, location)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:5])
    else:
        main()
