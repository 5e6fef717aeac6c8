"""Read 1,000,000 rows x 10 DOUBLE + a BIGINT label from a DuckDB file into numpy columns:
sqlml against DuckDB's own fastest readers; and the peak memory of streaming the rows in
batches (``read_batches``, what ``train.external_memory`` reads) at 1,000,000 and 4,000,000.

Readers, each run in a fresh subprocess on a connection opened before the clock starts; each
reports its peak RSS above what it held before reading and checks the columns it read:

- sqlml: ``Datasource.read("SELECT * FROM ...")``; sqlml batches: ``read_batches`` joined;
- ``execute(...).fetchnumpy()`` (the DB-API path) and ``sql(...).fetchnumpy()`` (a relation);
- Arrow: ``sql(...).to_arrow_table()`` (what ``fetch_arrow_table`` became), each column's
  ``to_numpy()``.

Readers take turns (A B C, C B A, ...), so a change in the machine's load falls on all of
them; best and median over ROUNDS rounds are reported with the load average during the runs.
Target: sqlml >= 0.95x the fastest fetchnumpy.

Memory (``--memory``): one pass over ``read_batches`` of 262,144 rows in a fresh process, at
1,000,000 and at 4,000,000 rows, for the Arrow stream and for the temporary table it falls
back to without pyarrow. Target: peak RSS at 4,000,000 rows <= 1.2x that at 1,000,000.

``python benchmarks/read_duckdb.py [--rounds 7] [--memory]``. Leaves nothing behind.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sqlml.runtime.datasource import Columns, connect
from sqlml.runtime.datasource.base import join_batches

ROWS = 1_000_000
FEATURES = 10
SELECT = "SELECT * FROM data"
READERS = [
    "sqlml",
    "sqlml batches",
    "execute().fetchnumpy()",
    "sql().fetchnumpy()",
    "Arrow to_arrow_table() to numpy",
]
MEMORY = ["Arrow stream", "temporary table"]
STREAM_ROWS = 262_144  # external_memory.BATCH_ROWS


def generate(rows: int) -> Columns:
    """Standard normal features and a label in {0, 1, 2} (seeded)."""
    rng = np.random.default_rng(20261122)
    columns: Columns = {f"x{i}": rng.standard_normal(rows) for i in range(FEATURES)}
    columns["label"] = rng.integers(0, 3, rows)
    return columns


def load(path: str, rows: int) -> None:
    import duckdb

    con = duckdb.connect(path)
    for start in range(0, rows, ROWS):  # 1,000,000 rows at a time
        con.register("part", generate(ROWS))
        into = "CREATE TABLE data AS" if start == 0 else "INSERT INTO data"
        con.execute(f"{into} SELECT * FROM part")
        con.unregister("part")
    con.close()


def reader(name: str, path: str) -> Callable[[], Columns]:
    """A function reading the table into numpy columns; the connection open beforehand."""
    if name.startswith("sqlml"):
        source = connect(f"duckdb:///{path}")
        if name == "sqlml":
            return lambda: source.read(SELECT)
        return lambda: join_batches(source.read_batches(SELECT))
    import duckdb

    con = duckdb.connect(path)
    if name == "execute().fetchnumpy()":
        return lambda: dict(con.execute(SELECT).fetchnumpy())
    if name == "sql().fetchnumpy()":
        return lambda: dict(con.sql(SELECT).fetchnumpy())

    def arrow() -> Columns:
        table = con.sql(SELECT).to_arrow_table()
        return {column: table.column(column).to_numpy() for column in table.column_names}

    return arrow


def peak_rss_kib() -> int:
    """This process's peak resident memory so far (Linux; a child's own, unlike ru_maxrss)."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0])


def child_read(name: str, path: str) -> None:
    """Time one read; print the seconds and the growth of the peak RSS (MiB) as JSON."""
    read = reader(name, path)
    before = peak_rss_kib()
    start = time.perf_counter()
    columns = read()
    seconds = time.perf_counter() - start
    peak = peak_rss_kib() - before
    expected = generate(ROWS)
    assert list(columns) == list(expected), list(columns)
    for column, values in expected.items():
        assert columns[column].dtype == values.dtype, (column, columns[column].dtype)
        assert np.array_equal(columns[column], values), column
    print(json.dumps({"seconds": seconds, "peak_mib": peak / 1024}))


def child_stream(name: str, path: str) -> None:
    """One pass over read_batches; print the seconds, rows and peak RSS growth as JSON."""
    from sqlml.runtime.datasource import duckdb as duckdb_source

    if name == "temporary table":
        duckdb_source._arrow_installed = lambda: False
    source = connect(f"duckdb:///{path}")
    before = peak_rss_kib()
    start = time.perf_counter()
    rows = sum(len(batch["label"]) for batch in source.read_batches(SELECT, STREAM_ROWS))
    seconds = time.perf_counter() - start
    print(
        json.dumps({"seconds": seconds, "rows": rows, "peak_mib": (peak_rss_kib() - before) / 1024})
    )


def run_once(mode: str, name: str, path: str) -> dict[str, float]:
    load_average = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, __file__, mode, name, path], capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise RuntimeError(f"{name} failed:\n{done.stderr}")
    return {**json.loads(done.stdout), "load": load_average}


def taking_turns(
    mode: str, names: list[str], paths: list[str], rounds: int
) -> dict[tuple[str, str], list[dict[str, float]]]:
    """Every (reader, file)'s runs, taking turns: A B C in one round, C B A in the next."""
    order = [(name, path) for path in paths for name in names]
    runs: dict[tuple[str, str], list[dict[str, float]]] = {key: [] for key in order}
    for round_number in range(rounds):
        for name, path in order if round_number % 2 == 0 else order[::-1]:
            runs[name, path].append(run_once(mode, name, path))
    return runs


def load_line(runs: dict) -> str:
    loads = [r["load"] for each in runs.values() for r in each]
    return (
        f"load average (1 min) {min(loads):.1f} to {max(loads):.1f}, "
        f"median {statistics.median(loads):.1f}"
    )


def report_reads(runs: dict[tuple[str, str], list[dict[str, float]]], rounds: int) -> None:
    best = {name: min(r["seconds"] for r in each) for (name, _), each in runs.items()}
    median = {
        name: statistics.median(r["seconds"] for r in each) for (name, _), each in runs.items()
    }
    print(f"\n{rounds} rounds, readers taking turns; {load_line(runs)}\n")
    print("| reader | best | median | rows/s (best) | sqlml's speed / this (best, median) "
          "| peak RSS growth |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for (name, _), each in runs.items():
        cells = [
            f"{best[name]:.3f} s",
            f"{median[name]:.3f} s",
            f"{ROWS / best[name]:,.0f}",
            f"{best[name] / best['sqlml']:.2f}x, {median[name] / median['sqlml']:.2f}x",
            f"{max(r['peak_mib'] for r in each):,.0f} MiB",
        ]
        print(f"| {name} | {' | '.join(cells)} |")
    fetch = [n for n in best if "fetchnumpy" in n]
    top = min(fetch, key=best.get)
    ratio, median_ratio = best[top] / best["sqlml"], min(map(median.get, fetch)) / median["sqlml"]
    verdict = "met" if ratio >= 0.95 else "NOT met"
    print(
        f"\nsqlml = {ratio:.2f}x the fastest fetchnumpy ({top}) on best times, "
        f"{median_ratio:.2f}x on medians (target >= 0.95x): {verdict}"
    )


def report_memory(runs: dict[tuple[str, str], list[dict[str, float]]], rounds: int) -> None:
    print(
        f"\nread_batches({STREAM_ROWS:,} rows), {rounds} rounds taking turns; {load_line(runs)}\n"
    )
    print("| path | rows | best | median | peak RSS growth (largest) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    peaks: dict[tuple[str, int], float] = {}
    for (name, _), each in runs.items():
        rows = int(each[0]["rows"])
        peaks[name, rows] = max(r["peak_mib"] for r in each)
        times = [r["seconds"] for r in each]
        print(
            f"| {name} | {rows:,} | {min(times):.2f} s | {statistics.median(times):.2f} s "
            f"| {peaks[name, rows]:,.0f} MiB |"
        )
    for name in MEMORY:
        small, large = (peaks[key] for key in sorted(k for k in peaks if k[0] == name))
        verdict = "met" if large <= 1.2 * small else "NOT met"
        print(f"{name}: peak RSS at 4,000,000 rows = {large / small:.2f}x that at 1,000,000 "
              f"(target <= 1.2x): {verdict}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--memory", action="store_true", help="peak RSS of read_batches")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if options.memory:
            paths = [str(Path(folder) / f"{rows}.duckdb") for rows in (ROWS, 4 * ROWS)]
            for path, rows in zip(paths, (ROWS, 4 * ROWS), strict=True):
                load(path, rows)
            report_memory(taking_turns("--stream", MEMORY, paths, options.rounds), options.rounds)
            return
        path = str(Path(folder) / "read.duckdb")
        load(path, ROWS)
        report_reads(taking_turns("--read", READERS, [path], options.rounds), options.rounds)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--read"]:
        child_read(*sys.argv[2:4])
    elif sys.argv[1:2] == ["--stream"]:
        child_stream(*sys.argv[2:4])
    else:
        main()
