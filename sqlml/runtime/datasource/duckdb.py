"""DuckDB, the embedded default: a file in the working directory, no server."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sqlml.errors import DatasourceError
from sqlml.runtime.datasource.base import (
    BATCH_ROWS,
    WRITTEN_MARK,
    Columns,
    Datasource,
    ResultSet,
    Target,
    returns_rows,
)
from sqlml.runtime.datasource.driver import Driver
from sqlml.runtime.datasource.url import DatasourceURL
from sqlml.runtime.progress import Progress

duckdb = Driver("duckdb")


class DuckDBSource(Datasource):
    schemes = ("duckdb",)
    file_based = True
    url_example = "{scheme}:///file.duckdb"
    dialect = "duckdb"
    param = "?"
    current_schema = "current_schema()"
    fingerprint_sql = "SELECT count(*), sum(hash(t)) FROM {table} AS t"
    types: ClassVar[dict[str, str]] = {
        "int": "BIGINT",
        "float": "DOUBLE",
        "bool": "BOOLEAN",
        "text": "VARCHAR",
        "blob": "BLOB",
        "key": "VARCHAR",
    }

    def __init__(self, url: DatasourceURL, base_dir: Path | None = None) -> None:
        super().__init__(url, base_dir)
        try:
            self._con = duckdb.connect(url.path)
        except duckdb.Error as error:
            in_use = "Could not set lock" in str(error)  # one process opens a file at a time
            raise DatasourceError(
                f"cannot open the DuckDB database {url}: {error}",
                hint="another process has the file open: run again once it has ended"
                if in_use
                else "check the path in --datasource or SQLML_DATASOURCE",
            ) from None
        self._search_files()

    def _search_files(self) -> None:
        if self.base_dir is not None:  # relative file paths in the program resolve next to it
            self.execute("SET file_search_path = ?", [str(self.base_dir.resolve())])

    def _new_reader(self) -> DuckDBSource:
        """A connection of its own to the same database (outside the write's transaction,
        whose uncommitted rows DuckDB numbers apart)."""
        reader = copy.copy(self)
        reader._con, reader._readers = self._con.cursor(), []
        reader._search_files()
        return reader

    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        try:
            cursor = self._con.execute(sql, list(params) or None)
            if not returns_rows(sql):
                return None
            return ResultSet([d[0] for d in cursor.description], cursor.fetchall())
        except duckdb.Error as error:
            raise DatasourceError(f"DuckDB: {error}") from None

    def read(self, select: str, reporter: Progress | None = None) -> Columns:
        """The whole result at once: DuckDB fills the arrays itself (what joined batches hold)."""
        reporter = reporter or Progress()
        try:
            with reporter.stage("reading"):
                data = self._con.execute(select).fetchnumpy()
                reporter.advance(len(next(iter(data.values()), ())))
        except duckdb.Error as error:
            raise DatasourceError(f"DuckDB: {error}") from None
        return {name: _unmasked(values) for name, values in data.items()}

    def result_types(self, select: str) -> dict[str, str]:
        found = self.execute(f"DESCRIBE {select}")
        return {row[0]: row[1] for row in found.rows} if found else {}

    def read_batches(self, select: str, batch_rows: int = BATCH_ROWS) -> Iterator[Columns]:
        """The result is materialised in a temporary table (DuckDB's buffer manager spills it
        to disk when memory runs short), then fetched as arrays by ranges of row ids."""
        table = self.quote([f"sqlml_batches_{uuid.uuid4().hex[:12]}"])
        try:
            self._con.execute(f"CREATE TEMPORARY TABLE {table} AS {select}")
            try:
                rows = self._con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for start in range(0, max(rows, 1), batch_rows):
                    data = self._con.execute(
                        f"SELECT * FROM {table} WHERE rowid >= ? AND rowid < ? ORDER BY rowid",
                        [start, start + batch_rows],
                    ).fetchnumpy()
                    yield {name: _unmasked(values) for name, values in data.items()}
            finally:
                self._con.execute(f"DROP TABLE IF EXISTS {table}")
        except duckdb.Error as error:
            raise DatasourceError(f"DuckDB: {error}") from None

    def _insert(self, table: str, columns: Columns) -> None:
        view = f"sqlml_columns_{uuid.uuid4().hex[:12]}"
        try:
            self._con.register(view, columns)
            try:
                self.execute(f"INSERT INTO {table} SELECT * FROM {view}")
            finally:
                self._con.unregister(view)
        except duckdb.Error as error:  # e.g. interrupted (a timeout) while registering
            raise DatasourceError(f"DuckDB: {error}") from None

    def describe_target(self, table: Sequence[str]) -> Target | None:
        """Names are compared as DuckDB compares them: regardless of case."""
        *schema, name = table
        found = self.execute(
            "SELECT 'table', comment FROM duckdb_tables() WHERE database_name = "
            "current_database() AND schema_name = COALESCE(?, current_schema()) "
            "AND lower(table_name) = lower(?) UNION ALL "
            "SELECT 'view', comment FROM duckdb_views() WHERE database_name = "
            "current_database() AND schema_name = COALESCE(?, current_schema()) "
            "AND lower(view_name) = lower(?)",
            [schema[-1] if schema else None, name] * 2,
        )
        if not found or not found.rows:
            return None
        kind, comment = found.rows[0]
        return Target(kind, kind == "table" and comment == WRITTEN_MARK)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def _interrupt(self) -> None:
        self._con.interrupt()

    def close(self) -> None:
        self._con.close()


def _unmasked(values: np.ndarray) -> np.ndarray:
    """NULLs become NaN in numeric columns and None in the others."""
    if not isinstance(values, np.ma.MaskedArray):
        return values
    if not values.mask.any():
        return values.data
    if values.dtype.kind in "iufb":
        return values.astype(np.float64).filled(np.nan)
    array = values.data.astype(object)  # filled(None) would fill with the '?' fill_value
    array[values.mask] = None
    return array
