"""PostgreSQL through psycopg 3: binary COPY to read and to write."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

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
)
from sqlml.datasources.driver import Driver
from sqlml.datasources.url import DatasourceURL
from sqlml.errors import DatasourceBusy, DatasourceError

if TYPE_CHECKING:
    from sqlml.datasources.postgresql.binary_write import CopyIn

psycopg = Driver("psycopg")

_RELATION_KINDS = {"r": "table", "p": "table", "v": "view", "m": "materialized view",
                   "f": "foreign table", "S": "sequence", "i": "index", "I": "index",
                   "c": "composite type", "t": "TOAST table"}  # fmt: skip
_CANCELLED = "canceling statement due to user request"  # the server's words
_VERSIONED = {"r", "p", "m"}  # relations whose rows have versions: tables, materialized views
# libpq's connection parameters a URL may give (as psql's URLs do), passed on as they are:
# TLS (sslmode=require refuses a server without TLS, verify-full checks its certificate and
# name), time limits, the session's settings. Not the ones that would name another server
# or read a file of settings (host, service, passfile).
_LIBPQ_OPTIONS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword", "sslcrl",
                  "sslcrldir", "sslsni", "ssl_min_protocol_version", "ssl_max_protocol_version",
                  "channel_binding", "gssencmode", "requirepeer", "krbsrvname",
                  "connect_timeout", "application_name", "options", "target_session_attrs",
                  "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
                  "tcp_user_timeout")  # fmt: skip
# How long a statement of a rolled-back transaction waits for a lock another session holds.
LOCK_TIMEOUT = "2s"
# Type OIDs: int2, int4, int8, oid; float4, float8, numeric.
_INTEGER_TYPES = {21, 23, 20, 26}
_FLOAT_TYPES = {700, 701, 1700}


class PostgreSQLSource(Datasource):
    schemes = ("postgresql", "postgres")
    url_example = "{scheme}://user@host:5432/database"
    url_options = _LIBPQ_OPTIONS
    dialect = "postgres"
    param = "%s"
    current_schema = "current_schema()"
    databases_sql = "SELECT datname AS database FROM pg_database WHERE NOT datistemplate ORDER BY 1"
    schema_columns_sql = (
        "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = current_database() AND table_schema NOT IN "
        "('information_schema', 'pg_catalog') AND table_schema NOT LIKE 'pg\\_%' "
        "ORDER BY table_schema, table_name, ordinal_position"
    )
    search_path_sql = (
        "SELECT name FROM unnest(current_schemas(false)) WITH ORDINALITY AS s(name, n) ORDER BY n"
    )
    fingerprint_sql = "SELECT count(*), sum(hashtextextended(t::text, 0)) FROM {table} AS t"
    # The row of the keys as text, hashed (PostgreSQL 11+); abs() of the remainder keeps
    # each part in 0 .. count - 1.
    partitioning = Partitioning("abs(hashtextextended(ROW({keys})::text, 0) % {count})")
    version_sql = "SELECT 'PostgreSQL ' || split_part(current_setting('server_version'), ' ', 1)"
    steps_at_once = 20  # of max_connections' default 100, shared with every other client
    credentials_env = ("PGPASSWORD",)
    column_type_sql = (  # udt_name: the element type of an array
        "data_type, udt_name, character_maximum_length, numeric_precision, numeric_scale"
    )
    types: ClassVar[dict[str, str]] = {"int": "BIGINT", "float": "DOUBLE PRECISION",
                                       "bool": "BOOLEAN", "text": "TEXT", "blob": "BYTEA",
                                       "key": "TEXT"}  # fmt: skip

    def __init__(self, url: DatasourceURL, base_dir: Path | None = None) -> None:
        super().__init__(url, base_dir)
        self._con = _connect(url)
        self._in_transaction = False
        self._copy: CopyIn | None = None  # a write's COPY, open between its batches
        self._interrupts = 0  # interrupts asked so far

    def _fingerprint(self, table: Sequence[str]) -> Any:
        """A table's row versions: each row's place and the transaction that wrote it, hashed
        without reading the values (the rows' text takes 5 times as long). A change of a
        row writes a new version; VACUUM FULL and CLUSTER move rows, a change too. Views
        and foreign tables have no row versions: their rows' text is hashed."""
        found = self.execute(
            "SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [self.quote(table)]
        )
        kind = found.rows[0][0] if found and found.rows else None
        if kind not in _VERSIONED or self._live().info.server_version < 140000:
            return super()._fingerprint(table)
        versions = self.execute(
            "SELECT count(*), bit_xor(hash_record_extended((t.tableoid, t.ctid, t.xmin), 0)) "
            f"FROM {self.quote(table)} AS t"
        )
        return (self.column_types(table), versions.rows if versions else None)

    def stage_parts(self, table: str, select: str, number: str, column: str) -> str:
        """An unlogged table (not written twice, and not kept by a crash) in the parts'
        order, with a BRIN index: the ranges of its pages each part's rows are on."""
        quoted, part = self.quote([table]), self.quote([column])
        self.execute(
            f"CREATE UNLOGGED TABLE {quoted} AS SELECT *, {number} AS {part} "
            f"FROM ({select}) AS sqlml_rows ORDER BY {part}"
        )
        self.execute(f"CREATE INDEX ON {quoted} USING brin ({part})")
        self.execute(f"ANALYZE {quoted}")
        return quoted

    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        try:
            with self._live().cursor() as cursor:
                cursor.execute(sql, tuple(params) or None)
                self.changed_rows = cursor.rowcount if cursor.rowcount >= 0 else None
                if not returns_rows(sql) or cursor.description is None:
                    return None
                return ResultSet([d.name for d in cursor.description], cursor.fetchall())
        except psycopg.errors.LockNotAvailable as error:
            raise DatasourceBusy(f"PostgreSQL: {_message(error)}") from None
        except psycopg.Error as error:
            raise self.located(
                DatasourceError(f"PostgreSQL: {_message(error)}"), error, sql
            ) from None

    def error_offset(self, error: Exception, sql: str) -> int | None:
        """The error's ``position`` field: a character's number in the statement, from 1."""
        diag = getattr(error, "diag", None)
        position = diag.statement_position if diag is not None else None
        return int(position) - 1 if position and 0 < int(position) <= len(sql) else None

    def read_batches(self, select: str, batch_rows: int = BATCH_ROWS) -> Iterator[Columns]:
        """The rows come through binary COPY (:mod:`.binary`), a batch at a time, in a
        read-only transaction (unless the read is part of a transaction already). A result
        with a type psycopg has no binary loader for is read through a server-side cursor.
        An interrupt that came between the read's statements, which the server cannot see,
        stops the read after its next batch."""
        from sqlml.datasources.postgresql.binary import columns_of, enclosable, read_copy

        interrupts = self._interrupts  # one that came between statements, the server missed
        try:
            con = self._live()
            top = con.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            with con.transaction(), con.cursor() as cursor:
                if top:  # a query that tries to write fails, whatever sqlglot made of it
                    con.execute("SET TRANSACTION READ ONLY")
                # a newline before the parenthesis: the SELECT may end in a -- comment
                cursor.execute(f"SELECT * FROM ({enclosable(select)}\n) AS r LIMIT 0")
                columns = columns_of(con, cursor.description or ())
                if columns is None:
                    yield from self._read_cursor(select, batch_rows)
                else:
                    with closing(read_copy(cursor, select, columns, batch_rows)) as batches:
                        for batch in batches:
                            yield batch
                            if self._interrupts != interrupts:
                                raise psycopg.errors.QueryCanceled(_CANCELLED)
        except psycopg.Error as error:
            raise DatasourceError(f"PostgreSQL: {_message(error)}") from None

    def _read_cursor(self, select: str, batch_rows: int) -> Iterator[Columns]:
        """``select``'s rows through a server-side cursor (in the caller's transaction):
        psycopg's values of every type, as text."""
        from sqlml.datasources.arrays import fetch_batches

        with self._con.cursor(name="sqlml_read") as cursor:
            cursor.itersize = batch_rows
            cursor.execute(select)
            kinds = [_kind(d.type_code) for d in cursor.description]
            yield from fetch_batches(cursor, kinds, batch_rows)

    def result_types(self, select: str) -> dict[str, str]:
        """From the result's description: no row is read."""
        try:
            with self._live().cursor() as cursor:
                # a newline before the parenthesis: the SELECT may end in a -- comment
                cursor.execute(f"SELECT * FROM ({select}\n) AS result LIMIT 0")
                return {d.name: d.type_display for d in cursor.description or ()}
        except psycopg.Error as error:
            raise DatasourceError(f"PostgreSQL: {_message(error)}") from None

    def _insert(self, table: str, columns: Columns) -> None:
        """Into a binary COPY (:mod:`.binary_write`) kept open for the next batches of
        the write: the connection's next statement (the write's swap) ends it."""
        from sqlml.datasources.postgresql.binary_write import CopyIn

        names = [self.quote([name]) for name in columns]
        try:
            if self._copy is None or (self._copy.table, self._copy.names) != (table, names):
                self._copy = CopyIn(self._live(), table, names)
            self._copy.write(columns)
        except psycopg.Error as error:
            self._abort_copy(error)
            raise DatasourceError(f"PostgreSQL: {_message(error)}") from None

    def _swap(self, staging: list[str], target: list[str], replace: bool) -> None:
        """Swaps into one table take turns (an advisory lock, held to the write's commit):
        two first writes would otherwise both rename their staging table to the missing
        target."""
        *schema, name = target
        self.execute(
            "SELECT pg_advisory_xact_lock(hashtext('sqlml write'), "
            "hashtext(COALESCE(%s, current_schema()) || '.' || %s))",
            [schema[-1] if schema else None, name],
        )
        super()._swap(staging, target, replace)

    def _widen(self, staging: list[str], column: str, kind: str, wider: str) -> None:
        quoted, sql_type = self.quote([column]), self.types[wider]
        via = "::integer" if kind == "bool" else ""  # booleans cast to numbers through integer
        self.execute(
            f"ALTER TABLE {self.quote(staging)} ALTER COLUMN {quoted} TYPE {sql_type} "
            f"USING {quoted}{via}::{sql_type}"
        )

    def _retype(self, staging: list[str], types: Mapping[str, str]) -> None:
        """Numbers become booleans through their text ('1', '0'): PostgreSQL casts only
        integers of 4 bytes to booleans."""
        changes = ", ".join(
            f"ALTER COLUMN {self.quote([c])} TYPE {t} USING {self.quote([c])}"
            f"{'::text' if t.strip().lower() in ('boolean', 'bool') else ''}::{t}"
            for c, t in types.items()
        )
        self.execute(f"ALTER TABLE {self.quote(staging)} {changes}")

    def describe_target(self, table: Sequence[str]) -> Target | None:
        *schema, name = table
        found = self.execute(
            "SELECT c.relkind, obj_description(c.oid, 'pg_class') FROM pg_class AS c "
            "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
            "WHERE n.nspname = COALESCE(%s, current_schema()) AND c.relname = %s",
            [schema[-1] if schema else None, name],
        )
        if not found or not found.rows:
            return None
        relkind, comment = found.rows[0]
        kind = _RELATION_KINDS.get(relkind, "relation of another kind")
        return Target(kind, kind == "table" and comment == WRITTEN_MARK)

    def create_tables(self, statements: Sequence[str]) -> None:
        """Under a lock: concurrent ``CREATE TABLE IF NOT EXISTS`` of one table may both
        pass the check and then collide in PostgreSQL's catalog."""
        with self.transaction():
            self.execute("SELECT pg_advisory_xact_lock(hashtext('sqlml create tables'))")
            for statement in statements:
                self.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        try:
            con = self._live()
        except psycopg.Error as error:  # a COPY open before, refused
            raise DatasourceError(f"PostgreSQL: {_message(error)}") from None
        self._in_transaction = True
        try:
            with con.transaction():
                try:
                    yield
                except BaseException as error:
                    self._abort_copy(error)
                    raise
                self._live()  # the COPY ended before the commit
        except psycopg.Error as error:  # e.g. the connection was lost
            raise DatasourceError(f"PostgreSQL: {_message(error)}") from None
        finally:
            self._in_transaction = False

    @contextmanager
    def rolled_back(self) -> Iterator[None]:
        """A statement in it waits at most :data:`LOCK_TIMEOUT` for a lock that another
        session holds, then fails with a :class:`DatasourceBusy`."""
        with super().rolled_back():
            self.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
            yield

    @contextmanager
    def scoring_compiled_models(self) -> Iterator[None]:
        """Without JIT compilation: a model compiled into SQL makes a statement costly enough
        for PostgreSQL to compile its expressions with LLVM, which takes ten times longer than
        running them (measured: 30 s against 3 s for 100 trees over 100,000 rows)."""
        shown = self.execute("SELECT current_setting('jit')")
        previous = shown.rows[0][0] if shown and shown.rows else "on"
        self.execute("SELECT set_config('jit', 'off', false)")
        try:
            yield
        finally:
            with suppress(DatasourceError):  # a transaction that failed undoes it itself
                self.execute(f"SELECT set_config('jit', {self.param}, false)", [previous])

    def _live(self) -> psycopg.Connection:
        """The connection, its write's COPY ended; a new one if it was lost (the server
        restarted, the link dropped) outside a transaction. Within one, the loss is the
        transaction's error."""
        if self._copy is not None:
            copy, self._copy = self._copy, None
            copy.finish()
        if self._con.closed:
            if self._in_transaction:
                raise lost_in_transaction(self.url)
            self._con = _connect(self.url)
        return self._con

    def _abort_copy(self, error: BaseException) -> None:
        """End the open COPY, if any, as failed by ``error``; an error ending it (the
        connection lost) gives way to ``error``."""
        copy, self._copy = self._copy, None
        if copy is not None:
            with suppress(psycopg.Error):
                copy.abort(error)

    def _new_reader(self) -> PostgreSQLSource:
        """Reads run in a read-only transaction of their own (:meth:`read_batches`)."""
        return PostgreSQLSource(self.url)

    def _interrupt(self) -> None:
        self._interrupts += 1
        self._con.cancel()

    def close(self) -> None:
        self._copy = None  # a COPY left open is rolled back with its transaction
        self._con.close()


def _connect(url: DatasourceURL) -> psycopg.Connection:
    try:
        return psycopg.connect(
            host=url.host,
            port=url.port or 5432,
            user=url.user or None,
            password=url.password or None,
            dbname=url.path,
            autocommit=True,
            **{"connect_timeout": "10", **dict(url.options)},
        )
    except psycopg.Error as error:
        message = _message(error)
        raise DatasourceError(
            f"cannot connect to {url}: {message}",
            hint="the server offers no TLS: enable it on the server, or choose another "
            "sslmode (psql's are disable, allow, prefer, require, verify-ca, verify-full)"
            if url.option("sslmode") and ("SSL" in message or "sslmode" in message)
            else "check that the server is running and that the URL given with "
            "--datasource or SQLML_DATASOURCE is right",
        ) from None


def _message(error: psycopg.Error) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _kind(type_code: int) -> str:
    if type_code in _INTEGER_TYPES:
        return "int"
    return "float" if type_code in _FLOAT_TYPES else "object"


SOURCE = PostgreSQLSource  # what sqlml.plugins.DATASOURCES registers
