"""A small TO TRAIN and TO PREDICT (418 rows, XGBoost) as whole commands against lean scripts
doing the same, on DuckDB, MySQL and PostgreSQL: CPU time (user + system) and wall time.

Data, generated here (seeded): titanic-like rows: ``ROWS`` rows of pclass, sex, age, sibsp,
parch, fare and embarked (DOUBLE) and a 0/1 BIGINT ``survived`` that depends on them, in a
training table and a test table of the same size. Contenders, each a fresh process timed
from start to exit (wall, and the child's user + system CPU from ``os.wait4``):

- sqlml TO TRAIN: ``sqlml -e "SELECT * FROM t TO TRAIN xgboost.gbtree WITH ... LABEL survived
  INTO m;"`` (``PARAMS``, ``ROUNDS`` rounds, every row: ``validation.split = 0``): parse,
  check, read, train, store the model in the database;
- script train (benchmarks/baselines/small.py, in a lean environment: the database's
  driver, numpy and xgboost at this environment's versions: benchmarks/lean.py): read the
  rows, ``xgboost.train`` with the same parameters, the model written into a table;
- sqlml TO PREDICT: ``sqlml -e "SELECT * FROM test TO PREDICT out.survived USING m;"``;
- script predict: the model read from its table, the rows read, ``booster.predict``, a new
  table of the features and the predicted class written with ``executemany``.

Both sides run with ``OMP_WAIT_POLICY=PASSIVE``, the input cache off; the contenders take
turns (benchmarks/rounds.py), best and median per contender with the load average. Goal:
sqlml's CPU time <= 1.3x the script's. ``python benchmarks/small.py [--databases
duckdb,mysql,postgresql] [--rounds 7]`` uses ``$SQLML_TEST_MYSQL`` and
``$SQLML_TEST_POSTGRESQL``; leaves nothing behind.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import lean
import numpy as np
from rounds import Runs, taking_turns

from sqlml.datasources import Columns, connect

ROWS = 418
ROUNDS = 50
TRAIN, TEST = "sqlml_small_train", "sqlml_small_test"
MODEL, RESULT = "sqlml_small_model", "sqlml_small_out"  # sqlml's
SCRIPT_MODEL, SCRIPT_RESULT = "sqlml_small_script_model", "sqlml_small_script_out"  # the script's
LABEL = "survived"
URLS = {
    "mysql": os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test"),
    "postgresql": os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test"),
}
DRIVER = {"duckdb": "duckdb", "mysql": "pymysql", "postgresql": "psycopg"}
# XGBoost's parameters on both sides: sqlml's defaults for xgboost.gbtree, stated in full.
PARAMS = {
    "objective": "binary:logistic",
    "eta": 0.3,
    "max_depth": 6,
    "min_child_weight": 1.0,
    "subsample": 1.0,
    "lambda": 1.0,
    "alpha": 0.0,
    "tree_method": "hist",
    "seed": 0,
}


def generate(seed: int) -> Columns:
    """Titanic-like passengers: the label is 1 where a noisy score of sex, class, age and fare
    is positive."""
    rng = np.random.default_rng(seed)
    pclass = rng.choice([1.0, 2.0, 3.0], ROWS, p=[0.25, 0.2, 0.55])
    sex = rng.integers(0, 2, ROWS).astype(np.float64)
    age = np.round(rng.uniform(1, 75, ROWS))
    fare = np.round(rng.gamma(2.0, 15.0, ROWS) * (4 - pclass), 2)
    score = 2.2 * sex - 0.9 * (pclass - 2) - 0.02 * (age - 30) + 0.005 * fare
    return {
        "pclass": pclass,
        "sex": sex,
        "age": age,
        "sibsp": rng.integers(0, 4, ROWS).astype(np.float64),
        "parch": rng.integers(0, 3, ROWS).astype(np.float64),
        "fare": fare,
        "embarked": rng.integers(0, 3, ROWS).astype(np.float64),
        LABEL: (score + rng.logistic(scale=0.5, size=ROWS) > 0.8).astype(np.int64),
    }


def setup(url: str) -> None:
    """The training and test tables."""
    source = connect(url)
    try:
        for table, seed in ((TRAIN, 1912), (TEST, 1514)):
            source.execute(f"DROP TABLE IF EXISTS {table}")
            source.write_table([table], generate(seed))
    finally:
        source.close()


def training() -> str:
    attributes = [f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}" for k, v in PARAMS.items()]
    attributes += [f"train.num_boost_round = {ROUNDS}", "validation.split = 0"]
    return (
        f"SELECT * FROM {TRAIN} TO TRAIN xgboost.gbtree WITH {', '.join(attributes)} "
        f"LABEL {LABEL} INTO {MODEL};"
    )


def contenders(database: str, url: str, location: str) -> dict[str, list[str]]:
    """Each contender's command; the lean environment made now, before any timing."""
    sqlml = [sys.executable, "-m", "sqlml", "--datasource", url, "-e"]
    modules = [DRIVER[database], "numpy", "xgboost"]
    common = [database, location]
    return {
        "sqlml TO TRAIN": [*sqlml, training()],
        "script train": lean.command(
            modules,
            "small.py",
            "train",
            *common,
            TRAIN,
            LABEL,
            SCRIPT_MODEL,
            json.dumps(PARAMS),
            str(ROUNDS),
        ),
        "sqlml TO PREDICT": [
            *sqlml,
            f"SELECT * FROM {TEST} TO PREDICT {RESULT}.{LABEL} USING {MODEL};",
        ],
        "script predict": lean.command(
            modules, "small.py", "predict", *common, TEST, LABEL, SCRIPT_MODEL, SCRIPT_RESULT
        ),
    }


def check(url: str) -> None:
    """Both sides' predictions: every row, 0/1, mostly the test label (the rows in the order
    written)."""
    source = connect(url)
    try:
        truth = source.read(f"SELECT {LABEL} FROM {TEST}")[LABEL]
        for table in (RESULT, SCRIPT_RESULT):
            found = source.read(f"SELECT {LABEL} FROM {table}")[LABEL]
            agree = float(np.mean(found == truth)) if len(found) == ROWS else 0.0
            if len(found) != ROWS or not set(np.unique(found)) <= {0, 1} or agree < 0.7:
                raise SystemExit(f"{table}: {len(found)} rows, classes {np.unique(found)}")
    finally:
        source.close()


def cleanup(url: str) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sqlml",
            "--datasource",
            url,
            "-e",
            f"DROP MODEL IF EXISTS {MODEL};",
        ],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    source = connect(url)
    try:
        for table in (TRAIN, TEST, RESULT, SCRIPT_MODEL, SCRIPT_RESULT):
            source.execute(f"DROP TABLE IF EXISTS {table}")
    finally:
        source.close()


def measure(database: str, url: str, location: str, rounds: int) -> Runs:
    setup(url)
    try:
        commands = contenders(database, url, location)
        # once each before timing: the model the predictions use, and warm file caches
        for command in commands.values():
            lean.run(command)
        runs = taking_turns(
            {name: lambda c=command: lean.run(c) for name, command in commands.items()},
            rounds,
            required=commands,
        )
        check(url)
    finally:
        cleanup(url)
    return runs


def report(database: str, runs: Runs) -> None:
    rounds = len(runs.runs["sqlml TO TRAIN"])
    print(f"\n{database}: {ROWS} rows, {rounds} rounds taking turns; {runs.load()}\n")
    print("| run | CPU best | CPU median | wall best | wall median | sqlml / script: CPU (best, "
          "median) | wall (best, median) |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind in ("train", "predict"):
        sqlml, script = f"sqlml TO {kind.upper()}", f"script {kind}"
        for name in (script, sqlml):
            cpu = (
                f"{runs.best(name, 'cpu') / runs.best(script, 'cpu'):.2f}x, "
                f"{runs.median(name, 'cpu') / runs.median(script, 'cpu'):.2f}x"
            )
            print(f"| {name} | {runs.best(name, 'cpu'):.3f} s | {runs.median(name, 'cpu'):.3f} s "
                  f"| {runs.best(name):.3f} s | {runs.median(name):.3f} s | {cpu} "
                  f"| {runs.ratios(name, script)} |")  # fmt: skip
        ratio = runs.median(sqlml, "cpu") / runs.median(script, "cpu")
        print(f"\n{database} {kind}: sqlml's CPU = {ratio:.2f}x the script's on medians "
              f"(goal <= 1.3x): {'met' if ratio <= 1.3 else 'NOT met'}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="duckdb,mysql,postgresql")
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "small.duckdb")
        for database in options.databases.split(","):
            url = URLS.get(database) or f"duckdb:///{path}"
            location = URLS.get(database) or path
            report(database, measure(database, url, location, options.rounds))


if __name__ == "__main__":
    main()
