"""predict_postgresql.py's baselines, in a lean environment: a hand-written TO PREDICT on
PostgreSQL: read the table (psycopg's ``COPY ... TO STDOUT (FORMAT BINARY)`` viewed as numpy
records, or ADBC to Arrow to numpy), ``booster.predict``, and the result written with one
``COPY ... FROM STDIN (FORMAT BINARY)`` of numpy records into a table created in the same
transaction (the old one dropped).

``python predict_postgresql.py copy|adbc URL TABLE RESULT MODEL_FILE FEATURES``
"""

import sys
from urllib.parse import unquote, urlsplit

import numpy as np
import psycopg
import xgboost as xgb

HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags, header extension length
TRAILER = b"\xff\xff"


def record(names: list[str]) -> np.dtype:
    """A binary COPY row: the field count, then each field's length and value."""
    fields = [("count", ">i2")]
    for name in names:
        fields += [(f"{name} length", ">i4"), (name, ">i8" if name == "label" else ">f8")]
    return np.dtype(fields)


def connection(url: str) -> psycopg.Connection:
    parts = urlsplit(url)
    return psycopg.connect(
        host=parts.hostname,
        port=parts.port or 5432,
        user=unquote(parts.username or "") or None,
        password=unquote(parts.password or "") or None,
        dbname=parts.path.lstrip("/"),
    )


def read_copy(con: psycopg.Connection, table: str, names: list[str]) -> dict:
    data = bytearray()
    with con.cursor() as cursor, cursor.copy(f"COPY {table} TO STDOUT (FORMAT BINARY)") as copy:
        for chunk in copy:
            data += chunk
    dtype = record(names)
    rows = np.frombuffer(data, dtype, count=(len(data) - 21) // dtype.itemsize, offset=19)
    return {name: rows[name].astype(np.float64) for name in names[:-1]}


def read_adbc(url: str, table: str, names: list[str]) -> dict:
    import adbc_driver_postgresql.dbapi

    with adbc_driver_postgresql.dbapi.connect(url) as con, con.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(names[:-1])} FROM {table}")
        arrow = cursor.fetch_arrow_table()
    return {name: arrow.column(name).to_numpy() for name in names[:-1]}


def main(reader: str, url: str, table: str, result: str, model_file: str, features: str) -> None:
    names = [f"x{i}" for i in range(int(features))] + ["label"]
    booster = xgb.Booster(model_file=model_file)
    con = connection(url)
    columns = read_copy(con, table, names) if reader == "copy" else read_adbc(url, table, names)
    x = np.column_stack(list(columns.values()))
    columns["label"] = (booster.predict(xgb.DMatrix(x)) > 0.5).astype(np.int64)
    rows = np.empty(len(x), record(names))
    rows["count"] = len(names)
    for name in names:
        rows[f"{name} length"] = 8
        rows[name] = columns[name]
    definition = ", ".join(f"{n} DOUBLE PRECISION" for n in names[:-1]) + ", label BIGINT"
    with con.transaction(), con.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {result}")
        cursor.execute(f"CREATE TABLE {result} ({definition})")
        with cursor.copy(f"COPY {result} FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(HEADER)
            copy.write(rows.data)
            copy.write(TRAILER)
    con.close()


if __name__ == "__main__":
    main(*sys.argv[1:7])
