"""predict_duckdb.py's baseline, in a lean environment: a hand-written TO PREDICT on DuckDB:
the table read with ``fetchnumpy``, ``booster.inplace_predict``, and a new table of the
features and the predicted class made from the numpy columns in one ``CREATE TABLE AS``.

``python predict_duckdb.py DATABASE TABLE RESULT MODEL_FILE FEATURES``
"""

import sys

import duckdb
import numpy as np
import xgboost as xgb


def main(database: str, table: str, result: str, model_file: str, features: str) -> None:
    names = [f"x{i}" for i in range(int(features))]
    booster = xgb.Booster(model_file=model_file)
    con = duckdb.connect(database)
    columns = con.sql(f"SELECT {', '.join(names)} FROM {table}").fetchnumpy()
    x = np.column_stack([columns[name] for name in names])
    columns["label"] = (booster.inplace_predict(x) > 0.5).astype(np.int64)
    con.register("predicted", columns)
    con.execute(f"CREATE OR REPLACE TABLE {result} AS SELECT * FROM predicted")
    con.close()


if __name__ == "__main__":
    main(*sys.argv[1:6])
