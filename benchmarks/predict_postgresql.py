"""TO PREDICT of 1,000,000 rows into PostgreSQL against hand-written scripts doing the same.

Data: train.py's rows (1,000,000 x 10 DOUBLE and a 0/1 BIGINT label, seeded) in a PostgreSQL
table, and an XGBoost model trained on them by sqlml (20 rounds), also exported to a file for
the scripts. Every contender reads the table, predicts each row's class and writes a new
table of the 10 features and the predicted label (BIGINT); each is a fresh process, timed
from start to exit:

- sqlml: ``sqlml -e "SELECT * FROM ... TO PREDICT t.label USING m;"``, the whole command a
  user runs: parse, check, load the model from the database, read, predict, write through
  a staging table swapped in atomically;
- script, COPY BINARY both ways: psycopg's ``COPY (SELECT ...) TO STDOUT (FORMAT BINARY)``
  received with ``Copy``'s iterator and viewed as numpy records, ``booster.predict``, and the
  result built as numpy records (field count, then each field's length and big-endian value)
  written with one ``COPY ... FROM STDIN (FORMAT BINARY)`` into a table created in the same
  transaction (the old one dropped);
- script, ADBC read: the same, the rows read by ADBC (adbc-driver-postgresql, Arrow to
  numpy).

Each script (benchmarks/baselines/predict_postgresql.py) runs in a lean environment holding
only what it imports, at sqlml's environment's versions (benchmarks/lean.py); both sides
with ``OMP_WAIT_POLICY=PASSIVE``, the input cache off.

Contenders take turns (A B C, C B A, ...); best and median wall time over ``--rounds``, with
the load average (1 min) read before each run, CPU time and peak RSS. Every run's table is
checked against the data and the model's predictions (every row, in order). Target: sqlml
<= 1.1x the best script's time. ``python benchmarks/predict_postgresql.py [--rounds 5]``
uses ``$SQLML_TEST_POSTGRESQL`` (postgresql://root@127.0.0.1:5432/test); leaves nothing
behind.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lean
import numpy as np
from train import FEATURES, ROWS, generate

URL = os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test")
TABLE = "sqlml_predict_pg_bench"
MODEL = "sqlml_predict_pg_bench_model"
RESULT = "sqlml_predict_pg_bench_out"  # every contender writes it, in turn
ROUNDS = 20
NAMES = [f"x{i}" for i in range(FEATURES)] + ["label"]
# What each script imports, for its lean environment.
MODULES = {
    "copy": ["psycopg", "numpy", "xgboost"],
    "adbc": ["psycopg", "adbc_driver_postgresql", "pyarrow", "numpy", "xgboost"],
}


def setup(model_file: str) -> None:
    """The table, the model trained by sqlml, and the model exported to ``model_file``."""
    from sqlml.datasources import connect
    from sqlml.models.export import export_model

    source = connect(URL)
    try:
        source.execute(f"DROP TABLE IF EXISTS {TABLE}")
        source.write_table([TABLE], generate())
    finally:
        source.close()
    train = (
        f"SELECT * FROM {TABLE} TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        f"train.num_boost_round = {ROUNDS}, validation.split = 0 LABEL label INTO {MODEL};"
    )
    subprocess.run([*sqlml_command(), train], check=True, stderr=subprocess.DEVNULL)
    source = connect(URL)
    try:
        export_model(source, MODEL, Path(model_file))
    finally:
        source.close()


def check(model_file: str) -> None:
    """The result table holds the data's features and the model's class of every row."""
    import xgboost as xgb

    from sqlml.datasources import connect

    expected = generate()
    x = np.column_stack([expected[name] for name in NAMES[:-1]])
    expected["label"] = (xgb.Booster(model_file=model_file).predict(xgb.DMatrix(x)) > 0.5).astype(
        np.int64
    )
    source = connect(URL)
    try:
        found = source.read(f"SELECT * FROM {RESULT}")
    finally:
        source.close()
    assert list(found) == NAMES, list(found)
    for name in NAMES:
        assert found[name].dtype == expected[name].dtype, (name, found[name].dtype)
        assert np.array_equal(found[name], expected[name]), name


def sqlml_command() -> list[str]:
    return [sys.executable, "-m", "sqlml", "--datasource", URL, "-e"]


def run(name: str, command: list[str], model_file: str) -> dict[str, float]:
    """One run of ``command`` in a fresh process, checked; wall and CPU seconds, peak MiB."""
    load = os.getloadavg()[0]
    figures = lean.run(command)
    subprocess.run([sys.executable, __file__, "--check", model_file], check=True)
    return {"wall": figures["seconds"], "cpu": figures["cpu"], "peak": figures["peak"],
            "load": load}  # fmt: skip


def script(reader: str, args: list[str]) -> list[str]:
    """The baseline reading with ``reader``, in its lean environment."""
    return lean.command(MODULES[reader], "predict_postgresql.py", reader, *args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        model_file = str(Path(folder) / "model.ubj")
        start = time.perf_counter()
        # in a child: the runs timed later would otherwise start with this process's peak
        subprocess.run([sys.executable, __file__, "--setup", model_file], check=True)
        print(f"{ROWS:,} rows x {FEATURES} DOUBLE + a 0/1 label loaded, model trained in "
              f"{time.perf_counter() - start:.1f} s")  # fmt: skip
        predict = (
            f"SELECT * FROM {TABLE} TO PREDICT {RESULT}.label WITH output.replace = true "
            f"USING {MODEL};"
        )
        args = [URL, TABLE, RESULT, model_file, str(FEATURES)]
        commands = {
            "sqlml TO PREDICT": [*sqlml_command(), predict],
            "script, COPY BINARY both ways": script("copy", args),
            "script, ADBC read": script("adbc", args),
        }
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
        try:
            for round_number in range(options.rounds):
                names = list(commands) if round_number % 2 == 0 else list(commands)[::-1]
                for name in names:
                    runs[name].append(run(name, commands[name], model_file))
        finally:
            subprocess.run([*sqlml_command(), f"DROP MODEL IF EXISTS {MODEL};"], check=True)
            subprocess.run(
                [*sqlml_command(), f"DROP TABLE IF EXISTS {TABLE}; DROP TABLE IF EXISTS {RESULT};"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
    report(runs)


def report(runs: dict[str, list[dict[str, float]]]) -> None:
    best = {name: min(r["wall"] for r in each) for name, each in runs.items()}
    median = {name: statistics.median(r["wall"] for r in each) for name, each in runs.items()}
    loads = [r["load"] for each in runs.values() for r in each]
    rounds = len(runs["sqlml TO PREDICT"])
    print(f"\n{rounds} rounds, taking turns; load average (1 min) {min(loads):.1f} to "
          f"{max(loads):.1f}, median {statistics.median(loads):.1f}\n")  # fmt: skip
    print("| run | best | median | sqlml / this (best, median) | CPU time (best) | peak RSS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, each in runs.items():
        cells = [
            f"{best[name]:.2f} s",
            f"{median[name]:.2f} s",
            f"{best['sqlml TO PREDICT'] / best[name]:.2f}x, "
            f"{median['sqlml TO PREDICT'] / median[name]:.2f}x",
            f"{min(r['cpu'] for r in each):.2f} s",
            f"{max(r['peak'] for r in each):,.0f} MiB",
        ]
        print(f"| {name} | {' | '.join(cells)} |")
    scripts = [name for name in runs if name.startswith("script")]
    top = min(scripts, key=best.get)
    ratio = best["sqlml TO PREDICT"] / best[top]
    median_ratio = median["sqlml TO PREDICT"] / min(median[n] for n in scripts)
    print(f"\nsqlml = {ratio:.2f}x the best script's time ({top}), {median_ratio:.2f}x on "
          f"medians (target <= 1.1x): {'met' if ratio <= 1.1 else 'NOT met'}")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["--setup"]:
        setup(sys.argv[2])
    elif sys.argv[1:2] == ["--check"]:
        check(sys.argv[2])
    else:
        main()
