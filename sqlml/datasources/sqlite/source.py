"""SQLite through the standard library: a file, no server."""

from __future__ import annotations

import hashlib
import marshal
import math
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from sqlml.datasources.base import (
    BATCH_ROWS,
    WRITTEN_MARK,
    Columns,
    Datasource,
    FunctionErrors,
    QueryFunction,
    ResultSet,
    Target,
    like_prefix,
    returns_rows,
)
from sqlml.datasources.driver import Driver
from sqlml.datasources.url import DatasourceURL
from sqlml.errors import DatasourceError
from sqlml.tables import HELPER_MARK

sqlite3 = Driver("sqlite3")
_MARK_COMMENT = f"/* {WRITTEN_MARK} */"
# SQLite's math functions that models compiled to SQL call (EXP for a logistic link, POWER
# for a distance), which a build of SQLite may leave out: TensorFlow brings its own, and a
# process that loads it before the sqlite3 module reads SQLite through that build.
_MATH = {"exp": (1, math.exp), "ln": (1, math.log), "power": (2, math.pow),
         "pow": (2, math.pow), "sqrt": (1, math.sqrt)}  # fmt: skip


class SQLiteSource(Datasource):
    schemes = ("sqlite",)
    file_based = True
    url_example = "{scheme}:///file.db"
    dialect = "sqlite"
    single_writer = True
    # partitioning: the base class's rank of the keys (SQLite has no hash function)
    version_sql = "SELECT 'SQLite ' || sqlite_version()"
    steps_at_once = 1  # one writer at a time
    calls_python = "rows"  # SQLite's functions of Python take a row a call
    columns_sql = (
        "SELECT m.name, p.name, p.type FROM sqlite_master AS m, pragma_table_info(m.name) AS p "
        "WHERE m.type IN ('table', 'view') ORDER BY m.name, p.cid"
    )
    param = "?"
    current_schema = "'main'"
    types: ClassVar[dict[str, str]] = {"int": "INTEGER", "float": "REAL", "bool": "INTEGER",
                                       "text": "TEXT", "blob": "BLOB", "key": "TEXT"}  # fmt: skip

    def __init__(self, url: DatasourceURL, base_dir: Path | None = None) -> None:
        super().__init__(url, base_dir)
        try:
            self._con = sqlite3.connect(url.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as error:
            raise DatasourceError(
                f"cannot open the SQLite database {url}: {error}",
                hint="check the path in --datasource or SQLML_DATASOURCE",
            ) from None
        self._forbidden = False  # forbid_file_access was called
        self._con.create_aggregate(_ROW_HASH, -1, _RowHash)
        _ensure_math(self._con)

    def table_fingerprint(self, table: Sequence[str]) -> str | None:
        """The table's (or view's) columns and a hash of its rows, computed in Python as
        SQLite has no hash function: it reads every row. None if there is no such table.
        Names are compared as SQLite compares them: regardless of case."""
        *schema, name = table
        master = self.quote([*schema[-1:], "sqlite_master"])
        found = self.execute(
            f"SELECT name FROM {master} WHERE type IN ('table', 'view') "
            "AND name = ? COLLATE NOCASE",
            [name],
        )
        if not found or not found.rows:
            return None
        stored = [*schema, found.rows[0][0]]
        columns = self.execute(
            "SELECT name, type FROM pragma_table_info(?, ?)", [stored[-1], _schema(stored)]
        )
        names = ", ".join(self.quote([column]) for column, _ in columns.rows) if columns else ""
        rows = self.execute(f"SELECT count(*), {_ROW_HASH}({names}) FROM {self.quote(stored)}")
        return repr((columns.rows if columns else [], rows.rows if rows else []))

    def forbid_file_access(self) -> None:
        """An authorizer, which no statement can remove, refuses ``ATTACH`` (it opens or
        creates any file; ``VACUUM INTO`` writes one so) and ``load_extension()``."""
        self._con.set_authorizer(_no_files)
        self._forbidden = True

    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        try:
            cursor = self._con.execute(sql, tuple(params))
            self.changed_rows = cursor.rowcount if cursor.rowcount >= 0 else None
            if not returns_rows(sql) or cursor.description is None:
                return None
            return ResultSet([d[0] for d in cursor.description], cursor.fetchall())
        except sqlite3.Error as error:
            denied = any(words in str(error) for words in ("not authorized", "authorization"))
            hint = _FORBIDDEN_HINT if self._forbidden and denied else None
            raise DatasourceError(f"SQLite: {error}", hint=hint) from None

    def read_batches(self, select: str, batch_rows: int = BATCH_ROWS) -> Iterator[Columns]:
        from sqlml.datasources.arrays import fetch_batches

        try:
            cursor = self._con.execute(select)
            try:
                yield from fetch_batches(cursor, ["any"] * len(cursor.description), batch_rows)
            finally:
                cursor.close()
        except sqlite3.Error as error:
            raise DatasourceError(f"SQLite: {error}") from None

    def result_types(self, select: str) -> dict[str, str]:
        """The declared types of the columns of a temporary view of ``select`` (a column
        taken from a table has that column's type; a computed one has none)."""
        view = f"sqlml_types_{uuid.uuid4().hex[:12]}"
        self.execute(f"CREATE TEMP VIEW {self.quote([view])} AS {select}")
        try:
            found = self.execute("SELECT name, type FROM pragma_table_info(?, 'temp')", [view])
        finally:
            self.execute(f"DROP VIEW IF EXISTS temp.{self.quote([view])}")
        return {name: sql_type for name, sql_type in found.rows if sql_type} if found else {}

    def table_exists(self, table: Sequence[str]) -> bool:
        *schema, name = table
        master = self.quote([*schema[-1:], "sqlite_master"])
        found = self.execute(
            f"SELECT COUNT(*) FROM {master} WHERE type IN ('table', 'view') AND name = ?", [name]
        )
        return bool(found and found.rows[0][0])

    def _insert(self, table: str, columns: Columns) -> None:
        """In the write's transaction: in autocommit each row would be a commit of its own,
        a disk sync per row."""
        from sqlml.datasources.arrays import python_values

        placeholders = ", ".join([self.param] * len(columns))
        rows = zip(*(python_values(values) for values in columns.values()), strict=True)
        try:
            self._con.executemany(f"INSERT INTO {table} VALUES ({placeholders})", rows)
        except sqlite3.Error as error:
            raise DatasourceError(f"SQLite: {error}") from None

    def _create_staging(self, staging: list[str], definition: str) -> None:
        """The mark is a comment in the table's definition, which SQLite keeps (also when
        the table is renamed): SQLite has no table comments."""
        self.execute(f"CREATE TABLE {self.quote(staging)} ({definition} {_MARK_COMMENT})")

    def _widen(self, staging: list[str], column: str, kind: str, wider: str) -> None:
        """Nothing to do: a SQLite column holds values of any type."""

    def _retype(self, staging: list[str], types: Mapping[str, str]) -> None:
        """SQLite cannot change a column's type: the staging table is made again with the
        types, its values converted by their columns' affinities."""
        found = self.execute(
            "SELECT name, type FROM pragma_table_info(?, ?)", [staging[-1], _schema(staging)]
        )
        declared = found.rows if found else []
        definition = ", ".join(
            f"{self.quote([name])} {types.get(name, sql_type)}" for name, sql_type in declared
        )
        retyped = [*staging[:-1], f"{staging[-1]}_t"]
        self._create_staging(retyped, definition)
        self.execute(f"INSERT INTO {self.quote(retyped)} SELECT * FROM {self.quote(staging)}")
        self.execute(f"DROP TABLE {self.quote(staging)}")
        self.execute(f"ALTER TABLE {self.quote(retyped)} RENAME TO {self.quote(staging[-1:])}")

    def describe_target(self, table: Sequence[str]) -> Target | None:
        """Names are compared as SQLite compares them: regardless of case."""
        *schema, name = table
        master = self.quote([*schema[-1:], "sqlite_master"])
        found = self.execute(
            f"SELECT type, sql FROM {master} WHERE type IN ('table', 'view') "
            "AND name = ? COLLATE NOCASE",
            [name],
        )
        if not found or not found.rows:
            return None
        kind, sql = found.rows[0]
        return Target(kind, kind == "table" and (sql or "").endswith(f"{_MARK_COMMENT})"))

    def _helper_tables(self, schema: str | None, prefix: str) -> list[str]:
        master = self.quote([schema, "sqlite_master"] if schema else ["sqlite_master"])
        found = self.execute(
            f"SELECT name FROM {master} WHERE type = 'table' AND name LIKE ? ESCAPE '!'",
            [like_prefix(prefix + HELPER_MARK)],
        )
        return [name for (name,) in found.rows] if found else []

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def _interrupt(self) -> None:
        self._con.interrupt()

    @contextmanager
    def functions(self, functions: Sequence[QueryFunction]) -> Iterator[None]:
        """Each function registered on the connection, called a row at a time with the
        row's values as the reader types a batch of them."""
        from sqlml.datasources.arrays import batch_array, inferred_kind, python_values

        errors = FunctionErrors()

        def per_row(function: QueryFunction) -> Any:
            def call(*values: Any) -> Any:
                arrays = [batch_array([value], inferred_kind({type(value)})) for value in values]
                return python_values(function.call(arrays))[0]

            return errors.kept(call)

        try:
            for function in functions:
                self._con.create_function(
                    function.name, len(function.parameters), per_row(function), deterministic=True
                )
            with errors.raised():
                yield
        finally:
            for function in functions:
                self._con.create_function(function.name, len(function.parameters), None)

    def close(self) -> None:
        self._con.close()


_ROW_HASH = "sqlml_row_hash"
_FORBIDDEN_HINT = (
    "statements here may not attach databases or load extensions (sqlml ui --no-file-access)"
)


def _no_files(action: int, first: str | None, second: str | None, *_: str | None) -> int:
    """SQLite's authorizer of a connection that may not open files or load code: ``ATTACH``
    (and ``VACUUM INTO``) and the function ``load_extension`` are denied."""
    refused = action == sqlite3.SQLITE_ATTACH or (
        action == sqlite3.SQLITE_FUNCTION and (second or "").lower() == "load_extension"
    )
    return sqlite3.SQLITE_DENY if refused else sqlite3.SQLITE_OK


class _RowHash:
    """An aggregate of SQLite's: the sum, modulo 2**64, of each row's BLAKE2b hash (of the
    row's values with their types, as ``marshal`` writes them: C speed, no code run), as
    text. Order-independent; equal rows count each. 1.9 s for 1,000,000 rows of 5 REALs,
    where reading them takes 4.4 s."""

    def __init__(self) -> None:
        self.total = 0

    def step(self, *values: Any) -> None:
        digest = hashlib.blake2b(marshal.dumps(values), digest_size=8).digest()
        self.total += int.from_bytes(digest, "big")

    def finalize(self) -> str:
        return str(self.total % (1 << 64))


def _schema(table: Sequence[str]) -> str:
    """The schema (attached database) of a possibly qualified table name."""
    return table[-2] if len(table) > 1 else "main"


SOURCE = SQLiteSource  # what sqlml.plugins.DATASOURCES registers


def _ensure_math(con: Any) -> None:
    """Give ``con`` the math functions of :data:`_MATH` its SQLite lacks, as SQLite's own
    behave: NULL in, NULL out; outside their domain, NULL; too large, infinity."""
    try:
        con.execute("SELECT exp(0), ln(1), power(2, 2), pow(2, 2), sqrt(4)")
    except sqlite3.OperationalError:
        for name, (arity, function) in _MATH.items():
            con.create_function(name, arity, _null_safe(function), deterministic=True)


def _null_safe(function: Any) -> Any:
    def call(*args: float | None) -> float | None:
        if any(arg is None for arg in args):
            return None
        try:
            return function(*args)
        except ValueError:
            return None
        except OverflowError:
            return math.inf

    return call
