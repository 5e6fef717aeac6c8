"""TO PREDICT on DuckDB at 1,000,000 and 4,000,000 rows against a lean script doing the same
(issue 37: within 1.1x of it).

Data: train.py's rows (``--rows`` x 10 DOUBLE and a 0/1 BIGINT label, seeded) in a DuckDB
file, and an XGBoost model trained on them by sqlml (20 rounds), also exported to a file for
the script. Each contender reads the table, predicts each row's class and writes a new table
of the 10 features and the predicted label (BIGINT); each is a fresh process, timed from
start to exit:

- sqlml: ``sqlml -e "SELECT * FROM t TO PREDICT out.label USING m;"``, the whole command a
  user runs: parse, check, load the model from the database, read, predict, write through a
  staging table swapped in;
- script (benchmarks/baselines/predict_duckdb.py, in a lean environment of duckdb, numpy and
  xgboost at this environment's versions: benchmarks/lean.py): ``fetchnumpy``,
  ``inplace_predict``, one ``CREATE TABLE AS`` from the numpy columns.

Both sides run with ``OMP_WAIT_POLICY=PASSIVE``, the input cache off; contenders take turns
(benchmarks/rounds.py); best and median wall and CPU time (user + system) with the load
average. Every run's table is checked against the model's predictions, row by row.
``python benchmarks/predict_duckdb.py [--rows 1000000,4000000] [--rounds 5]``; leaves
nothing behind.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import lean
import numpy as np
from rounds import Runs, taking_turns

FEATURES = 10
ROUNDS = 20  # the model's boosting rounds
NAMES = [f"x{i}" for i in range(FEATURES)] + ["label"]
MODULES = ["duckdb", "numpy", "xgboost"]


def generate(rows: int) -> dict[str, np.ndarray]:
    """train.py's data at ``rows`` rows."""
    rng = np.random.default_rng(20261123)
    columns = {f"x{i}": rng.standard_normal(rows) for i in range(FEATURES)}
    score = sum(columns[f"x{i}"] * (i - 4.5) / 4 for i in range(FEATURES))
    columns["label"] = (score + rng.standard_normal(rows) > 0).astype(np.int64)
    return columns


def sqlml(path: str, statement: str) -> list[str]:
    return [sys.executable, "-m", "sqlml", "--datasource", f"duckdb:///{path}", "-e", statement]


def setup(path: str, rows: int, model_file: str) -> None:
    """The table, the model trained by sqlml, and the model exported to ``model_file``."""
    import duckdb

    from sqlml.datasources import connect
    from sqlml.models.export import export_model

    con = duckdb.connect(path)
    con.register("data", generate(rows))
    con.execute("CREATE TABLE t AS SELECT * FROM data")
    con.close()
    train = (
        "SELECT * FROM t TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        f"train.num_boost_round = {ROUNDS}, validation.split = 0 LABEL label INTO m;"
    )
    subprocess.run(sqlml(path, train), check=True, stderr=subprocess.DEVNULL)
    source = connect(f"duckdb:///{path}")
    try:
        export_model(source, "m", Path(model_file))
    finally:
        source.close()


def check(path: str, model_file: str, result: str) -> None:
    """``result`` holds the data's features and the model's class of every row, in order."""
    import duckdb
    import xgboost as xgb

    con = duckdb.connect(path, read_only=True)
    try:
        found = con.sql(f"SELECT * FROM {result}").fetchnumpy()
        data = con.sql("SELECT * FROM t").fetchnumpy()
    finally:
        con.close()
    x = np.column_stack([data[name] for name in NAMES[:-1]])
    expected = (xgb.Booster(model_file=model_file).inplace_predict(x) > 0.5).astype(np.int64)
    assert list(found) == NAMES, list(found)
    for name in NAMES[:-1]:
        assert np.array_equal(found[name], data[name]), name
    assert found["label"].dtype == np.int64 and np.array_equal(found["label"], expected)


def measure(rows: int, rounds: int) -> Runs:
    with tempfile.TemporaryDirectory() as folder:
        path, model_file = str(Path(folder) / "p.duckdb"), str(Path(folder) / "model.ubj")
        # in a child: the runs timed later would otherwise share this process's memory
        subprocess.run([sys.executable, __file__, "--setup", path, str(rows), model_file],
                       check=True)  # fmt: skip
        predict = "SELECT * FROM t TO PREDICT out_sqlml.label WITH output.replace = true USING m;"
        commands = {
            "sqlml TO PREDICT": sqlml(path, predict),
            "script": lean.command(
                MODULES, "predict_duckdb.py", path, "t", "out_script", model_file, str(FEATURES)
            ),
        }
        for command in commands.values():  # once each before timing: warm file caches
            lean.run(command)
        runs = taking_turns(
            {name: lambda c=command: lean.run(c) for name, command in commands.items()},
            rounds,
            required=commands,
        )
        check(path, model_file, "out_sqlml")
        check(path, model_file, "out_script")
    return runs


def report(rows: int, runs: Runs) -> None:
    sqlml_name, script = "sqlml TO PREDICT", "script"
    print(f"\n{rows:,} rows, {len(runs.runs[script])} rounds taking turns; {runs.load()}\n")
    print("| run | wall best | wall median | CPU best | CPU median |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in (script, sqlml_name):
        print(f"| {name} | {runs.best(name):.2f} s | {runs.median(name):.2f} s "
              f"| {runs.best(name, 'cpu'):.2f} s | {runs.median(name, 'cpu'):.2f} s |")  # fmt: skip
    cpu = runs.median(sqlml_name, "cpu") / runs.median(script, "cpu")
    verdict = "met" if runs.best(sqlml_name) <= 1.1 * runs.best(script) else "NOT met"
    print(f"\nsqlml / script: wall {runs.ratios(sqlml_name, script)} (best, median), CPU "
          f"{cpu:.2f}x on medians; target wall <= 1.1x (best): {verdict}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,4000000")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    for rows in (int(n) for n in options.rows.split(",")):
        report(rows, measure(rows, options.rounds))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--setup"]:
        setup(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        main()
