"""DuckDB, the embedded default: a file in the working directory, no server."""

from __future__ import annotations

import copy
import importlib.util
import inspect
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlml import imports
from sqlml.datasources.base import (
    BATCH_ROWS,
    WRITTEN_MARK,
    Columns,
    Datasource,
    FunctionErrors,
    Partitioning,
    QueryFunction,
    ResultSet,
    Target,
    returns_rows,
)
from sqlml.datasources.driver import Driver
from sqlml.datasources.duckdb.cache import trim
from sqlml.datasources.duckdb.floats import shown_rows
from sqlml.datasources.url import DatasourceURL
from sqlml.errors import DatasourceBusy, DatasourceError
from sqlml.runtime.progress import Progress

if TYPE_CHECKING:
    import numpy as np

duckdb = Driver("duckdb")
# DuckDB lets one process at a time open a file: one that another has open (sqlml ui's page
# reading it, another sqlml command) is tried again for this many seconds.
LOCK_WAIT = 2.0
LOCK_RETRY = 0.05
_SETTING = "current_setting('%s')"
_LOCKED = _SETTING % "lock_configuration"
# What DuckDB says of a statement that forbid_file_access refuses.
_FORBIDDEN = ("disabled by configuration", "the configuration has been locked")


class DuckDBSource(Datasource):
    schemes = ("duckdb",)
    file_based = True
    url_example = "{scheme}:///file.duckdb"
    dialect = "duckdb"
    param = "?"
    current_schema = "current_schema()"
    databases_sql = (
        "SELECT database_name AS database FROM duckdb_databases() WHERE NOT internal ORDER BY 1"
    )
    schema_columns_sql = (
        "SELECT table_schema, table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = current_database() AND table_schema NOT IN "
        "('information_schema', 'pg_catalog') AND table_schema NOT LIKE 'pg\\_%' "
        "ORDER BY table_schema, table_name, ordinal_position"
    )
    fingerprint_sql = "SELECT count(*), sum(hash(t)) FROM {table} AS t"
    # DuckDB's hash of values (UBIGINT), the same on every connection and thread.
    partitioning = Partitioning("hash({keys}) % {count}")
    version_sql = "SELECT 'DuckDB ' || version()"
    steps_at_once = 1  # DuckDB opens its file in one process at a time
    calls_python = "batches"  # Arrow functions, a vector of rows a call
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
        self._streams: list[Any] = []  # read_batches' Arrow streams open on the connection
        try:
            self._con = _open(url.path)
        except duckdb.Error as error:
            if _in_use(error):
                raise DatasourceBusy(
                    f"cannot open the DuckDB database {url}: another process has it open "
                    "(DuckDB lets one process at a time open a file)",
                    hint=f"another process has had the file open for over {LOCK_WAIT:g} s: run "
                    "again once it has ended",
                ) from None
            raise DatasourceError(
                f"cannot open the DuckDB database {url}: {error}",
                hint="check the path in --datasource or SQLML_DATASOURCE",
            ) from None
        _parser_done(url.path)
        self._search_files()

    @classmethod
    def statement_type(cls, sql: str) -> str | None:
        """As DuckDB's parser reads ``sql`` (:mod:`.parser`)."""
        from sqlml.datasources.duckdb import parser

        return parser.statement_type(sql)

    @classmethod
    def parse_on(cls, url: DatasourceURL | None) -> None:
        """DuckDB's parser reads with a connection to the run's file, whose database the
        run's connections then share, instead of creating one of its own."""
        from sqlml.datasources.duckdb import parser

        parser.parse_on(None if url is None else url.path)

    def for_workers(self, selects: Mapping[str, str], folder: Path) -> tuple[dict[str, str], str]:
        """DuckDB opens its file in one process at a time: the workers read Parquet copies
        of the rows made here (``<name>.parquet`` in ``folder``), each with an in-memory
        DuckDB of its own."""
        copies = {
            name: self._copied(select, folder / f"{name}.parquet")
            for name, select in selects.items()
        }
        return copies, f"{self.schemes[0]}:///:memory:"

    def _copied(self, select: str, path: Path) -> str:
        """A SELECT of a Parquet copy at ``path`` of ``select``'s rows."""
        literal = "'" + str(path).replace("'", "''") + "'"
        self.execute(f"COPY ({select}) TO {literal} (FORMAT parquet)")
        return f"SELECT * FROM read_parquet({literal})"

    def read_files_from(self, base_dir: Path) -> None:
        super().read_files_from(base_dir)
        self._search_files()

    def forbid_file_access(self) -> None:
        """DuckDB's ``enable_external_access`` off (no file read or written, no database
        attached, no extension installed or loaded), then its configuration locked so that no
        statement turns it on again. Both are the database's: every connection to the file
        in this process has them until the last one closes."""
        found = self.execute(f"SELECT {_SETTING % 'enable_external_access'}, {_LOCKED}")
        if found is not None and found.rows[0] == (False, True):  # done by another connection
            return
        self.execute("SET enable_external_access = false")
        self.execute("SET lock_configuration = true")

    def _search_files(self) -> None:
        """Relative file paths in the program resolve next to it; but on a database whose
        configuration is locked (:meth:`forbid_file_access`: it reads no file, and refuses
        any setting)."""
        if self.base_dir is None:
            return
        locked = self.execute(f"SELECT {_LOCKED}")
        if locked is None or not locked.rows[0][0]:
            self.execute("SET file_search_path = ?", [str(self.base_dir.resolve())])

    def _new_reader(self) -> DuckDBSource:
        """A connection of its own to the same database (outside the write's transaction,
        whose uncommitted rows DuckDB numbers apart)."""
        reader = copy.copy(self)
        reader._con, reader._readers, reader._streams = self._con.cursor(), [], []
        reader._search_files()
        return reader

    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        try:
            self._release()
            cursor = self._con.execute(sql, list(params) or None)
            if not returns_rows(sql):
                counted = [d[0] for d in cursor.description or ()] == ["Count"]
                row = cursor.fetchone() if counted else None
                self.changed_rows = int(row[0]) if row else None
                return None
            columns, types = zip(*((d[0], d[1]) for d in cursor.description), strict=True)
            return ResultSet(list(columns), shown_rows(types, cursor.fetchall()))
        except duckdb.Error as error:
            raise self.located(_error(error), error, sql) from None

    def error_offset(self, error: Exception, sql: str) -> int | None:
        """From the ``LINE n:`` of DuckDB's message, a window of the line (``...`` where cut),
        and the carets under the mistake."""
        found = _LINE.search(str(error))
        if found is None:
            return None
        number, shown, caret = int(found["number"]), found["shown"], len(found["blank"])
        caret -= len(found["line"])
        if shown.startswith("..."):
            shown, caret = shown[3:], caret - 3
        shown = shown.removesuffix("...")
        lines = sql.split("\n")
        if not 0 < number <= len(lines) or (start := lines[number - 1].find(shown)) < 0:
            return None
        return sum(len(line) + 1 for line in lines[: number - 1]) + start + caret

    def located(self, raised: DatasourceError, error: Exception, sql: str) -> DatasourceError:
        """With the message without DuckDB's ``LINE n:`` and carets, once they are read."""
        super().located(raised, error, sql)
        if raised.offset is not None:
            raised.unplaced = _LINE.sub("", raised.message).rstrip()
        return raised

    def read(self, select: str, reporter: Progress | None = None) -> Columns:
        """The whole result at once: DuckDB fills the arrays as the rows come (a relation's
        ``fetchnumpy`` is faster but keeps every row before converting them: twice the
        result's size at its peak); a column is copied only to hold NULLs (:func:`_unmasked`)."""
        reporter = reporter or Progress()
        try:
            self._release()
            with reporter.stage("reading"):
                data = self._con.execute(select).fetchnumpy()
                reporter.advance(len(next(iter(data.values()), ())))
        except duckdb.Error as error:
            raise _error(error) from None
        return {name: _unmasked(values) for name, values in data.items()}

    def result_types(self, select: str) -> dict[str, str]:
        found = self.execute(f"DESCRIBE {select}")
        return {row[0]: row[1] for row in found.rows} if found else {}

    def read_batches(self, select: str, batch_rows: int = BATCH_ROWS) -> Iterator[Columns]:
        """The query's own result, streamed as Arrow record batches (pyarrow installed):
        memory holds about one batch whatever the rows (and DuckDB's cache of the blocks
        read is trimmed between batches: :mod:`duckdb_cache`). Each batch of ``batch_rows`` rows
        is converted to arrays by DuckDB on a cursor of its own, as :meth:`read` converts
        them (but a UUID, which DuckDB's Arrow export makes text). Without pyarrow, the
        result is materialised in a temporary table (spilled to disk when memory runs
        short) and fetched by ranges of row ids."""
        try:
            self._release()
            if _arrow_installed():
                yield from self._arrow_batches(select, batch_rows)
            else:
                yield from self._table_batches(select, batch_rows)
        except duckdb.Error as error:
            raise _error(error) from None

    def _arrow_batches(self, select: str, batch_rows: int) -> Iterator[Columns]:
        pyarrow = imports.load("pyarrow")
        converter = self._con.cursor()  # the stream holds self._con until it is closed
        stream = self._con.sql(select).to_arrow_reader(batch_rows)
        self._streams.append(stream)
        try:
            pending: list[Any] = []  # record batches not yet yielded, fewer than batch_rows rows
            count, yielded = 0, False
            for record in stream:
                pending.append(record)
                count += record.num_rows
                while count >= batch_rows:
                    table = pyarrow.Table.from_batches(pending, stream.schema)
                    yield _arrays(converter, table.slice(0, batch_rows))
                    pending, count = table.slice(batch_rows).to_batches(), count - batch_rows
                    yielded = True
                    trim(converter, duckdb)  # the blocks read so far: memory stays flat
            if count or not yielded:  # the rest; an empty result's columns
                yield _arrays(converter, pyarrow.Table.from_batches(pending, stream.schema))
        except (pyarrow.ArrowException, OSError) as error:  # DuckDB's, through the stream
            if stream in self._streams:  # e.g. "INTERRUPT Error" (a timeout, Ctrl-C)
                raise DatasourceError(f"DuckDB: {error}") from None
            raise DatasourceError(
                "DuckDB: the batches of a SELECT stopped: another statement ran on the "
                "connection while they were read, and DuckDB runs one at a time",
                hint="read the batches on a connection of their own (concurrent_reader)",
            ) from None
        finally:
            if stream in self._streams:
                self._streams.remove(stream)
            stream.close()
            converter.close()

    def _release(self) -> None:
        """Close the batch streams open on the connection: DuckDB runs one statement at a
        time, and a stream whose reader stopped without closing it (an error, a cancellation
        that left its generator suspended) would hold the connection until collected."""
        while self._streams:
            self._streams.pop().close()

    def _table_batches(self, select: str, batch_rows: int) -> Iterator[Columns]:
        table = self.quote([f"sqlml_batches_{uuid.uuid4().hex[:12]}"])
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

    def _insert(self, table: str, columns: Columns) -> None:
        view = f"sqlml_columns_{uuid.uuid4().hex[:12]}"
        try:
            self._release()
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
        with suppress(duckdb.ConnectionException):  # closed meanwhile: nothing runs on it
            self._con.interrupt()

    @contextmanager
    def functions(self, functions: Sequence[QueryFunction]) -> Iterator[None]:
        """Each function registered on the connection as an Arrow function (DuckDB hands it
        a vector of rows at a time), NULLs passed in as missing values."""
        if not functions:
            yield
            return
        pyarrow, errors = imports.load("pyarrow"), FunctionErrors()
        arrow_types = {"int": "int64", "float": "float64", "bool": "bool_", "text": "string"}
        try:
            for function in functions:
                returns = getattr(pyarrow, arrow_types[function.returns])()

                def call(*arrays: Any, function: QueryFunction = function, returns: Any = returns):
                    values = [array.to_numpy(zero_copy_only=False) for array in arrays]
                    return pyarrow.array(function.call(values), type=returns)

                self._con.create_function(
                    function.name,
                    _taking(len(function.parameters), errors.kept(call)),
                    [self.types[kind] for kind in function.parameters],
                    self.types[function.returns],
                    type="arrow",
                    null_handling="special",
                )
            with errors.raised():
                yield
        finally:
            for function in functions:
                with suppress(duckdb.Error):  # never registered: an earlier one failed
                    self._con.remove_function(function.name)

    def close(self) -> None:
        self._release()
        self._con.close()


def _taking(count: int, call: Callable[..., Any]) -> Callable[..., Any]:
    """``call`` (of any number of arguments) as DuckDB counts a function's parameters: by
    its signature."""
    positional = inspect.Parameter.POSITIONAL_ONLY
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(f"arg{i}", positional) for i in range(count)]
    )
    return call


def _open(path: str) -> Any:
    """A connection to the DuckDB database at ``path``, waiting up to :data:`LOCK_WAIT`
    seconds while another process has the file open."""
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            return duckdb.connect(path)
        except duckdb.Error as error:
            if not _in_use(error) or time.monotonic() >= deadline:
                raise
        time.sleep(LOCK_RETRY)


def _parser_done(path: str) -> None:
    """The run has the DuckDB file at ``path`` open: DuckDB's parser, should it hold a
    connection to it (:func:`.parser.parse_on`), lets it go."""
    parser = imports.loaded("sqlml.datasources.duckdb.parser")  # not loaded: it holds none
    if parser is not None:
        parser.opened(path)


# Where DuckDB's message shows the mistake: the line (or a window of it), carets under it.
_LINE = re.compile(r"\n*(?P<line>LINE (?P<number>\d+): )(?P<shown>[^\n]*)\n(?P<blank> *)\^+\s*$")


def _error(error: Exception) -> DatasourceError:
    """DuckDB's ``error`` as sqlml's; one of a statement :meth:`forbid_file_access` refused
    says so."""
    forbidden = any(words in str(error) for words in _FORBIDDEN)
    hint = (
        "statements here may not read or write files, attach databases, load extensions or "
        "change settings (sqlml ui --no-file-access)"
        if forbidden
        else None
    )
    return DatasourceError(f"DuckDB: {error}", hint=hint)


def _in_use(error: Exception) -> bool:
    return "Could not set lock" in str(error)


def _arrow_installed() -> bool:
    return importlib.util.find_spec("pyarrow") is not None


def _arrays(converter: Any, table: Any) -> Columns:
    """An Arrow table's columns as :meth:`DuckDBSource.read` has them: DuckDB scans the
    table where it lies and converts it as it converts a result."""
    return {
        name: _unmasked(values) for name, values in converter.from_arrow(table).fetchnumpy().items()
    }


def _unmasked(values: np.ndarray) -> np.ndarray:
    """NULLs become NaN in numeric columns (float64) and None in the others; a column without
    NULLs is the array DuckDB made, and a float64 one with NULLs too (NaN written in)."""
    # DuckDB makes a masked array only for a column with NULLs, having imported numpy.ma to
    # make it: until then a column is a plain array, and numpy.ma (40 ms to import) unneeded.
    masked = imports.loaded("numpy.ma")
    if masked is None or not isinstance(values, masked.MaskedArray):
        return values
    import numpy as np  # here: a statement that reads no arrays does not load numpy

    mask = np.ma.getmaskarray(values)
    if not mask.any():
        return values.data
    if values.dtype.kind in "iufb":
        floats = values.data if values.dtype == np.float64 else values.data.astype(np.float64)
        floats[mask] = np.nan  # DuckDB's array, or the one copy made above
        return floats
    array = values.data.astype(object)  # filled(None) would fill with the '?' fill_value
    array[mask] = None
    return array


SOURCE = DuckDBSource  # what sqlml.plugins.DATASOURCES registers
