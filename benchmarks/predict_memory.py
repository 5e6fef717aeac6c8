"""TO PREDICT's peak memory: a SELECT four times as big must not need four times the memory.

Data, generated in each database (seeded): ``BIG`` rows of an id, 5 DOUBLE features and a 0/1
label, in PostgreSQL (``$SQLML_TEST_POSTGRESQL`` or postgresql://root@127.0.0.1:5432/test)
and in a DuckDB file; an XGBoost model trained by sqlml on 100,000 of them (10 rounds).

Measured, each a fresh process (``sqlml -e "SELECT ... TO PREDICT ..."``, the whole command a
user runs), taking turns, best wall time and largest peak RSS of REPEATS runs:

- baseline: TO PREDICT of the first ``BIG // 4`` rows;
- sqlml: TO PREDICT of all ``BIG`` rows.

TO PREDICT reads, scores and writes a batch at a time, so the ratio of peak RSS (big / small)
should stay near 1 (target <= 1.25) where the database streams the rows; a whole-result
reader would need about 4x. The DuckDB row is reported as measured: its batched read
materialises the SELECT in a temporary table first, held in DuckDB's buffer pool.
``python benchmarks/predict_memory.py``; leaves nothing behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rounds import in_fresh_process, taking_turns

BIG = 4_000_000
REPEATS = 2
TABLE, MODEL = "sqlml_predict_memory_bench", "sqlml_predict_memory_bench_model"
OUT = "sqlml_predict_memory_bench_out"
POSTGRESQL_URL = os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test")
GENERATE = {
    "postgresql": f"CREATE TABLE {TABLE} AS SELECT i AS id, random() AS x1, random() AS x2, "
    "random() AS x3, random() AS x4, random() AS x5, (random() > 0.5)::INT AS y "
    f"FROM generate_series(0, {BIG - 1}) AS i",
    "duckdb": f"CREATE TABLE {TABLE} AS SELECT i AS id, random() AS x1, random() AS x2, "
    "random() AS x3, random() AS x4, random() AS x5, (random() > 0.5)::INT AS y "
    f"FROM range({BIG}) AS r(i)",
}
SEED = {"postgresql": "SELECT setseed(0.5)", "duckdb": "SELECT setseed(0.5)"}


def sqlml(url: str, program: str) -> list[str]:
    return [sys.executable, "-m", "sqlml", "--datasource", url, "-e", program]


def measure(url: str) -> dict[str, tuple[float, float]]:
    """Each command's best wall time and largest peak RSS (MiB), taking turns, each run a
    fresh process with the input cache off."""
    predict = "SELECT * FROM {source} TO PREDICT " + OUT + ".y USING " + MODEL + ";"
    small = f"(SELECT * FROM {TABLE} WHERE id < {BIG // 4}) AS q"
    commands = {
        "baseline": sqlml(url, predict.format(source=small)),
        "sqlml": sqlml(url, predict.format(source=TABLE)),
    }
    env = {**os.environ, "SQLML_CACHE": "off"}
    runs = taking_turns(
        {
            name: lambda n=name, c=command: in_fresh_process(n, c, env)
            for name, command in commands.items()
        },
        REPEATS,
        required=commands,
    )
    return {name: (runs.best(name), runs.largest(name, "peak")) for name in runs.names()}


def prepare(kind: str, url: str) -> None:
    from sqlml.datasources import connect

    ds = connect(url)
    try:
        ds.execute(f"DROP TABLE IF EXISTS {TABLE}")
        ds.execute(f"DROP TABLE IF EXISTS {OUT}")
        ds.execute(SEED[kind])
        ds.execute(GENERATE[kind])
    finally:
        ds.close()
    train = (
        f"DROP MODEL IF EXISTS {MODEL}; SELECT x1, x2, x3, x4, x5, y FROM {TABLE} "
        f"WHERE id < 100000 TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        f"train.num_boost_round = 10 LABEL y INTO {MODEL};"
    )
    subprocess.run(sqlml(url, train), check=True, stderr=subprocess.DEVNULL)


def clean(url: str) -> None:
    program = f"DROP TABLE IF EXISTS {TABLE}; DROP TABLE IF EXISTS {OUT}; DROP MODEL {MODEL};"
    subprocess.run(sqlml(url, program), check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    print(f"TO PREDICT of {BIG // 4:,} rows (baseline) and {BIG:,} rows (sqlml), "
          "id + 5 DOUBLE + label")  # fmt: skip
    print(f"{'database':<12}{'rows':>11}{'wall s':>9}{'peak RSS MiB':>14}{'RSS ratio':>11}")
    with tempfile.TemporaryDirectory() as folder:
        for kind, url in (
            ("postgresql", POSTGRESQL_URL),
            ("duckdb", f"duckdb:///{Path(folder) / 'predict.duckdb'}"),
        ):
            prepare(kind, url)
            try:
                results = measure(url)
            finally:
                clean(url)
            base_rss = results["baseline"][1]
            for name, rows in (("baseline", BIG // 4), ("sqlml", BIG)):
                wall, rss = results[name]
                print(f"{kind:<12}{rows:>11,}{wall:>9.2f}{rss:>14.0f}{rss / base_rss:>11.2f}")


if __name__ == "__main__":
    main()
