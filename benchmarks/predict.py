"""TO PREDICT of 1,000,000 rows into MySQL against LOAD DATA LOCAL INFILE of the same rows.

Data: train.py's table (1,000,000 rows of 10 DOUBLE columns and a 0/1 BIGINT label,
seeded) in MySQL, and an XGBoost model trained on it by sqlml (20 rounds). Both sides write
a table of 1,000,000 rows x 10 DOUBLE + 1 BIGINT column into the same server:

- sqlml: ``sqlml -e "SELECT * FROM ... TO PREDICT t.label USING m;"``, the whole command a
  user runs: parse, check, load the model from the database, read the rows, predict, write
  the result table through a staging table swapped in atomically;
- baseline: ``python predict.py --load-data CSV``: pymysql's ``LOAD DATA LOCAL INFILE`` of a
  CSV file holding the same table (the features and the label, written by DuckDB), into a
  new table: the server's fastest bulk load, with nothing read and nothing computed.

Each is a fresh process, timed from start to exit (best of REPEATS, taking turns), with its
CPU time and peak RSS. Target: sqlml's throughput >= 0.5x the baseline's. Every run's table
is checked (1,000,000 rows; the predictions are 0 or 1 and agree with the label on most
rows). ``python benchmarks/predict.py`` uses ``$SQLML_TEST_MYSQL`` or
mysql://root@127.0.0.1:3306/test (the server must allow local_infile); leaves nothing behind.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from train import MYSQL_URL, REPEATS, ROWS, TABLE, mysql_connection, timed

MODEL = "sqlml_predict_bench_model"
RESULT = "sqlml_predict_bench"  # written by TO PREDICT
LOADED = "sqlml_predict_bench_load"  # written by LOAD DATA
ROUNDS = 20


def export_csv(duckdb_path: Path, csv: Path) -> None:
    """The table as CSV (shortest exact decimals), for the baseline to load."""
    import duckdb

    con = duckdb.connect(str(duckdb_path), read_only=True)
    con.execute(f"COPY {TABLE} TO '{csv}' (HEADER false)")
    con.close()


def load_data(csv: str) -> None:
    """The baseline: a new table of the CSV's rows, by LOAD DATA LOCAL INFILE."""
    definition = ", ".join([f"x{i} DOUBLE" for i in range(10)] + ["label BIGINT"])
    with mysql_connection(MYSQL_URL, local_infile=True) as mysql, mysql.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {LOADED}")
        cursor.execute(f"CREATE TABLE {LOADED} ({definition})")
        cursor.execute(
            f"LOAD DATA LOCAL INFILE '{csv}' INTO TABLE {LOADED} FIELDS TERMINATED BY ','"
        )


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
        baseline = [sys.executable, __file__, "--load-data", str(csv)]
        commands = {
            "LOAD DATA LOCAL INFILE (baseline)": baseline,
            "sqlml TO PREDICT": sqlml("-e", predict),
        }
        try:
            results = timed(commands)
            check(LOADED)
            check(RESULT)
        finally:
            subprocess.run(sqlml("-e", f"DROP MODEL IF EXISTS {MODEL};"), check=True)
            with mysql_connection(MYSQL_URL) as mysql, mysql.cursor() as cursor:
                for table in (TABLE, RESULT, LOADED):
                    cursor.execute(f"DROP TABLE IF EXISTS {table}")
    print(f"best of {REPEATS} runs, each a fresh process timed from start to exit\n")
    print("| run | wall time | rows/s | throughput / baseline | CPU time | peak RSS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    base_wall = results["LOAD DATA LOCAL INFILE (baseline)"][0]
    for name, (wall, cpu, peak) in results.items():
        print(f"| {name} | {wall:.2f} s | {ROWS / wall:,.0f} | {base_wall / wall:.2f}x "
              f"| {cpu:.2f} s | {peak:,.0f} MiB |")  # fmt: skip
    ratio = base_wall / results["sqlml TO PREDICT"][0]
    print(f"\nsqlml's throughput = {ratio:.2f}x LOAD DATA's (target >= 0.5x): "
          f"{'met' if ratio >= 0.5 else 'NOT met'}")  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["--load-data"]:
        load_data(sys.argv[2])
    elif sys.argv[1:2] == ["--csv"]:
        export_csv(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        main()
