"""The input cache: a second TO TRAIN on the same SELECT reads from the cache, not the database.

Data: train.py's (1,000,000 rows x 10 DOUBLE + a 0/1 label, seeded), in MySQL and DuckDB.
For each database, with an empty cache in a temporary folder, the same XGBoost TO TRAIN runs
twice, each in a fresh process: the first reads the database (fingerprints the table, reads
the rows, writes the cache entry), the second finds the entry (fingerprints the table, loads
the entry). Each process times its training read (``cached_read``) and the whole statement.
REPEATS rounds, each with a new cache folder, the databases taking turns (A B, B A, ...:
benchmarks/rounds.py); best and median with the load average.

Target: the second read >= 5x faster than the first. ``python benchmarks/cache.py`` uses
``$SQLML_TEST_MYSQL`` or mysql://root@127.0.0.1:3306/test; leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rounds import Runs, taking_turns
from train import MODEL, MYSQL_URL, TABLE, load, mysql_connection, statement

REPEATS = 3


def child(url: str) -> None:
    """Run the TO TRAIN statement; print its read's and its own seconds as JSON."""
    from sqlml import cli
    from sqlml.datasources import Columns, Datasource
    from sqlml.runtime import in_memory
    from sqlml.runtime.progress import Progress

    reads: list[float] = []
    original = in_memory.cached_read

    def timed_read(
        datasource: Datasource, select: str, reporter: Progress | None = None
    ) -> Columns:
        start = time.perf_counter()
        columns = original(datasource, select, reporter)
        reads.append(time.perf_counter() - start)
        return columns

    in_memory.cached_read = timed_read
    start = time.perf_counter()
    status = cli.main(["-e", statement(0), "--datasource", url])
    seconds = time.perf_counter() - start
    assert status == 0 and len(reads) == 1, (status, reads)
    print(json.dumps({"read": reads[0], "statement": seconds}))


def run_twice(url: str) -> dict[str, float]:
    """The first and the second TO TRAIN's timings, with a new, empty cache ("seconds": the
    first read's)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "SQLML_CACHE": "on", "SQLML_CACHE_DIR": cache}
        runs = []
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, __file__, "--child", url],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(done.stdout.splitlines()[-1]))
        assert len(list(Path(cache).glob("*.npz"))) == 1
        first, second = runs
        return {
            "seconds": first["read"],
            "first read": first["read"],
            "first statement": first["statement"],
            "second read": second["read"],
            "second statement": second["statement"],
        }


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        duckdb_path = Path(folder) / "cache.duckdb"
        load(duckdb_path, MYSQL_URL)
        time.sleep(2.5)  # MySQL: a table changed in the last 2 s is fingerprinted by checksum
        urls = {"mysql": MYSQL_URL, "duckdb": f"duckdb:///{duckdb_path}"}
        try:
            runs = taking_turns(
                {database: lambda url=url: run_twice(url) for database, url in urls.items()},
                REPEATS,
                required=urls,
            )
            for url in urls.values():
                drop = ["-e", f"DROP MODEL {MODEL};", "--datasource", url]
                subprocess.run([sys.executable, "-m", "sqlml", *drop], check=True)
        finally:
            with mysql_connection(MYSQL_URL) as mysql, mysql.cursor() as cursor:
                cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
    report(runs)


def report(runs: Runs) -> None:
    print(f"{REPEATS} rounds, each with an empty cache; each TO TRAIN a fresh process; "
          f"{runs.load()}\n")  # fmt: skip
    print("| database | TO TRAIN | read best | read median | statement best | statement median |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for database in runs.names():
        for name, which in (("first (cache miss)", "first"), ("second (cache hit)", "second")):
            read, whole = f"{which} read", f"{which} statement"
            print(
                f"| {database} | {name} | {runs.best(database, read):.3f} s "
                f"| {runs.median(database, read):.3f} s | {runs.best(database, whole):.2f} s "
                f"| {runs.median(database, whole):.2f} s |"
            )
    print()
    for database in runs.names():
        ratio = runs.best(database, "first read") / runs.best(database, "second read")
        median = runs.median(database, "first read") / runs.median(database, "second read")
        verdict = "met" if ratio >= 5 else "NOT met"
        print(f"{database}: the second read is {ratio:.1f}x faster on best times, {median:.1f}x "
              f"on medians (target >= 5x): {verdict}")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    else:
        main()
