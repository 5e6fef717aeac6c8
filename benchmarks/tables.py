"""The benchmarks' MySQL tables: a connection from a URL, and a DuckDB table copied into
MySQL through a CSV file (LOAD DATA LOCAL INFILE: the server must allow local_infile)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from sqlml.datasources import parse_url


def mysql_connection(url: str, **options: Any) -> Any:
    """A pymysql connection (autocommit) to the database of ``url``."""
    import pymysql

    parsed = parse_url(url)
    return pymysql.connect(
        host=parsed.host,
        port=parsed.port or 3306,
        user=parsed.user or None,
        password=parsed.password,
        database=parsed.path,
        charset="utf8mb4",
        autocommit=True,
        **options,
    )


def copy_to_mysql(duckdb_con: Any, table: str, definition: str, url: str) -> None:
    """DuckDB's ``table`` written to MySQL's ``table`` (replaced; its columns ``definition``)
    through a CSV file of the shortest exact decimals."""
    with tempfile.TemporaryDirectory() as folder:
        csv = Path(folder) / "data.csv"
        duckdb_con.execute(f"COPY {table} TO '{csv}' (HEADER false)")
        with mysql_connection(url, local_infile=True) as mysql, mysql.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {table}")
            cursor.execute(f"CREATE TABLE {table} ({definition})")
            cursor.execute(
                f"LOAD DATA LOCAL INFILE '{csv}' INTO TABLE {table} FIELDS TERMINATED BY ','"
            )
