"""train.py's baseline: the strongest script a user would write to train XGBoost on a table,
run in a lean environment (benchmarks/lean.py): the fastest reader for the database other
than sqlml (MySQL: polars with connectorx; DuckDB: the relation's ``fetchnumpy``; PostgreSQL:
ADBC), the columns stacked into one matrix, ``xgboost.QuantileDMatrix``, ``xgboost.train``,
the model saved to a file.

``python train.py DATABASE LOCATION TABLE PARAMS_JSON ROUNDS``
"""

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import xgboost as xgb


def read(database: str, location: str, select: str) -> dict:
    if database == "duckdb":
        import duckdb

        return duckdb.connect(location, read_only=True).sql(select).fetchnumpy()
    if database == "mysql":
        import polars

        frame = polars.read_database_uri(select, location, engine="connectorx")
        return {name: frame[name].to_numpy() for name in frame.columns}
    import adbc_driver_postgresql.dbapi

    with adbc_driver_postgresql.dbapi.connect(location) as con, con.cursor() as cursor:
        cursor.execute(select)
        table = cursor.fetch_arrow_table()
    return {name: table.column(name).to_numpy() for name in table.column_names}


def main(database: str, location: str, table: str, params: str, rounds: str) -> None:
    columns = read(database, location, f"SELECT * FROM {table}")
    label = np.asarray(columns.pop("label"))
    x = np.column_stack([np.asarray(values) for values in columns.values()])
    dtrain = xgb.QuantileDMatrix(x, label=label)
    booster = xgb.train(json.loads(params), dtrain, num_boost_round=int(rounds))
    with tempfile.TemporaryDirectory() as folder:
        booster.save_model(Path(folder) / "model.ubj")


if __name__ == "__main__":
    main(*sys.argv[1:6])
