"""XGBoost TO TRAIN end to end against the strongest script, on MySQL, DuckDB and PostgreSQL.

Data, generated here (seeded): 1,000,000 rows of 10 DOUBLE columns and a 0/1 label that
depends on them, in a MySQL table (LOAD DATA LOCAL INFILE: the server must allow
local_infile), a DuckDB file and a PostgreSQL table. Both sides train the same booster
(binary:logistic, ``PARAMS``, ``ROUNDS`` rounds, every row) and keep the model:

- sqlml: ``sqlml -e "SELECT * FROM ... TO TRAIN xgboost.gbtree WITH ... INTO m;"``, the
  command a user runs: parse, check, read, derive features, train, store the model in the
  database. With ``validation.split = 0`` it trains on every row like the script; the
  default (20% held out, validation metrics stored) and ``train.external_memory`` are
  measured too, for reference;
- the script (benchmarks/baselines/train.py, in a lean environment holding only what it
  imports, at sqlml's environment's versions: benchmarks/lean.py): the strongest a user
  would write: the fastest reader for the database other than sqlml (benchmarks/read.py:
  MySQL: polars with connectorx; DuckDB: the relation's ``fetchnumpy``; PostgreSQL: ADBC),
  the columns stacked into one matrix, ``xgboost.QuantileDMatrix`` (what ``hist`` trains
  on, one byte a value), ``xgboost.train``, the model saved to a file.

Each is a fresh process, timed from start to exit: wall time, CPU time (user + system) and
peak RSS; the commands take turns (A B C D, D C B A, ...: benchmarks/rounds.py), best and
median of REPEATS rounds, with the load average; both sides with ``OMP_WAIT_POLICY=PASSIVE``,
the input cache off.
Target: sqlml <= 1.15x the script's time. ``python benchmarks/train.py [--databases
mysql,duckdb,postgresql] [--rounds 3]`` uses ``$SQLML_TEST_MYSQL`` and
``$SQLML_TEST_POSTGRESQL`` (the test servers by default); prints a table; leaves nothing
behind (the tables and the models are dropped, the DuckDB file deleted).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import lean
from rounds import Runs, taking_turns
from tables import copy_to_mysql, mysql_connection

ROWS = lean.rows(1_000_000)
FEATURES = 10
ROUNDS = 100
REPEATS = 3
TABLE = "sqlml_train_bench"
MODEL = "sqlml_train_bench_model"
MYSQL_URL = os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test")
POSTGRESQL_URL = os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test")
# XGBoost's parameters on both sides: sqlml's defaults for xgboost.gbtree, stated in full.
PARAMS: dict[str, Any] = {
    "booster": "gbtree",
    "objective": "binary:logistic",
    "eta": 0.3,
    "max_depth": 6,
    "min_child_weight": 1.0,
    "gamma": 0.0,
    "subsample": 1.0,
    "colsample_bytree": 1.0,
    "lambda": 1.0,
    "alpha": 0.0,
    "tree_method": "hist",
    "seed": 0,
    "nthread": 2,
    "verbosity": 0,
}
# What the script imports, for its lean environment.
SCRIPT_MODULES = {
    "duckdb": ["duckdb", "numpy", "xgboost"],
    "mysql": ["polars", "connectorx", "pyarrow", "numpy", "xgboost"],
    "postgresql": ["adbc_driver_postgresql", "pyarrow", "numpy", "xgboost"],
}


def generate() -> dict[str, Any]:
    """Standard normal features; the label is 1 where a noisy linear score is positive."""
    import numpy as np

    rng = np.random.default_rng(20261123)
    columns = {f"x{i}": rng.standard_normal(ROWS) for i in range(FEATURES)}
    score = sum(columns[f"x{i}"] * (i - 4.5) / 4 for i in range(FEATURES))
    columns["label"] = (score + rng.standard_normal(ROWS) > 0).astype(np.int64)
    return columns


def load(duckdb_path: Path, mysql_url: str) -> None:
    """Write the data to a DuckDB file, then through a CSV file to MySQL."""
    import duckdb

    con = duckdb.connect(str(duckdb_path))
    con.register("data", generate())
    con.execute(f"CREATE TABLE {TABLE} AS SELECT * FROM data")
    definition = ", ".join([f"x{i} DOUBLE" for i in range(FEATURES)] + ["label BIGINT"])
    copy_to_mysql(con, TABLE, definition, mysql_url)
    con.close()


def statement(split: float | None, external: bool = False) -> str:
    """The TO TRAIN statement: ``PARAMS`` as attributes; ``split`` None: the default split;
    ``external``: streaming the rows through XGBoost's external memory."""
    attrs = [
        f"{key} = {value!r}" if isinstance(value, str) else f"{key} = {value}"
        for key, value in PARAMS.items()
        if key not in ("booster", "verbosity")
    ]
    attrs.append(f"train.num_boost_round = {ROUNDS}")
    if split is not None:
        attrs.append(f"validation.split = {split}")
    if external:
        attrs.append("train.external_memory = true")
    return f"SELECT * FROM {TABLE} TO TRAIN xgboost.gbtree WITH {', '.join(attrs)} " \
        f"LABEL label INTO {MODEL};"  # fmt: skip


def measure(database: str, url: str, location: str, rounds: int, main_only: bool) -> Runs:
    """The script and sqlml's statements on one database, taking turns (``main_only``: the
    script and sqlml with ``validation.split = 0`` alone)."""
    sqlml = [sys.executable, "-m", "sqlml", "--datasource", url, "-e"]
    script_args = [database, location, TABLE, json.dumps(PARAMS), str(ROUNDS)]
    commands = {
        "script": lean.command(SCRIPT_MODULES[database], "train.py", *script_args),
        "sqlml, validation.split = 0": [*sqlml, statement(0)],
        "sqlml, default": [*sqlml, statement(None)],
        "sqlml, train.external_memory": [*sqlml, statement(0, external=True)],
    }
    if main_only:
        commands = {name: commands[name] for name in ("script", "sqlml, validation.split = 0")}
    runs = taking_turns(
        {name: lambda c=command: lean.run(c) for name, command in commands.items()},
        rounds,
        required=commands,
    )
    drop = ["-e", f"DROP MODEL {MODEL};", "--datasource", url]
    subprocess.run([sys.executable, "-m", "sqlml", *drop], check=True)
    return runs


SCRIPT_READER = {
    "mysql": "polars (connectorx)",
    "duckdb": "relation fetchnumpy",
    "postgresql": "ADBC",
}


def report(database: str, runs: Runs) -> None:
    print(f"\n{database}: script reads with {SCRIPT_READER[database]}; {runs.load()}\n")
    print("| run | wall best | wall median | / script (best, median) | CPU best "
          "| / script | peak RSS |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in runs.names():
        cpu_ratio = runs.best(name, "cpu") / runs.best("script", "cpu")
        print(
            f"| {name} | {runs.best(name):.2f} s | {runs.median(name):.2f} s "
            f"| {runs.ratios(name, 'script')} | {runs.best(name, 'cpu'):.2f} s "
            f"| {cpu_ratio:.2f}x | {runs.largest(name, 'peak'):,.0f} MiB |"
        )
    main_run = "sqlml, validation.split = 0"
    ratio = runs.best(main_run) / runs.best("script")
    median_ratio = runs.median(main_run) / runs.median("script")
    verdict = "met" if ratio <= 1.15 else "NOT met"
    print(
        f"\n{database}: sqlml = {ratio:.2f}x the script's wall time on best times, "
        f"{median_ratio:.2f}x on medians (target <= 1.15x): {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="mysql,duckdb,postgresql")
    parser.add_argument("--rounds", type=int, default=REPEATS)
    parser.add_argument(
        "--main-only", action="store_true", help="the script and sqlml's main statement alone"
    )
    options = parser.parse_args()
    databases = options.databases.split(",")
    with tempfile.TemporaryDirectory() as folder:
        duckdb_path = Path(folder) / "train.duckdb"
        start = time.perf_counter()
        # In a child: the children timed later would otherwise start with this process's
        # peak RSS (the generated data) as theirs.
        subprocess.run([sys.executable, __file__, "--load", str(duckdb_path), *databases],
                       check=True)  # fmt: skip
        print(f"{ROWS:,} rows x {FEATURES} DOUBLE + 0/1 label, loaded in "
              f"{time.perf_counter() - start:.1f} s; binary:logistic, {ROUNDS} rounds, hist; "
              f"{options.rounds} rounds of runs, each a fresh process")  # fmt: skip
        places = {
            "mysql": (MYSQL_URL, MYSQL_URL),
            "duckdb": (f"duckdb:///{duckdb_path}", str(duckdb_path)),
            "postgresql": (POSTGRESQL_URL, POSTGRESQL_URL),
        }
        try:
            for database in databases:
                url, location = places[database]
                runs = measure(database, url, location, options.rounds, options.main_only)
                report(database, runs)
        finally:
            drop_tables(databases)


def load_all(duckdb_path: Path, databases: list[str]) -> None:
    """The data in DuckDB and MySQL (through a CSV file), and in PostgreSQL if asked."""
    load(duckdb_path, MYSQL_URL)
    if "postgresql" in databases:
        from sqlml.datasources import connect

        source = connect(POSTGRESQL_URL)
        source.execute(f"DROP TABLE IF EXISTS {TABLE}")
        source.write_table([TABLE], generate())
        source.close()


def drop_tables(databases: list[str]) -> None:
    with mysql_connection(MYSQL_URL) as mysql, mysql.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
    if "postgresql" in databases:
        from sqlml.datasources import connect

        source = connect(POSTGRESQL_URL)
        source.execute(f"DROP TABLE IF EXISTS {TABLE}")
        source.close()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--load"]:
        load_all(Path(sys.argv[2]), sys.argv[3:])
    else:
        main()
