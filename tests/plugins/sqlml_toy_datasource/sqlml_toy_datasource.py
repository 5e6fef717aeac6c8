"""ToySQL, a database sqlml does not know: files opened with the standard library's sqlite3
by this module, under the URL scheme ``toysql``, in a SQL dialect of its own (``toysql``,
registered with sqlglot here), with its own catalog queries and its own SQL wherever SQL
differs by database: a hash function of its own numbers the parts of ``train.workers``, a
function of its own tells its version.

A subclass of sqlml's ``Datasource`` base class, not of a built-in datasource: nothing it
does comes from a table keyed by another database's name.
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from sqlglot.dialects.sqlite import SQLite

from sqlml.datasources.arrays import fetch_batches, python_values
from sqlml.datasources.base import (
    BATCH_ROWS,
    WRITTEN_MARK,
    Columns,
    Datasource,
    Partitioning,
    ResultSet,
    Target,
    like_prefix,
    returns_rows,
)
from sqlml.datasources.url import DatasourceURL
from sqlml.errors import DatasourceError
from sqlml.tables import HELPER_MARK

VERSION = "0.1"
_MARK = f"/* {WRITTEN_MARK} */"  # ends the definition of a table sqlml wrote


class ToySQL(SQLite):
    """sqlglot's dialect ``toysql`` (sqlglot registers a Dialect subclass by its name)."""


class ToySource(Datasource):
    """A ToySQL file: ``toysql:///path/to/file``."""

    schemes = ("toysql",)
    file_based = True
    url_example = "{scheme}:///file.toy"
    dialect = "toysql"
    param = "?"
    current_schema = "'main'"
    single_writer = True
    types: ClassVar[dict[str, str]] = {
        "int": "INTEGER",
        "float": "REAL",
        "bool": "INTEGER",
        "text": "TEXT",
        "blob": "BLOB",
        "key": "TEXT",
    }
    columns_sql = (
        "SELECT m.name, c.name, c.type FROM sqlite_schema AS m, pragma_table_info(m.name) AS c "
        "WHERE m.type IN ('table', 'view') ORDER BY m.name, c.cid"
    )
    partitioning = Partitioning("toy_part({keys}) % {count}")
    version_sql = "SELECT 'ToySQL ' || toy_version()"
    steps_at_once = 3
    credentials_env = ("TOY_PASSWORD",)

    def __init__(self, url: DatasourceURL, base_dir: Path | None = None) -> None:
        super().__init__(url, base_dir)
        try:
            self._con = sqlite3.connect(url.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as error:
            raise DatasourceError(f"cannot open the ToySQL file {url}: {error}") from None
        self._con.create_function("toy_part", -1, _part, deterministic=True)
        self._con.create_function("toy_version", 0, lambda: VERSION, deterministic=True)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        try:
            cursor = self._con.execute(sql, tuple(params))
        except sqlite3.Error as error:
            raise DatasourceError(f"ToySQL: {error}") from None
        if not returns_rows(sql) or cursor.description is None:
            return None
        return ResultSet([d[0] for d in cursor.description], cursor.fetchall())

    def read_batches(self, select: str, batch_rows: int = BATCH_ROWS) -> Iterator[Columns]:
        try:
            cursor = self._con.execute(select)
            try:
                yield from fetch_batches(cursor, ["any"] * len(cursor.description), batch_rows)
            finally:
                cursor.close()
        except sqlite3.Error as error:
            raise DatasourceError(f"ToySQL: {error}") from None

    def _insert(self, table: str, columns: Columns) -> None:
        rows = zip(*(python_values(values) for values in columns.values()), strict=True)
        marks = ", ".join([self.param] * len(columns))
        try:
            self._con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        except sqlite3.Error as error:
            raise DatasourceError(f"ToySQL: {error}") from None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.execute("BEGIN")
        try:
            yield
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def close(self) -> None:
        self._con.close()

    # -- its catalog --------------------------------------------------------------------------
    def _schema_entry(self, table: Sequence[str]) -> tuple[str, str] | None:
        """(type, definition) of the table or view ``table``, its name's case ignored."""
        found = self.execute(
            "SELECT type, sql FROM sqlite_schema WHERE type IN ('table', 'view') "
            "AND name = ? COLLATE NOCASE",
            [table[-1]],
        )
        return (found.rows[0][0], found.rows[0][1] or "") if found and found.rows else None

    def table_exists(self, table: Sequence[str]) -> bool:
        return self._schema_entry(table) is not None

    def describe_target(self, table: Sequence[str]) -> Target | None:
        found = self._schema_entry(table)
        if found is None:
            return None
        kind, definition = found
        return Target(kind, kind == "table" and definition.endswith(f"{_MARK})"))

    def _helper_tables(self, schema: str | None, prefix: str) -> list[str]:
        found = self.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE ? ESCAPE '!'",
            [like_prefix(prefix + HELPER_MARK)],
        )
        return [name for (name,) in found.rows] if found else []

    # -- writes ---------------------------------------------------------------------------------
    def _create_staging(self, staging: list[str], definition: str) -> None:
        """The mark ends the table's definition, which the file keeps through a rename."""
        self.execute(f"CREATE TABLE {self.quote(staging)} ({definition} {_MARK})")

    def _widen(self, staging: list[str], column: str, kind: str, wider: str) -> None:
        """Nothing to do: a column holds values of any type."""


def _part(*keys: Any) -> int:
    """ToySQL's hash of values: CRC-32 of their text."""
    return zlib.crc32(repr(keys).encode())
