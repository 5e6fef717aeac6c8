"""Bulk writes to MySQL and MariaDB: ``LOAD DATA LOCAL INFILE`` streamed from memory, or
multi-row INSERT statements where the server does not allow it.

The LOAD DATA statement names no real file: when the server asks for it, the rows are sent
from memory, chunk by chunk, in the packets the protocol uses for a file's content. pymysql
would open whatever file the server names; here only the statement's own stream is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import suppress

import pymysql
from pymysql.connections import MAX_PACKET_LEN
from pymysql.constants import COMMAND
from pymysql.protocol import LoadLocalPacketWrapper, MysqlPacket, OKPacketWrapper

from sqlml.datasources.arrays import python_values
from sqlml.datasources.base import Columns
from sqlml.errors import DatasourceError

STREAM_NAME = "sqlml-rows"  # the file name in the statement, which the server asks back for
_PACKET_BYTES = 1 << 20
_INSERT_ROWS = 10_000  # rows made Python values at a time for the INSERT path
_MAX_STATEMENT_BYTES = 16 << 20


def load_data(
    con: pymysql.Connection,
    table: str,
    names: Sequence[str],
    chunks: Iterable[bytes],
    rows: int,
    max_packet: int,
) -> None:
    """Stream ``chunks`` (LOAD DATA text) into the quoted ``table``'s quoted columns ``names``.

    Raises DatasourceError unless the server stored exactly ``rows`` rows without a warning
    (with LOCAL, the server turns bad values into warnings).
    """
    con._execute_command(
        COMMAND.COM_QUERY,
        f"LOAD DATA LOCAL INFILE '{STREAM_NAME}' INTO TABLE {table} CHARACTER SET utf8mb4 "
        "FIELDS TERMINATED BY '\\t' ENCLOSED BY '' ESCAPED BY '\\\\' "
        f"LINES TERMINATED BY '\\n' STARTING BY '' ({', '.join(names)})",
    )
    request = con._read_packet()  # an error packet raises
    if not request.is_load_local_packet():
        raise DatasourceError("MySQL: the server did not ask for the rows of LOAD DATA")
    if LoadLocalPacketWrapper(request).filename.decode(errors="replace") != STREAM_NAME:
        _end_stream(con)
        raise DatasourceError("MySQL: the server asked for a file other than the rows sent")
    size = max(1024, min(_PACKET_BYTES, max_packet - 1024, MAX_PACKET_LEN - 1))
    try:
        for chunk in chunks:
            for start in range(0, len(chunk), size):
                con.write_packet(chunk[start : start + size])
    except BaseException:
        if con.open:  # end the stream, so that the connection stays usable
            with suppress(pymysql.MySQLError):
                _end_stream(con)
        raise
    done = OKPacketWrapper(_end_stream(con))
    if done.warning_count:
        raise DatasourceError(
            f"MySQL: LOAD DATA into {table} stored values that differ from those sent: "
            + "; ".join(_warnings(con)),
            hint="check that the table's column types can hold the values",
        )
    if done.affected_rows != rows:
        raise DatasourceError(
            f"MySQL: LOAD DATA stored {done.affected_rows} rows of {rows} into {table}"
        )


def _end_stream(con: pymysql.Connection) -> MysqlPacket:
    """Send the empty packet that ends the rows; the server's answer (an error raises)."""
    con.write_packet(b"")
    return con._read_packet()


def _warnings(con: pymysql.Connection) -> list[str]:
    with con.cursor() as cursor:
        cursor.execute("SHOW WARNINGS LIMIT 3")
        return [str(row[2]) for row in cursor.fetchall()]


def insert_rows(
    con: pymysql.Connection, table: str, names: Sequence[str], columns: Columns, max_packet: int
) -> None:
    """Multi-row INSERTs, each under ``max_packet`` bytes, values bound as parameters.

    pymysql's ``executemany`` joins the rows of ``INSERT ... VALUES (...)`` into statements
    of at most ``max_stmt_length`` bytes; a row longer than that is a statement of its own.
    """
    values = list(columns.values())
    rows = len(values[0]) if values else 0
    head = f"INSERT INTO {table} ({', '.join(names)}) VALUES ".replace("%", "%%")  # pymysql
    sql = head + "(" + ", ".join(["%s"] * len(values)) + ")"  # formats the head with %
    with con.cursor() as cursor:
        cursor.max_stmt_length = max(1024, min(max_packet - 1024, _MAX_STATEMENT_BYTES))
        for start in range(0, rows, _INSERT_ROWS):
            chunk = [python_values(v[start : start + _INSERT_ROWS]) for v in values]
            cursor.executemany(sql, list(zip(*chunk, strict=True)))
