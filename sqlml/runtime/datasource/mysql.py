"""MySQL and MariaDB through pymysql.

Reading runs the SELECT as a prepared statement, so that rows arrive in the binary protocol
(numbers as fixed-width binary values, not text the server formats and the client parses),
reads the row packets itself in batches of a few MiB and converts each batch with numpy: no
Python work per numeric value, memory bounded by a batch. Statements that cannot be prepared
and results with other column types (dates, FLOAT, BIT, ...) stream through pymysql's cursor.
"""

from __future__ import annotations

import hashlib
import struct
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pymysql
from pymysql.connections import MAX_PACKET_LEN
from pymysql.constants import CLIENT, COMMAND, FIELD_TYPE, FLAG
from pymysql.protocol import FieldDescriptorPacket, MysqlPacket

from sqlml.errors import DatasourceError
from sqlml.runtime.datasource.base import (
    BATCH_ROWS,
    WRITTEN_MARK,
    Columns,
    Datasource,
    ResultSet,
    Target,
    fetch_batches,
    lost_in_transaction,
    object_array,
    returns_rows,
    short_name,
)
from sqlml.runtime.datasource.bulk import check_finite, text_chunks
from sqlml.runtime.datasource.mysql_load import insert_rows, load_data
from sqlml.runtime.datasource.url import DatasourceURL
from sqlml.tables import HELPER_MARK

_INTEGER_TYPES = {
    FIELD_TYPE.TINY,
    FIELD_TYPE.SHORT,
    FIELD_TYPE.LONG,
    FIELD_TYPE.LONGLONG,
    FIELD_TYPE.INT24,
    FIELD_TYPE.YEAR,
}
_FLOAT_TYPES = {FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE, FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL}
# Binary protocol: fixed-width values' sizes; decimals and strings are length-prefixed text.
# FLOAT is left to the text protocol, whose values the server rounds to 6 digits.
_WIDTHS = {
    FIELD_TYPE.TINY: 1,
    FIELD_TYPE.SHORT: 2,
    FIELD_TYPE.YEAR: 2,
    FIELD_TYPE.INT24: 4,
    FIELD_TYPE.LONG: 4,
    FIELD_TYPE.LONGLONG: 8,
    FIELD_TYPE.DOUBLE: 8,
}
_STRING_TYPES = {
    FIELD_TYPE.VARCHAR,
    FIELD_TYPE.VAR_STRING,
    FIELD_TYPE.STRING,
    FIELD_TYPE.TINY_BLOB,
    FIELD_TYPE.MEDIUM_BLOB,
    FIELD_TYPE.LONG_BLOB,
    FIELD_TYPE.BLOB,
    FIELD_TYPE.JSON,
}
_BINARY_CHARSET = 63
_BATCH_BYTES = 4 << 20
SETTLE_SECONDS = 3.0  # the longest a fingerprint waits for a table's update time to settle
WRITE_LOCK_SECONDS = 3600  # how long a write waits while another writes into its table


class MySQLSource(Datasource):
    dialect = "mysql"
    param = "%s"
    current_schema = "DATABASE()"
    fingerprint_sql = "CHECKSUM TABLE {table}"
    transactional_ddl = False
    types: ClassVar[dict[str, str]] = {
        "int": "BIGINT",
        "float": "DOUBLE",
        "bool": "BOOLEAN",
        "text": "LONGTEXT",
        "blob": "LONGBLOB",
        "key": "VARCHAR(255)",
    }

    def __init__(self, url: DatasourceURL) -> None:
        super().__init__(url)
        self._exact_times = False
        self._con = _connect(url)
        self._load_con: pymysql.Connection | None = None
        self._in_transaction = False

    def _fingerprint(self, table: Sequence[str]) -> Any:
        """The table's columns, creation and update times when the server keeps the update
        time, else ``CHECKSUM TABLE``, which reads every row. Times have whole seconds, so a
        table changed in the current second is asked again once that second is over (a later
        change then gets a later time): the same unchanged table always gets the same form of
        fingerprint, whenever it is asked, and a resumed run recognises it."""
        if not self._exact_times:  # MySQL 8 caches these times for a day unless told not to
            with suppress(DatasourceError):  # MariaDB has no such cache, nor the variable
                self.execute("SET SESSION information_schema_stats_expiry = 0")
            self._exact_times = True
        *schema, name = table
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            found = self.execute(
                "SELECT CREATE_TIME, UPDATE_TIME, UPDATE_TIME < NOW(), "
                "(SELECT GROUP_CONCAT(c.COLUMN_NAME, ' ', c.COLUMN_TYPE "
                "ORDER BY c.ORDINAL_POSITION) FROM information_schema.columns AS c "
                "WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name) "
                "FROM information_schema.tables AS t "
                "WHERE t.table_schema = COALESCE(%s, DATABASE()) AND t.table_name = %s",
                [schema[-1] if schema else None, name],
            )
            if not (found and found.rows and found.rows[0][1] is not None):
                return super()._fingerprint(table)
            created, updated, settled, columns = found.rows[0]
            if settled:
                return f"created {created}, updated {updated}, columns {columns}"
            if time.monotonic() >= deadline:  # written to without a pause: read the rows
                return super()._fingerprint(table)
            time.sleep(0.1)

    def quote(self, parts: Sequence[str]) -> str:
        return ".".join("`" + part.replace("`", "``") + "`" for part in parts)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        try:
            with self._live().cursor() as cursor:
                cursor.execute(sql, tuple(params) or None)
                if not returns_rows(sql) or cursor.description is None:
                    return None
                return ResultSet([d[0] for d in cursor.description], list(cursor.fetchall()))
        except pymysql.MySQLError as error:
            raise DatasourceError(f"MySQL: {_message(error)}") from None

    def read_batches(self, select: str, batch_rows: int = BATCH_ROWS) -> Iterator[Columns]:
        try:
            batches = _read_binary(self._live(), select, batch_rows)
            if batches is not None:
                yield from batches
                return
            with self._con.cursor(pymysql.cursors.SSCursor) as cursor:  # closing drains it
                cursor.execute(select)
                kinds = [_kind(d[1]) for d in cursor.description]
                yield from fetch_batches(cursor, kinds, batch_rows)
        except pymysql.MySQLError as error:
            raise DatasourceError(f"MySQL: {_message(error)}") from None

    def _insert(self, table: str, columns: Columns) -> None:
        """``LOAD DATA LOCAL INFILE`` streamed from memory where the server allows it (on a
        connection of its own: the others never read local files), else multi-row INSERTs."""
        check_finite(columns)
        names = [self.quote([name]) for name in columns]
        rows = len(next(iter(columns.values()), ()))
        try:
            loader = self._loader()
            if loader is None:
                insert_rows(self._live(), table, names, columns, self._max_packet())
            elif rows:
                chunks = text_chunks(columns)
                load_data(loader, table, names, chunks, rows, self._max_packet())
        except pymysql.MySQLError as error:
            raise DatasourceError(f"MySQL: {_message(error)}") from None

    def _loader(self) -> pymysql.Connection | None:
        """The connection for LOAD DATA LOCAL, or None if the server has ``local_infile`` off."""
        if self._load_con is not None:
            try:
                self._load_con.ping(reconnect=False)
                return self._load_con
            except pymysql.MySQLError:  # lost (server restarted, idle too long): a new one
                self._load_con = None
        if not self._local_infile():
            return None
        self._load_con = _connect(self.url, local_infile=True)
        return self._load_con

    def _local_infile(self) -> bool:
        found = self.execute("SELECT @@local_infile")
        return bool(found and found.rows[0][0])

    def _max_packet(self) -> int:
        found = self.execute("SELECT @@max_allowed_packet")
        return int(found.rows[0][0]) if found else 1 << 20

    def _new_reader(self) -> MySQLSource:
        """A connection reading a result cannot run other statements until it is read."""
        return MySQLSource(self.url)

    @contextmanager
    def _exclusive_write(self, table: Sequence[str]) -> Iterator[None]:
        """MySQL commits each DDL statement at once, so writes into one table take turns
        under a named lock of the server instead (released with the connection, should this
        process die). Helper tables are named after the table's first 24 bytes, so tables
        that share those take turns too."""
        *schema, name = table
        database = schema[-1] if schema else self.url.path
        key = f"{database}.{short_name(name)}"
        lock = "sqlml_write_" + hashlib.sha256(key.encode()).hexdigest()[:40]
        found = self.execute("SELECT GET_LOCK(%s, %s)", [lock, WRITE_LOCK_SECONDS])
        if not found or found.rows[0][0] != 1:
            raise DatasourceError(
                f"MySQL: another write into {'.'.join(table)} went on for over "
                f"{WRITE_LOCK_SECONDS} s",
                hint="run the statement again once the other write has ended",
            )
        try:
            yield
        finally:
            with suppress(DatasourceError):
                self.execute("SELECT RELEASE_LOCK(%s)", [lock])

    def _helper_tables(self, schema: str | None, prefix: str) -> list[str]:
        """Compared byte for byte: MySQL's table names are case-sensitive on Linux, and
        another case's helper tables belong to another table's live write."""
        found = self.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = COALESCE(%s, DATABASE()) "
            "AND LOCATE(BINARY %s, table_name) = 1",
            [schema, prefix + HELPER_MARK],
        )
        return [name for (name,) in found.rows] if found else []

    def _create_staging(self, staging: list[str], definition: str) -> None:
        self.execute(
            f"CREATE TABLE {self.quote(staging)} ({definition}) COMMENT = '{WRITTEN_MARK}'"
        )

    def _widen(self, staging: list[str], column: str, kind: str, wider: str) -> None:
        self.execute(
            f"ALTER TABLE {self.quote(staging)} MODIFY {self.quote([column])} {self.types[wider]}"
        )

    def describe_target(self, table: Sequence[str]) -> Target | None:
        *schema, name = table
        found = self.execute(
            "SELECT TABLE_TYPE, TABLE_COMMENT FROM information_schema.tables "
            "WHERE table_schema = COALESCE(%s, DATABASE()) AND table_name = %s",
            [schema[-1] if schema else None, name],
        )
        if not found or not found.rows:
            return None
        table_type, comment = found.rows[0]
        kind = {"BASE TABLE": "table", "VIEW": "view"}.get(table_type, str(table_type).lower())
        return Target(kind, kind == "table" and comment == WRITTEN_MARK)

    def _swap(self, staging: list[str], target: list[str], replace: bool) -> None:
        """One RENAME TABLE moves the old table (or view) aside and the staging table in."""
        *schema, name = target
        found = self.check_target(target, replace)
        if found is None:
            self.execute(f"RENAME TABLE {self.quote(staging)} TO {self.quote(target)}")
            return
        old = [*schema, f"{short_name(name)}{HELPER_MARK}old_{staging[-1][-12:]}"]
        self.execute(
            f"RENAME TABLE {self.quote(target)} TO {self.quote(old)}, "
            f"{self.quote(staging)} TO {self.quote(target)}"
        )
        self.execute(f"DROP {'VIEW' if found.kind == 'view' else 'TABLE'} {self.quote(old)}")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        con = self._live()
        with _driver_errors():
            con.begin()
        self._in_transaction = True
        try:
            try:
                yield
            except BaseException:
                if con.open:  # a lost connection took its transaction with it
                    with _driver_errors():
                        con.rollback()
                raise
            with _driver_errors():
                con.commit()
        finally:
            self._in_transaction = False

    def _live(self) -> pymysql.Connection:
        """The connection; a new one if it was lost (the server restarted, the link dropped)
        outside a transaction. Within one, the loss is the transaction's error."""
        if not self._con.open:
            if self._in_transaction:
                raise lost_in_transaction(self.url)
            self._con = _connect(self.url)
            self._exact_times = False
        return self._con

    def _interrupt(self) -> None:
        """``KILL QUERY`` from a connection of its own: the running statement fails, the
        connections stay open."""
        running = [con.thread_id() for con in (self._con, self._load_con) if con and con.open]
        with suppress(DatasourceError, pymysql.MySQLError):
            killer = _connect(self.url)
            try:
                with killer.cursor() as cursor:
                    for thread in running:
                        cursor.execute("KILL QUERY %s", (thread,))
            finally:
                killer.close()

    def close(self) -> None:
        if self._load_con is not None and self._load_con.open:
            self._load_con.close()
        if self._con.open:
            self._con.close()


@contextmanager
def _driver_errors() -> Iterator[None]:
    """pymysql's errors as :class:`DatasourceError`."""
    try:
        yield
    except pymysql.MySQLError as error:
        raise DatasourceError(f"MySQL: {_message(error)}") from None


def _connect(url: DatasourceURL, local_infile: bool = False) -> pymysql.Connection:
    try:
        return pymysql.connect(
            host=url.host,
            port=url.port or 3306,
            user=url.user or None,
            password=url.password,
            database=url.path,
            charset="utf8mb4",
            autocommit=True,
            connect_timeout=10,
            # LOAD DATA LOCAL allowed, yet pymysql never opens a file the server names
            client_flag=CLIENT.LOCAL_FILES if local_infile else 0,
        )
    except pymysql.MySQLError as error:
        raise DatasourceError(
            f"cannot connect to {url}: {_message(error)}",
            hint="check that the server is running and that the URL given with "
            "--datasource or SQLML_DATASOURCE is right",
        ) from None


def _message(error: pymysql.MySQLError) -> str:
    args = error.args
    return str(args[1]) if len(args) > 1 else str(error)


def _kind(type_code: int) -> str:
    if type_code in _INTEGER_TYPES:
        return "int"
    return "float" if type_code in _FLOAT_TYPES else "object"


@dataclass(frozen=True)
class _Column:
    """How to decode one result column from binary row packets."""

    name: str
    kind: str  # "int", "float" or "object", as in fetch_batches
    dtype: str | None  # the binary value's type if fixed-width; None if length-prefixed
    encoding: str | None  # text's encoding; None for bytes


def _columns(fields: list[FieldDescriptorPacket], encoding: str) -> list[_Column] | None:
    """How to decode each field, or None if the binary path leaves one's type to pymysql."""
    columns = []
    for field in fields:
        code = field.type_code
        if code == FIELD_TYPE.DOUBLE:
            columns.append(_Column(field.name, "float", "<f8", None))
        elif code in _WIDTHS:
            sign = "u" if field.flags & FLAG.UNSIGNED else "i"
            columns.append(_Column(field.name, "int", f"<{sign}{_WIDTHS[code]}", None))
        elif code in (FIELD_TYPE.DECIMAL, FIELD_TYPE.NEWDECIMAL):
            columns.append(_Column(field.name, "float", None, None))
        elif code in _STRING_TYPES:
            binary = field.charsetnr == _BINARY_CHARSET and code != FIELD_TYPE.JSON
            columns.append(_Column(field.name, "object", None, None if binary else encoding))
        else:
            return None
    return columns


def _read_binary(con: pymysql.Connection, select: str, batch_rows: int) -> Iterator[Columns] | None:
    """``select``'s result read in the binary protocol, in batches; None if it needs pymysql's
    text protocol."""
    try:
        con._execute_command(COMMAND.COM_STMT_PREPARE, select)
        prepared = con._read_packet()
    except pymysql.MySQLError:
        if not con.open:
            raise
        return None  # not preparable here: the text protocol runs it or reports the error
    statement, n_columns, n_params = struct.unpack_from("<xIHH", prepared.get_all_data())
    try:
        _definitions(con, n_params)
        columns = _columns(_definitions(con, n_columns), con.encoding)
        if n_params or not columns:
            _close_statement(con, statement)
            return None
        con._execute_command(COMMAND.COM_STMT_EXECUTE, struct.pack("<IBI", statement, 0, 1))
        count = con._read_packet().read_length_encoded_integer()
        columns = _columns(_definitions(con, count), con.encoding)
    except BaseException:
        _close_statement(con, statement)
        raise
    batches = _row_batches(con, batch_rows)
    if columns is None:  # the executed statement's types differ from the prepared one's
        for _ in batches:
            pass
        _close_statement(con, statement)
        return None
    return _convert(con, statement, columns, batches)


def _close_statement(con: pymysql.Connection, statement: int) -> None:
    if con.open:
        con._execute_command(COMMAND.COM_STMT_CLOSE, struct.pack("<I", statement))


def _definitions(con: pymysql.Connection, count: int) -> list[FieldDescriptorPacket]:
    """Read ``count`` column (or parameter) definitions and the EOF packet after them."""
    if not count:
        return []
    fields = [con._read_packet(FieldDescriptorPacket) for _ in range(count)]
    con._read_packet()
    return fields


def _row_batches(con: pymysql.Connection, batch_rows: int) -> Iterator[tuple[bytes, np.ndarray]]:
    """The binary rows being received, in batches of at most ``batch_rows`` rows and about
    ``_BATCH_BYTES``: their payloads joined, and where each starts.

    Reads the packets itself: pymysql would make Python values of every field of every row.
    Each batch ends with 8 zero bytes, so fixed-width reads past the last field stay inside.
    """
    read = con._read_bytes  # raises (and closes the connection) if the connection is lost
    sequence = con._next_seq_id
    batch, starts = bytearray(), []
    while True:
        header = read(4)
        if header[3] != sequence:
            _out_of_sequence(con, header[3], sequence)
        sequence = (sequence + 1) % 256
        length = header[0] | header[1] << 8 | header[2] << 16
        payload = read(length)
        if length == MAX_PACKET_LEN:
            payload, sequence = _rest_of_row(con, payload, sequence)
        if payload[0] != 0:  # an EOF or error packet ends the rows; rows start with 0
            break
        starts.append(len(batch))
        batch += payload
        if len(batch) >= _BATCH_BYTES or len(starts) == batch_rows:
            yield bytes(batch + bytes(8)), np.array(starts, dtype=np.int64)
            batch, starts = bytearray(), []
    con._next_seq_id = sequence
    if payload[0] == 0xFF:
        MysqlPacket(payload, con.encoding).raise_for_error()
    if starts:
        yield bytes(batch + bytes(8)), np.array(starts, dtype=np.int64)


def _rest_of_row(con: pymysql.Connection, payload: bytes, sequence: int) -> tuple[bytes, int]:
    """A row of 16 MiB or more: ``payload`` joined with the packets that continue it."""
    parts = [payload]
    length = MAX_PACKET_LEN
    while length == MAX_PACKET_LEN:
        header = con._read_bytes(4)
        if header[3] != sequence:
            _out_of_sequence(con, header[3], sequence)
        sequence = (sequence + 1) % 256
        length = header[0] | header[1] << 8 | header[2] << 16
        parts.append(con._read_bytes(length))
    return b"".join(parts), sequence


def _out_of_sequence(con: pymysql.Connection, got: int, expected: int) -> None:
    con._force_close()
    raise pymysql.err.InternalError(f"Packet sequence number wrong - got {got} expected {expected}")


def _convert(
    con: pymysql.Connection,
    statement: int,
    columns: list[_Column],
    batches: Iterator[tuple[bytes, np.ndarray]],
) -> Iterator[Columns]:
    """Columns from the row batches, batch by batch; the prepared statement is closed after."""
    try:
        empty = True
        for data, starts in batches:
            empty = False
            arrays = _batch_arrays(columns, data, starts)
            yield {column.name: values for column, values in zip(columns, arrays, strict=True)}
        if empty:
            yield {column.name: _EMPTY[column.kind] for column in columns}
    finally:
        for _ in batches:  # read the rest of the rows: the connection stays usable
            pass
        _close_statement(con, statement)


_EMPTY = {
    "int": np.empty(0, np.int64),
    "float": np.empty(0, np.float64),
    "object": np.empty(0, object),
}


def _batch_arrays(columns: list[_Column], data: bytes, starts: np.ndarray) -> Iterator[np.ndarray]:
    """Each column's values in one batch of binary rows, field by field across all rows at once."""
    packet = np.frombuffer(data, np.uint8)
    # each row: a 0 byte, the NULL bitmap (bits offset by 2), the non-NULL values
    at = starts + 1 + (len(columns) + 9) // 8
    for j, column in enumerate(columns):
        null = (packet[starts + 1 + (j + 2) // 8] >> (j + 2) % 8 & 1).astype(bool)
        if column.dtype is not None:
            width = np.dtype(column.dtype).itemsize
            # every byte offset viewed as the start of a value; gather the rows' offsets
            values = np.ndarray((len(packet) - width + 1,), column.dtype, data, strides=(1,))[at]
            at = at + np.where(null, 0, width)
            yield _numbers(values, null)
            continue
        start, length = _text_fields(packet, at, null)
        at = start + length
        cells = [
            None if is_null else data[begin:end]
            for is_null, begin, end in zip(null.tolist(), start.tolist(), at.tolist(), strict=True)
        ]
        if column.kind == "float":
            yield np.array(cells, dtype=np.float64)  # decimals' text; None becomes NaN
        elif column.encoding is None:
            yield object_array(cells)
        else:
            yield object_array([None if c is None else c.decode(column.encoding) for c in cells])


def _numbers(values: np.ndarray, null: np.ndarray) -> np.ndarray:
    """Fixed-width values as int64 (unsigned ones past int64 as float64) or float64 with NaN."""
    if values.dtype.kind == "f" or null.any():
        values = values.astype(np.float64, copy=False)
        values[null] = np.nan
        return values
    if values.dtype == np.uint64 and values.size and values.max() > np.iinfo(np.int64).max:
        return values.astype(np.float64)
    return values.astype(np.int64, copy=False)


def _text_fields(
    packet: np.ndarray, at: np.ndarray, null: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Where the length-prefixed fields at ``at`` start and how long they are (0 if NULL)."""
    first = packet[at].astype(np.int64)
    start, length = at + 1, np.where(null, 0, first)
    for marker, size in ((0xFC, 2), (0xFD, 3), (0xFE, 8)):  # longer lengths: 2, 3 or 8 bytes
        rows = np.flatnonzero((first == marker) & ~null)
        if rows.size:
            length[rows] = sum(
                packet[at[rows] + 1 + k].astype(np.int64) << 8 * k for k in range(size)
            )
            start[rows] += size
    start[null] = at[null]
    return start, length
