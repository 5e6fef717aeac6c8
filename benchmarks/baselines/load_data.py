"""predict.py's baseline, in a lean environment (pymysql alone): a new MySQL table of a CSV
file's rows by ``LOAD DATA LOCAL INFILE``, the server's fastest bulk load.

``python load_data.py URL TABLE DEFINITION CSV`` (URL: mysql://user:password@host:port/db)
"""

import sys
from urllib.parse import unquote, urlsplit

import pymysql


def main(url: str, table: str, definition: str, csv: str) -> None:
    parts = urlsplit(url)
    con = pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=unquote(parts.username or "") or None,
        password=unquote(parts.password or ""),
        database=parts.path.lstrip("/"),
        autocommit=True,
        local_infile=True,
    )
    with con, con.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {table}")
        cursor.execute(f"CREATE TABLE {table} ({definition})")
        cursor.execute(
            f"LOAD DATA LOCAL INFILE '{csv}' INTO TABLE {table} FIELDS TERMINATED BY ','"
        )


if __name__ == "__main__":
    main(*sys.argv[1:5])
