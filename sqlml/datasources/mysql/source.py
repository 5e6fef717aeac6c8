"""MySQL and MariaDB through pymysql.

Reading runs the SELECT as a prepared statement, so that rows arrive in the binary protocol
(:mod:`~sqlml.datasources.mysql.read`); statements that cannot be prepared and results
with other column types (dates, FLOAT, BIT, ...) stream through pymysql's cursor. Writing
streams ``LOAD DATA LOCAL INFILE`` from memory (:mod:`~sqlml.datasources.mysql.load`).
pymysql, and those two modules that speak its protocol, load when first used.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from sqlml import imports
from sqlml.datasources.base import (
    BATCH_ROWS,
    WRITTEN_MARK,
    Columns,
    Datasource,
    Partitioning,
    ResultSet,
    Target,
    lost_in_transaction,
    returns_rows,
    short_name,
)
from sqlml.datasources.driver import Driver
from sqlml.datasources.mysql import options as mysql_options
from sqlml.datasources.url import DatasourceURL
from sqlml.errors import DatasourceError
from sqlml.tables import HELPER_MARK

pymysql = Driver("pymysql")
_EXACT_COLLATIONS = ("utf8mb4_0900_bin", "utf8mb4_nopad_bin")  # binary, NO PAD: exact text
SETTLE_SECONDS = 3.0  # the longest a fingerprint waits for a table's update time to settle
WRITE_LOCK_SECONDS = 3600  # how long a write waits while another writes into its table


class MySQLSource(Datasource):
    schemes = ("mysql", "mariadb")
    url_example = "{scheme}://user:password@host:3306/database"
    url_options = tuple(mysql_options.OPTIONS)
    dialect = "mysql"
    param = "%s"
    current_schema = "DATABASE()"
    databases_sql = "SELECT schema_name AS `database` FROM information_schema.schemata ORDER BY 1"
    schema_columns_sql = (  # a database is a schema
        "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') "
        "ORDER BY table_schema, table_name, ordinal_position"
    )
    fingerprint_sql = "CHECKSUM TABLE {table}"
    # CRC32 of the keys' text. A DOUBLE is hashed as an integer (times 10^15 below 9,000 in
    # magnitude, where that fits 64 bits; else its integral part): MariaDB writes a DOUBLE as
    # text slowly (a part of 2,000,000 rows of 10 DOUBLEs: 10.0 s to hash as text, 2.6 s so).
    partitioning = Partitioning(
        "CRC32(CONCAT_WS(',', {keys})) % {count}",
        fractional="IF(ABS({name}) < 9e3, CAST({name} * 1e15 AS SIGNED), CAST({name} AS SIGNED))",
    )
    version_sql = (
        "SELECT CONCAT(IF(version() LIKE '%MariaDB%', 'MariaDB ', 'MySQL '), "
        "SUBSTRING_INDEX(version(), '-', 1))"
    )
    steps_at_once = 20  # of max_connections' default 151, shared with every other client
    credentials_env = ("MYSQL_PWD",)
    transactional_ddl = False
    types: ClassVar[dict[str, str]] = {
        "int": "BIGINT",
        "float": "DOUBLE",
        "bool": "BOOLEAN",
        "text": "LONGTEXT",
        "blob": "LONGBLOB",
        "key": "VARCHAR(255)",
    }

    def __init__(self, url: DatasourceURL, base_dir: Path | None = None) -> None:
        super().__init__(url, base_dir)
        self._exact_times = False
        self._con = _connect(url)
        self._load_con: pymysql.Connection | None = None
        self._in_transaction = False

    @cached_property
    def exact_key(self) -> str:  # type: ignore[override]  # the server's collations tell
        """Text compared byte for byte, trailing spaces too: a binary collation without
        padding (MySQL 8's ``utf8mb4_0900_bin``, MariaDB's ``utf8mb4_nopad_bin``); the
        default ones ignore case and accents and ``utf8mb4_bin`` pads. A server with neither
        (MySQL 5.7) gets ``VARBINARY``, whose values are read as bytes. 1020 bytes hold any
        255 characters of UTF-8."""
        found = self.execute(
            "SELECT COLLATION_NAME FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN "
            "(%s, %s) ORDER BY COLLATION_NAME",
            list(_EXACT_COLLATIONS),
        )
        if not found or not found.rows:
            return "VARBINARY(1020)"
        return f"VARCHAR(255) CHARACTER SET utf8mb4 COLLATE {found.rows[0][0]}"

    def compares_exactly(self, table: Sequence[str], column: str) -> bool:
        """Whether the column has :attr:`exact_key`'s type and collation."""
        *schema, name = table
        found = self.execute(
            "SELECT DATA_TYPE, COLLATION_NAME FROM information_schema.columns "
            "WHERE table_schema = COALESCE(%s, DATABASE()) AND table_name = %s "
            "AND column_name = %s",
            [schema[-1] if schema else None, name, column],
        )
        if not found or not found.rows:
            return True
        data_type, collation = (str(value).lower() for value in found.rows[0])
        return self.exact_key.lower().startswith(data_type) and (
            data_type == "varbinary" or self.exact_key.endswith(collation)
        )

    def _fingerprint(self, table: Sequence[str]) -> Any:
        """The table's columns, creation and update times when the server keeps the update
        time, else ``CHECKSUM TABLE``, which reads every row. Times have whole seconds, so a
        table changed in the current second is asked again once that second is over (a later
        change then gets a later time): the same unchanged table always gets the same form of
        fingerprint, whenever it is asked, and a resumed run recognises it. A view has
        neither (its checksum is NULL): its rows are hashed (:meth:`_view_fingerprint`)."""
        if not self._exact_times:  # MySQL 8 caches these times for a day unless told not to
            with suppress(DatasourceError):  # MariaDB has no such cache, nor the variable
                self.execute("SET SESSION information_schema_stats_expiry = 0")
            self._exact_times = True
        *schema, name = table
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            found = self.execute(
                "SELECT CREATE_TIME, UPDATE_TIME, UPDATE_TIME < NOW(), TABLE_TYPE, "
                "(SELECT GROUP_CONCAT(c.COLUMN_NAME, ' ', c.COLUMN_TYPE "
                "ORDER BY c.ORDINAL_POSITION) FROM information_schema.columns AS c "
                "WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name) "
                "FROM information_schema.tables AS t "
                "WHERE t.table_schema = COALESCE(%s, DATABASE()) AND t.table_name = %s",
                [schema[-1] if schema else None, name],
            )
            if found and found.rows and found.rows[0][3] == "VIEW":
                return self._view_fingerprint(table)
            if not (found and found.rows and found.rows[0][1] is not None):
                return self._checksum(table)
            created, updated, settled, _, columns = found.rows[0]
            if settled:
                return f"created {created}, updated {updated}, columns {columns}"
            if time.monotonic() >= deadline:  # written to without a pause: read the rows
                return self._checksum(table)
            time.sleep(0.1)

    def _checksum(self, table: Sequence[str]) -> Any:
        """The table's columns and ``CHECKSUM TABLE``; None where the server has no checksum
        of it (NULL)."""
        columns, found = super()._fingerprint(table)
        return None if not found or found[0][-1] is None else (columns, found)

    def _view_fingerprint(self, view: Sequence[str]) -> Any:
        """A view's columns and a hash of its rows (the sum of each row's MD5, its values
        quoted, NULL apart from 'NULL'): whatever the view reads (tables, other views,
        functions), its fingerprint changes with the rows it gives."""
        columns = self.column_types(view)
        values = ", ".join(f"QUOTE({self.quote([str(column[0])])})" for column in columns)
        found = self.execute(
            "SELECT COUNT(*), SUM(CAST(CONV(LEFT(MD5(CONCAT_WS(',', "
            f"{values})), 16), 16, 10) AS UNSIGNED)) FROM {self.quote(view)}"
        )
        return (columns, [tuple(map(str, row)) for row in found.rows] if found else None)

    def stage_parts(self, table: str, select: str, number: str, column: str) -> str:
        """InnoDB clusters a table by its primary key: the part's number first, then a row
        counter (AUTO_INCREMENT, which InnoDB wants first in a key of its own too), so a
        part's rows are read as one range of the table."""
        quoted, part, row = self.quote([table]), self.quote([column]), self.quote([f"{column}_row"])
        self.execute(
            f"CREATE TABLE {quoted} ({row} BIGINT NOT NULL AUTO_INCREMENT, KEY ({row}), "
            f"PRIMARY KEY ({part}, {row})) SELECT *, {number} AS {part} "
            f"FROM ({select}) AS sqlml_rows"
        )
        return quoted

    def quote(self, parts: Sequence[str]) -> str:
        return ".".join("`" + part.replace("`", "``") + "`" for part in parts)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        try:
            with self._live().cursor() as cursor:
                cursor.execute(sql, tuple(params) or None)
                self.changed_rows = cursor.rowcount if cursor.rowcount >= 0 else None
                if not returns_rows(sql) or cursor.description is None:
                    return None
                return ResultSet([d[0] for d in cursor.description], list(cursor.fetchall()))
        except pymysql.MySQLError as error:
            raise self.located(DatasourceError(f"MySQL: {_message(error)}"), error, sql) from None

    def error_offset(self, error: Exception, sql: str) -> int | None:
        """A syntax error's ``near '...' at line n`` (the statement's text from the mistake
        on); else the first name the message quotes (``Unknown column 'nope'``, ``Table
        'db.t' doesn't exist``) where the statement names it."""
        message = _message(error)
        near = _NEAR.search(message)
        if near is not None:
            number, rest = int(near["line"]), near["text"]
            starts = [0, *(i + 1 for i, char in enumerate(sql) if char == "\n")]
            if number > len(starts):
                return None
            found = sql.find(rest, starts[number - 1]) if rest else len(sql.rstrip())
            return found if found >= 0 else None
        quoted = _QUOTED_NAME.search(message)
        if quoted is None:
            return None
        for name in (quoted[1], quoted[1].rpartition(".")[2]):
            word = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", sql, re.IGNORECASE)
            if word is not None:
                return word.start()
        return None

    def read_batches(self, select: str, batch_rows: int = BATCH_ROWS) -> Iterator[Columns]:
        from sqlml.datasources.arrays import fetch_batches
        from sqlml.datasources.mysql.read import column_kind, read_binary

        try:
            batches = read_binary(self._live(), select, batch_rows)
            if batches is not None:
                yield from batches
                return
            with self._con.cursor(pymysql.cursors.SSCursor) as cursor:  # closing drains it
                cursor.execute(select)
                kinds = [column_kind(d[1]) for d in cursor.description]
                yield from fetch_batches(cursor, kinds, batch_rows)
        except pymysql.MySQLError as error:
            raise DatasourceError(f"MySQL: {_message(error)}") from None

    def result_types(self, select: str) -> dict[str, str]:
        """The column types of an empty temporary table made from the result (which MySQL
        types exactly, where a result's description lacks them): no row is read. None known
        where the user may not create temporary tables."""
        temporary = self.quote([f"sqlml_types_{uuid.uuid4().hex[:12]}"])
        try:
            self.execute(
                f"CREATE TEMPORARY TABLE {temporary} AS SELECT * FROM ({select}\n) AS result "
                "LIMIT 0"  # the SELECT may end in a -- comment
            )
        except DatasourceError:  # reading the SELECT tells what is wrong with it, if anything
            return {}
        try:
            found = self.execute(f"SHOW COLUMNS FROM {temporary}")
        finally:
            self.execute(f"DROP TEMPORARY TABLE IF EXISTS {temporary}")
        return {row[0]: _type_text(row[1]) for row in found.rows} if found else {}

    def _insert(self, table: str, columns: Columns) -> None:
        """``LOAD DATA LOCAL INFILE`` streamed from memory where the server allows it (on a
        connection of its own: the others never read local files), else multi-row INSERTs."""
        from sqlml.datasources.bulk import check_finite, text_chunks
        from sqlml.datasources.mysql.load import insert_rows, load_data

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

    def _retype(self, staging: list[str], types: Mapping[str, str]) -> None:
        """NULL said: a TIMESTAMP column would otherwise be NOT NULL where the server keeps
        ``explicit_defaults_for_timestamp`` off."""
        changes = ", ".join(f"MODIFY {self.quote([c])} {t} NULL" for c, t in types.items())
        self.execute(f"ALTER TABLE {self.quote(staging)} {changes}")

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
        self.swap_tables([(staging, target)], replace)

    def swap_tables(self, pairs: Sequence[tuple[list[str], list[str]]], replace: bool) -> None:
        """One RENAME TABLE moves every old table (or view) aside and every staging table
        in: MySQL renames them all or none, where it commits each DDL statement at once.
        The old ones are dropped after."""
        renames: list[tuple[list[str], list[str]]] = []
        olds: list[tuple[list[str], str]] = []
        for staging, target in pairs:
            found = self.check_target(target, replace)  # every one, before any rename
            if found is not None:
                *schema, name = target
                old = [*schema, f"{short_name(name)}{HELPER_MARK}old_{staging[-1][-12:]}"]
                renames.append((target, old))
                olds.append((old, "VIEW" if found.kind == "view" else "TABLE"))
            renames.append((staging, target))
        moves = ", ".join(f"{self.quote(a)} TO {self.quote(b)}" for a, b in renames)
        self.execute(f"RENAME TABLE {moves}")
        for old, kind in olds:
            self.execute(f"DROP {kind} {self.quote(old)}")

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
    """A connection as the URL says, its options given to pymysql
    (:mod:`~sqlml.datasources.mysql.options`): with TLS asked for, one without TLS
    (a server that offers none) is an error, never a connection in clear."""
    client = imports.load("pymysql.constants.CLIENT")
    options = mysql_options.connect_arguments(url)
    tls = mysql_options.wants_tls(url)
    try:
        con = pymysql.connect(
            host=url.host,
            port=url.port or 3306,
            user=url.user or None,
            password=url.password,
            database=url.path,
            charset="utf8mb4",
            autocommit=True,
            # LOAD DATA LOCAL allowed, yet pymysql never opens a file the server names
            client_flag=client.LOCAL_FILES if local_infile else 0,
            **{"connect_timeout": 10, **options},
        )
    except pymysql.MySQLError as error:
        raise DatasourceError(
            f"cannot connect to {url}: {_message(error)}",
            hint=mysql_options.NO_TLS_HINT
            if tls
            else "check that the server is running and that the URL given with "
            "--datasource or SQLML_DATASOURCE is right",
        ) from None
    except OSError as error:  # pymysql reads the URL's certificate and key files first
        raise DatasourceError(
            f"cannot connect to {url}: its certificate or key files cannot be read "
            f"({error.strerror or error})",
            hint="check the paths and the key's password given by ssl_ca, ssl_cert, ssl_key "
            "and ssl_key_password",
        ) from None
    if tls and not _encrypted(con):
        con.close()
        raise DatasourceError(
            f"cannot connect to {url}: the server offers no TLS", hint=mysql_options.NO_TLS_HINT
        )
    return con


def _encrypted(con: pymysql.Connection) -> bool:
    """Whether the connection is encrypted (the server says which cipher it uses)."""
    with con.cursor() as cursor:
        cursor.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        found = cursor.fetchone()
    return bool(found and found[1])


def _type_text(sql_type: str | bytes) -> str:
    """SHOW COLUMNS' type (bytes on some servers) as text."""
    return sql_type.decode() if isinstance(sql_type, bytes) else sql_type


# Where MySQL's messages say a statement went wrong: a syntax error's rest of the text, and
# the names of unknown columns, tables and functions.
_NEAR = re.compile(r"near '(?P<text>.*)' at line (?P<line>\d+)$", re.DOTALL)
_QUOTED_NAME = re.compile(r"^(?:Unknown column|Table|FUNCTION|Unknown table) '([^']+)'")


def _message(error: pymysql.MySQLError) -> str:
    args = error.args
    return str(args[1]) if len(args) > 1 else str(error)


SOURCE = MySQLSource  # what sqlml.plugins.DATASOURCES registers
