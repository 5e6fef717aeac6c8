"""TO TRAIN with ``train.external_memory = true`` on 1,000,000 and 4,000,000 rows: peak memory
and wall time against the same training in memory, on PostgreSQL, MySQL and DuckDB.

Data, generated in each database by SQL: 10 DOUBLE columns of uniform noise and a 0/1 label
that depends on three of them, in a table of ``SMALL`` rows and one of ``BIG`` rows. Each run
is the whole ``sqlml -e "SELECT * FROM t TO TRAIN xgboost.gbtree WITH ... LABEL label INTO
m;"`` command in a fresh process (``ROUNDS`` boosting rounds, hist, every row: no validation
split; the input cache off; no script baseline: the same command in memory is the
reference): its wall time and peak RSS. Runs take turns (in memory,
external; then reversed) over ``--rounds``; best wall time, largest peak RSS.

Targets (issue 18 item 5): peak RSS of the external-memory training at ``BIG`` rows <= 1.2x
that at ``SMALL`` rows, and its wall time <= 1.3x the in-memory training's.
``python benchmarks/external_memory.py [--databases postgresql,mysql,duckdb] [--rounds 1]``
uses ``$SQLML_TEST_POSTGRESQL`` and ``$SQLML_TEST_MYSQL``; leaves nothing behind.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import lean

SMALL, BIG = 1_000_000, 4_000_000
ROUNDS = 20
TABLE, MODEL = "sqlml_external_bench", "sqlml_external_bench_model"
URLS = {
    "postgresql": os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test"),
    "mysql": os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test"),
}
FEATURES = ", ".join(f"RAND_() AS x{i}" for i in range(10))
LABEL = "CASE WHEN x0 + x1 - x2 + 0.3 * RAND_() > 0.65 THEN 1 ELSE 0 END AS label"
ROWS = {  # {rows}: how many
    "postgresql": "generate_series(1, {rows}) AS g",
    "mysql": "seq_1_to_{rows}",
    "duckdb": "range({rows})",
}
DIALECT = {
    "postgresql": {"RAND_": "random"},
    "mysql": {"RAND_": "RAND"},
    "duckdb": {"RAND_": "random"},
}


def generating(database: str, table: str, rows: int) -> str:
    """The statement that makes ``table`` of ``rows`` rows."""
    sql = (
        f"CREATE TABLE {table} AS SELECT s.*, {LABEL} "
        f"FROM (SELECT {FEATURES} FROM {ROWS[database].format(rows=rows)}) AS s"
    )
    for word, spelled in DIALECT[database].items():
        sql = sql.replace(word, spelled)
    return sql


def sqlml(url: str, sql: str) -> list[str]:
    return [sys.executable, "-m", "sqlml", "--datasource", url, "-e", sql]


def training(table: str, external: bool) -> str:
    attributes = [
        "objective = 'binary:logistic'",
        f"train.num_boost_round = {ROUNDS}",
        "validation.split = 0",
        f"train.external_memory = {'true' if external else 'false'}",
    ]
    return (
        f"SELECT * FROM {table} TO TRAIN xgboost.gbtree WITH {', '.join(attributes)} "
        f"LABEL label INTO {MODEL};"
    )


def run(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of ``command`` in a fresh process."""
    figures = lean.run(command)  # sqlml's environment, OMP passive, the input cache off
    return figures["seconds"], figures["peak"]


def measure(database: str, url: str, rounds: int) -> dict[tuple[int, bool], tuple[float, float]]:
    tables = {rows: f"{TABLE}_{rows // 1_000_000}m" for rows in (SMALL, BIG)}
    setup = "; ".join(
        f"DROP TABLE IF EXISTS {t}; {generating(database, t, rows)}" for rows, t in tables.items()
    )
    subprocess.run(sqlml(url, setup + ";"), check=True, stdout=subprocess.DEVNULL)
    runs: dict[tuple[int, bool], list[tuple[float, float]]] = {}
    try:
        for round_number in range(rounds):
            modes = [False, True] if round_number % 2 == 0 else [True, False]
            for rows, table in tables.items():
                for external in modes:
                    load = os.getloadavg()[0]
                    wall, peak = run(sqlml(url, training(table, external)))
                    runs.setdefault((rows, external), []).append((wall, peak))
                    how = "external" if external else "in memory"
                    print(f"{database} {rows:,} {how}: {wall:.1f} s, {peak:,.0f} MiB "
                          f"(load {load:.1f})", flush=True)  # fmt: skip
    finally:
        drop = "; ".join(f"DROP TABLE IF EXISTS {t}" for t in tables.values())
        subprocess.run(sqlml(url, f"{drop}; DROP MODEL IF EXISTS {MODEL};"), check=False)
    return {key: (min(w for w, _ in each), max(p for _, p in each)) for key, each in runs.items()}


def report(database: str, found: dict[tuple[int, bool], tuple[float, float]]) -> None:
    print(f"\n| {database} rows | in memory | external memory | wall / in memory |")
    print("| ---: | ---: | ---: | ---: |")
    for rows in (SMALL, BIG):
        (wall, peak), (ext_wall, ext_peak) = found[rows, False], found[rows, True]
        print(f"| {rows:,} | {wall:.1f} s, {peak:,.0f} MiB | {ext_wall:.1f} s, "
              f"{ext_peak:,.0f} MiB | {ext_wall / wall:.2f}x |")  # fmt: skip
    memory = found[BIG, True][1] / found[SMALL, True][1]
    wall = found[BIG, True][0] / found[BIG, False][0]
    met = memory <= 1.2 and wall <= 1.3
    print(f"\n{database}: external memory's peak RSS at {BIG:,} rows = {memory:.2f}x that at "
          f"{SMALL:,} (target <= 1.2x); wall time = {wall:.2f}x in memory's at {BIG:,} "
          f"(target <= 1.3x): {'met' if met else 'NOT met'}\n")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="postgresql,mysql,duckdb")
    parser.add_argument("--rounds", type=int, default=1)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for database in options.databases.split(","):
            url = URLS.get(database) or f"duckdb:///{Path(folder) / 'external.duckdb'}"
            report(database, measure(database, url, options.rounds))


if __name__ == "__main__":
    main()
