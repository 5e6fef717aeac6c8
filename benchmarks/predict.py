"""TO PREDICT of 1,000,000 rows into MySQL against LOAD DATA LOCAL INFILE of the same rows.

Data: train.py's table (1,000,000 rows of 10 DOUBLE columns and a 0/1 BIGINT label,
seeded) in MySQL, and an XGBoost model trained on it by sqlml (20 rounds). Both sides write
a table of 1,000,000 rows x 10 DOUBLE + 1 BIGINT column into the same server:

- sqlml: ``sqlml -e "SELECT * FROM ... TO PREDICT t.label USING m;"``, the whole command a
  user runs: parse, check, load the model from the database, read the rows, predict, write
  the result table through a staging table swapped in atomically;
- baseline (benchmarks/baselines/load_data.py, in a lean environment holding pymysql alone:
  benchmarks/lean.py): pymysql's ``LOAD DATA LOCAL INFILE`` of a CSV file holding the same
  table (the features and the label, written by DuckDB), into a new table: the server's
  fastest bulk load, with nothing read and nothing computed.

Each is a fresh process, timed from start to exit (``--rounds``, taking turns: best and
median, with the load average), with its CPU time and peak RSS. Target: sqlml's throughput
>= 0.5x the baseline's. Every run's table is checked (1,000,000 rows; the predictions are 0
or 1 and agree with the label on most rows). ``python benchmarks/predict.py [--rounds 3]``
uses ``$SQLML_TEST_MYSQL`` or mysql://root@127.0.0.1:3306/test (the server must allow
local_infile); leaves nothing behind.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lean
from rounds import taking_turns
from train import MYSQL_URL, REPEATS, ROWS, TABLE, mysql_connection

MODEL = "sqlml_predict_bench_model"
RESULT = "sqlml_predict_bench"  # written by TO PREDICT
LOADED = "sqlml_predict_bench_load"  # written by LOAD DATA
ROUNDS = 20
DEFINITION = ", ".join([f"x{i} DOUBLE" for i in range(10)] + ["label BIGINT"])


def export_csv(duckdb_path: Path, csv: Path) -> None:
    """The table as CSV (shortest exact decimals), for the baseline to load."""
    import duckdb

    con = duckdb.connect(str(duckdb_path), read_only=True)
    con.execute(f"COPY {TABLE} TO '{csv}' (HEADER false)")
    con.close()


def check(table: str) -> None:
    """``table`` holds every row, with 0/1 labels (the predictions mostly right)."""
    with mysql_connection(MYSQL_URL) as mysql, mysql.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*), SUM(label IN (0, 1)) FROM {table}")
        rows, binary = cursor.fetchone()
        cursor.execute(f"SELECT AVG(label) FROM {TABLE}")
        (positives,) = cursor.fetchone()
        cursor.execute(f"SELECT AVG(label) FROM {table}")
        (predicted,) = cursor.fetchone()
    if rows != ROWS or binary != ROWS or abs(float(predicted) - float(positives)) > 0.05:
        raise SystemExit(f"{table}: {rows} rows, {binary} 0/1 labels, mean {predicted}")


def sqlml(*args: str) -> list[str]:
    return [sys.executable, "-m", "sqlml", "--datasource", MYSQL_URL, *args]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=REPEATS)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        duckdb_path, csv = Path(folder) / "train.duckdb", Path(folder) / "rows.csv"
        start = time.perf_counter()
        train_py = str(Path(__file__).with_name("train.py"))
        subprocess.run([sys.executable, train_py, "--load", str(duckdb_path)], check=True)
        subprocess.run([sys.executable, __file__, "--csv", str(duckdb_path), str(csv)], check=True)
        train = (
            f"SELECT * FROM {TABLE} TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
            f"train.num_boost_round = {ROUNDS}, validation.split = 0 LABEL label INTO {MODEL};"
        )
        subprocess.run([*sqlml("-e", train)], check=True, stderr=subprocess.DEVNULL)
        print(f"{ROWS:,} rows x 10 DOUBLE + a BIGINT label loaded, model trained in "
              f"{time.perf_counter() - start:.1f} s")  # fmt: skip
        predict = f"SELECT * FROM {TABLE} TO PREDICT {RESULT}.label USING {MODEL};"
        baseline = lean.command(
            ["pymysql"], "load_data.py", MYSQL_URL, LOADED, DEFINITION, str(csv)
        )
        commands = {
            "LOAD DATA LOCAL INFILE (baseline)": baseline,
            "sqlml TO PREDICT": sqlml("-e", predict),
        }
        try:
            runs = taking_turns(
                {name: lambda c=command: lean.run(c) for name, command in commands.items()},
                options.rounds,
                required=commands,
            )
            check(LOADED)
            check(RESULT)
        finally:
            subprocess.run(sqlml("-e", f"DROP MODEL IF EXISTS {MODEL};"), check=True)
            with mysql_connection(MYSQL_URL) as mysql, mysql.cursor() as cursor:
                for table in (TABLE, RESULT, LOADED):
                    cursor.execute(f"DROP TABLE IF EXISTS {table}")
    print(f"{options.rounds} rounds, taking turns, each run a fresh process timed from start "
          f"to exit; {runs.load()}\n")  # fmt: skip
    print("| run | wall best | wall median | rows/s (best) | throughput / baseline (best, median) "
          "| CPU best | peak RSS |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    base = "LOAD DATA LOCAL INFILE (baseline)"
    for name in runs.names():
        cpu, peak = runs.best(name, "cpu"), runs.largest(name, "peak")
        print(f"| {name} | {runs.best(name):.2f} s | {runs.median(name):.2f} s "
              f"| {ROWS / runs.best(name):,.0f} | {runs.ratios(base, name)} "
              f"| {cpu:.2f} s | {peak:,.0f} MiB |")  # fmt: skip
    ratio = runs.best(base) / runs.best("sqlml TO PREDICT")
    print(f"\nsqlml's throughput = {ratio:.2f}x LOAD DATA's on best times (target >= 0.5x): "
          f"{'met' if ratio >= 0.5 else 'NOT met'}")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["--csv"]:
        export_csv(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main()
