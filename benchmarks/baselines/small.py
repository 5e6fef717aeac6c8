"""small.py's baselines, in a lean environment (the database's driver, numpy, xgboost): what
a user would write for a small TO TRAIN and TO PREDICT: read the rows, train or predict,
write back (the model into a table of its own; the predictions into a new table: DuckDB's
from the numpy arrays, MySQL's and PostgreSQL's with ``executemany``).

``python small.py train DATABASE LOCATION TABLE LABEL MODEL_TABLE PARAMS_JSON ROUNDS``
``python small.py predict DATABASE LOCATION TABLE LABEL MODEL_TABLE RESULT``
(LOCATION: a DuckDB file, or a mysql:// or postgresql:// URL)
"""

import json
import sys
from urllib.parse import unquote, urlsplit

import numpy as np
import xgboost as xgb

BLOB = {"duckdb": "BLOB", "mysql": "LONGBLOB", "postgresql": "BYTEA"}
MARK = {"duckdb": "?", "mysql": "%s", "postgresql": "%s"}


def connect(database: str, location: str):
    if database == "duckdb":
        import duckdb

        return duckdb.connect(location)
    parts = urlsplit(location)
    options = {
        "host": parts.hostname,
        "port": parts.port,
        "user": unquote(parts.username or "") or None,
        "password": unquote(parts.password or "") or None,
    }
    if database == "mysql":
        import pymysql

        options["password"] = options["password"] or ""
        return pymysql.connect(**options, database=parts.path.lstrip("/"), autocommit=True)
    import psycopg

    return psycopg.connect(**options, dbname=parts.path.lstrip("/"), autocommit=True)


def read(con, table: str) -> tuple[list[str], np.ndarray]:
    """The table's column names and its rows as one float matrix."""
    cursor = con.cursor()
    cursor.execute(f"SELECT * FROM {table}")
    if hasattr(cursor, "fetchnumpy"):  # DuckDB
        columns = cursor.fetchnumpy()
        return list(columns), np.column_stack([columns[n] for n in columns]).astype(np.float64)
    names = [d[0] for d in cursor.description]
    return names, np.array(cursor.fetchall(), dtype=np.float64)


def train(database, location, table, label, model_table, params, rounds) -> None:
    con = connect(database, location)
    names, rows = read(con, table)
    at = names.index(label)
    x, y = np.delete(rows, at, axis=1), rows[:, at]
    booster = xgb.train(json.loads(params), xgb.DMatrix(x, label=y), int(rounds))
    cursor = con.cursor()
    cursor.execute(f"DROP TABLE IF EXISTS {model_table}")
    cursor.execute(f"CREATE TABLE {model_table} (model {BLOB[database]})")
    mark = MARK[database]
    cursor.execute(f"INSERT INTO {model_table} VALUES ({mark})", [bytes(booster.save_raw("ubj"))])
    con.close()


def predict(database, location, table, label, model_table, result) -> None:
    con = connect(database, location)
    cursor = con.cursor()
    cursor.execute(f"SELECT model FROM {model_table}")
    booster = xgb.Booster(model_file=bytearray(cursor.fetchone()[0]))
    names, rows = read(con, table)
    keep = [i for i, name in enumerate(names) if name != label]
    x = rows[:, keep]
    predicted = (booster.predict(xgb.DMatrix(x)) > 0.5).astype(np.int64)
    columns = [names[i] for i in keep]
    cursor.execute(f"DROP TABLE IF EXISTS {result}")
    if database == "duckdb":
        con.register("predicted", {**dict(zip(columns, x.T, strict=True)), label: predicted})
        con.execute(f"CREATE TABLE {result} AS SELECT * FROM predicted")
        con.close()
        return
    definition = ", ".join([f"{name} DOUBLE PRECISION" for name in columns] + [f"{label} BIGINT"])
    cursor.execute(f"CREATE TABLE {result} ({definition})")
    marks = ", ".join([MARK[database]] * (len(columns) + 1))
    values = [[*map(float, row), int(p)] for row, p in zip(x, predicted, strict=True)]
    cursor.executemany(f"INSERT INTO {result} VALUES ({marks})", values)
    con.close()


if __name__ == "__main__":
    {"train": train, "predict": predict}[sys.argv[1]](*sys.argv[2:9])
