"""Read a 1,000,000-row table into numpy columns: sqlml against two baselines, on MySQL and DuckDB.

Data, generated here (seeded): 10 DOUBLE columns and an integer label, loaded into a MySQL
table (LOAD DATA LOCAL INFILE: the server must allow local_infile) and a DuckDB file.
Readers, each timed in a fresh subprocess (best of REPEATS) that also reports its peak RSS
above what it held before reading, and checks the columns it read against the data:

- sqlml: ``Datasource.read("SELECT * FROM ...")``;
- pandas: ``pandas.read_sql`` on the driver's DB-API connection (pymysql; duckdb), then the
  frame's columns as numpy arrays; for DuckDB also its own ``.df()``, for reference;
- hand-written: the streaming reader a user would write: a cursor's ``fetchmany`` loop
  (pymysql's SSCursor on MySQL), each batch's columns made numpy arrays, joined at the end.

Targets: sqlml >= 0.9x the hand-written reader's speed and >= 2x pandas.read_sql's.
Needs pandas (``pip install pandas``) and a MySQL or MariaDB server:
``python benchmarks/read.py`` uses ``$SQLML_TEST_MYSQL`` or mysql://root@127.0.0.1:3306/test.
Prints a table; leaves nothing behind (the table is dropped, the DuckDB file deleted).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np
import pymysql

from sqlml.runtime.datasource import Columns, connect, parse_url

ROWS = 1_000_000
FEATURES = 10
REPEATS = 3
TABLE = "sqlml_read_bench"
SELECT = f"SELECT * FROM {TABLE}"
MYSQL_URL = os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test")
READERS = {
    "mysql": ["sqlml", "pandas.read_sql", "hand-written"],
    "duckdb": ["sqlml", "pandas.read_sql", "duckdb .df()", "hand-written"],
}


def generate() -> Columns:
    """The benchmark's data: standard normal features and a label in {0, 1, 2}."""
    rng = np.random.default_rng(20261122)
    columns: Columns = {f"x{i}": rng.standard_normal(ROWS) for i in range(FEATURES)}
    columns["label"] = rng.integers(0, 3, ROWS)
    return columns


def mysql_connection(url: str, **options: object) -> pymysql.Connection:
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


def load(duckdb_path: Path, mysql_url: str) -> None:
    """Write the data to a DuckDB file, then through a CSV file to MySQL."""
    con = duckdb.connect(str(duckdb_path))
    con.register("data", generate())
    con.execute(f"CREATE TABLE {TABLE} AS SELECT * FROM data")
    with tempfile.TemporaryDirectory() as folder:
        csv = Path(folder) / "data.csv"
        con.execute(f"COPY {TABLE} TO '{csv}' (HEADER false)")  # shortest exact decimals
        con.close()
        definition = ", ".join([f"x{i} DOUBLE" for i in range(FEATURES)] + ["label BIGINT"])
        with mysql_connection(mysql_url, local_infile=True) as mysql, mysql.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
            cursor.execute(f"CREATE TABLE {TABLE} ({definition})")
            cursor.execute(
                f"LOAD DATA LOCAL INFILE '{csv}' INTO TABLE {TABLE} FIELDS TERMINATED BY ','"
            )


def reader(database: str, name: str, location: str) -> Callable[[], Columns]:
    """A function reading the table into numpy columns; connections open beforehand."""
    if name == "sqlml":
        url = location if database == "mysql" else f"duckdb:///{location}"
        source = connect(url)
        return lambda: source.read(SELECT)
    con = mysql_connection(location) if database == "mysql" else duckdb.connect(location)
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

    def hand_written() -> Columns:
        cursor = con.cursor(pymysql.cursors.SSCursor) if database == "mysql" else con.cursor()
        cursor.execute(SELECT)
        names = [d[0] for d in cursor.description]
        chunks: list[list[np.ndarray]] = [[] for _ in names]
        while rows := cursor.fetchmany(10_000):
            for chunk, values in zip(chunks, zip(*rows, strict=True), strict=True):
                chunk.append(np.array(values))
        cursor.close()
        return {name: np.concatenate(chunk) for name, chunk in zip(names, chunks, strict=True)}

    return hand_written


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


def measure(database: str, name: str, location: str) -> tuple[float, float]:
    """Best time and largest peak RSS growth of REPEATS runs, each in a fresh process."""
    runs = []
    for _ in range(REPEATS):
        done = subprocess.run(
            [sys.executable, __file__, "--child", database, name, location],
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(done.stdout))
    return min(r["seconds"] for r in runs), max(r["peak_mib"] for r in runs)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        duckdb_path = Path(folder) / "read.duckdb"
        start = time.perf_counter()
        load(duckdb_path, MYSQL_URL)
        loaded = time.perf_counter() - start
        print(f"{ROWS:,} rows x {FEATURES} DOUBLE + BIGINT label, loaded in {loaded:.1f} s")
        try:
            results = {
                (database, name): measure(
                    database, name, MYSQL_URL if database == "mysql" else str(duckdb_path)
                )
                for database, names in READERS.items()
                for name in names
            }
        finally:
            with mysql_connection(MYSQL_URL) as mysql, mysql.cursor() as cursor:
                cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
    print(f"best of {REPEATS} runs per reader, each in a fresh process\n")
    print("| database | reader | time | rows/s | sqlml's speed / this | peak RSS growth |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for (database, name), (seconds, peak) in results.items():
        ratio = seconds / results[database, "sqlml"][0]
        cells = [f"{seconds:.2f} s", f"{ROWS / seconds:,.0f}", f"{ratio:.2f}x", f"{peak:,.0f} MiB"]
        print(f"| {database} | {name} | {' | '.join(cells)} |")
    print()
    for database in READERS:
        sqlml = results[database, "sqlml"][0]
        hand = results[database, "hand-written"][0] / sqlml
        pandas = results[database, "pandas.read_sql"][0] / sqlml
        verdict = "met" if hand >= 0.9 and pandas >= 2 else "NOT met"
        print(
            f"{database}: sqlml = {hand:.2f}x the hand-written reader (target >= 0.9x), "
            f"{pandas:.2f}x pandas.read_sql (target >= 2x): {verdict}"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:5])
    else:
        main()
