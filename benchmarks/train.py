"""XGBoost TO TRAIN end to end against a hand-written script, on MySQL and DuckDB.

Data, generated here (seeded): 1,000,000 rows of 10 DOUBLE columns and a 0/1 label that
depends on them, in a MySQL table (LOAD DATA LOCAL INFILE: the server must allow
local_infile) and a DuckDB file. Both sides train the same booster (binary:logistic,
``PARAMS``, ``ROUNDS`` rounds, every row) and keep the model:

- sqlml: ``sqlml -e "SELECT * FROM ... TO TRAIN xgboost.gbtree WITH ... INTO m;"``, the
  command a user runs: parse, check, read, derive features, train, store the model in the
  database. With ``validation.split = 0`` it trains on every row like the script; the
  default (20% held out, validation metrics stored) is measured too, for reference;
- hand-written: ``python train.py --hand-written``: what a user would write: read the table
  (MySQL: pymysql's streaming SSCursor, ``fetchmany`` batches made numpy arrays; DuckDB:
  ``fetchnumpy``), ``xgboost.train`` on a DMatrix, the model saved to a file.

Each is a fresh process, timed from start to exit: wall time and CPU time (best of REPEATS,
the three commands taking turns); the input cache is off.
Target: sqlml <= 1.15x the script's time. ``python benchmarks/train.py`` uses
``$SQLML_TEST_MYSQL`` or mysql://root@127.0.0.1:3306/test; prints a table; leaves nothing
behind (the table and the models are dropped, the DuckDB file deleted).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROWS = 1_000_000
FEATURES = 10
ROUNDS = 50
REPEATS = 3
TABLE = "sqlml_train_bench"
MODEL = "sqlml_train_bench_model"
MYSQL_URL = os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test")
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
    "verbosity": 0,
}


def generate() -> dict[str, Any]:
    """Standard normal features; the label is 1 where a noisy linear score is positive."""
    import numpy as np

    rng = np.random.default_rng(20261123)
    columns = {f"x{i}": rng.standard_normal(ROWS) for i in range(FEATURES)}
    score = sum(columns[f"x{i}"] * (i - 4.5) / 4 for i in range(FEATURES))
    columns["label"] = (score + rng.standard_normal(ROWS) > 0).astype(np.int64)
    return columns


def mysql_connection(url: str, **options: Any):
    import pymysql

    from sqlml.runtime.datasource import parse_url

    parsed = parse_url(url)
    return pymysql.connect(
        host=parsed.host,
        port=parsed.port or 3306,
        user=parsed.user or None,
        password=parsed.password,
        database=parsed.path,
        autocommit=True,
        **options,
    )


def load(duckdb_path: Path, mysql_url: str) -> None:
    """Write the data to a DuckDB file, then through a CSV file to MySQL."""
    import duckdb

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


def hand_written(database: str, location: str) -> None:
    """The script a user would write: read into numpy, train, save the model to a file."""
    import numpy as np
    import xgboost as xgb

    select = f"SELECT * FROM {TABLE}"
    if database == "duckdb":
        import duckdb

        data = duckdb.connect(location, read_only=True).execute(select).fetchnumpy()
        columns = {name: np.asarray(values) for name, values in data.items()}
    else:
        import pymysql

        con = mysql_connection(location)
        cursor = con.cursor(pymysql.cursors.SSCursor)
        cursor.execute(select)
        names = [d[0] for d in cursor.description]
        chunks: list[list[np.ndarray]] = [[] for _ in names]
        while rows := cursor.fetchmany(10_000):
            for chunk, values in zip(chunks, zip(*rows, strict=True), strict=True):
                chunk.append(np.array(values))
        columns = {name: np.concatenate(chunk) for name, chunk in zip(names, chunks, strict=True)}
    label = columns.pop("label")
    x = np.column_stack(list(columns.values()))
    booster = xgb.train(PARAMS, xgb.DMatrix(x, label=label), num_boost_round=ROUNDS)
    with tempfile.TemporaryDirectory() as folder:
        booster.save_model(Path(folder) / "model.ubj")


def timed(commands: dict[str, list[str]]) -> dict[str, tuple[float, float, float]]:
    """Each command's best wall time, best CPU time (user + system) and largest peak RSS (MiB)
    of REPEATS runs, each a fresh process. The commands take turns, so that a busy machine
    slows them alike."""
    env = {**os.environ, "SQLML_CACHE": "off"}
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for _ in range(REPEATS):
        for name, command in commands.items():
            start = time.perf_counter()
            process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - start
            if os.waitstatus_to_exitcode(status):
                raise SystemExit(f"{name} failed")
            runs[name].append((wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
    return {
        name: (min(r[0] for r in times), min(r[1] for r in times), max(r[2] for r in times))
        for name, times in runs.items()
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        duckdb_path = Path(folder) / "train.duckdb"
        start = time.perf_counter()
        # In a child: the children timed later would otherwise start with this process's
        # peak RSS (the generated data) as theirs.
        subprocess.run([sys.executable, __file__, "--load", str(duckdb_path)], check=True)
        print(f"{ROWS:,} rows x {FEATURES} DOUBLE + 0/1 label, loaded in "
              f"{time.perf_counter() - start:.1f} s")  # fmt: skip
        results: dict[tuple[str, str], tuple[float, float, float]] = {}
        try:
            for database, url, location in (
                ("mysql", MYSQL_URL, MYSQL_URL),
                ("duckdb", f"duckdb:///{duckdb_path}", str(duckdb_path)),
            ):
                sqlml = [sys.executable, "-m", "sqlml", "--datasource", url, "-e"]
                commands = {
                    "hand-written": [
                        sys.executable,
                        __file__,
                        "--hand-written",
                        database,
                        location,
                    ],
                    "sqlml, validation.split = 0": [*sqlml, statement(0)],
                    "sqlml, default": [*sqlml, statement(None)],
                    "sqlml, train.external_memory": [*sqlml, statement(0, external=True)],
                }
                for name, seconds in timed(commands).items():
                    results[database, name] = seconds
                drop = ["-e", f"DROP MODEL {MODEL};", "--datasource", url]
                subprocess.run([sys.executable, "-m", "sqlml", *drop], check=True)
        finally:
            with mysql_connection(MYSQL_URL) as mysql, mysql.cursor() as cursor:
                cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
    print(f"binary:logistic, {ROUNDS} rounds, hist; best of {REPEATS} runs, each a fresh process")
    print("CPU time: user + system seconds of the process, less sensitive to a busy machine\n")
    print("| database | run | wall time | / hand-written | CPU time | / hand-written | peak RSS |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for (database, name), (wall, cpu, peak) in results.items():
        hand_wall, hand_cpu, _ = results[database, "hand-written"]
        print(
            f"| {database} | {name} | {wall:.2f} s | {wall / hand_wall:.2f}x "
            f"| {cpu:.2f} s | {cpu / hand_cpu:.2f}x | {peak:,.0f} MiB |"
        )
    print()
    for database in ("mysql", "duckdb"):
        ratios = [
            results[database, "sqlml, validation.split = 0"][i]
            / results[database, "hand-written"][i]
            for i in (0, 1)
        ]
        verdict = "met" if max(ratios) <= 1.15 else "NOT met"
        print(
            f"{database}: sqlml = {ratios[0]:.2f}x the script's wall time, {ratios[1]:.2f}x its "
            f"CPU time (target <= 1.15x): {verdict}"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--hand-written"]:
        hand_written(*sys.argv[2:4])
    elif sys.argv[1:2] == ["--load"]:
        load(Path(sys.argv[2]), MYSQL_URL)
    else:
        main()
