"""What every datasource offers: run SQL, read columns, write tables atomically.

Each database is a small subclass that overrides only what differs: its driver calls,
identifier quoting, type names and how a table is replaced in one step. Its folder declares
it (``source.py``'s ``SOURCE``; a plugin, an entry point of ``sqlml.datasources``) and
``connect`` opens the URLs of its ``schemes`` with it: nothing else needs editing to add a
database.
"""

from __future__ import annotations

import re
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from sqlml.datasources.url import DatasourceURL
from sqlml.errors import CheckError, DatasourceError, SqlmlError
from sqlml.runtime.cancel import Token
from sqlml.runtime.progress import Progress
from sqlml.tables import HELPER_MARK, is_own_table

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np

# Columns of a result: name -> 1-D array (float64/int64/bool, or object for text). numpy is
# imported where arrays are built (:mod:`~sqlml.datasources.arrays`), not here.
Columns = dict[str, "np.ndarray"]

BATCH_ROWS = 65_536  # rows per batch read
WRITTEN_MARK = "written by sqlml"  # the comment of every table a sqlml write made

# Statements whose result rows are shown to the user.
_QUERY_WORDS = {
    "checksum",
    "select",
    "with",
    "values",
    "show",
    "describe",
    "desc",
    "explain",
    "pragma",
    "from",
    "table",
    "summarize",
    "call",
}


@dataclass(frozen=True)
class QueryFunction:
    """A function of sqlml's that the statements run in this process call by ``name`` (a
    model's predictions: ``PREDICT`` on DuckDB and SQLite). ``call`` takes one array a
    parameter, the rows of a batch as :meth:`Datasource.read` gives them (NULL as NaN in
    numbers, None in text), and returns the batch's results; ``parameters`` and ``returns``
    are kinds of :attr:`Datasource.types` (``"float"``, ``"text"``...)."""

    name: str
    parameters: list[str]
    returns: str
    call: Callable[[list[np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class ResultSet:
    """Rows a query returned, for display."""

    columns: list[str]
    rows: list[tuple[Any, ...]]


@dataclass(frozen=True)
class Partitioning:
    """How a database numbers a row's part from its key columns (``{keys}``, a
    comma-separated list of quoted names, each written as ``fractional`` says when it is a
    floating-point column) and the number of parts (``{count}``): SQL in a SELECT's list of
    columns (a window function's too)."""

    number: str
    fractional: str = "{name}"


def returns_rows(sql: str) -> bool:
    """Whether ``sql`` is a query whose rows should be shown."""
    match = re.match(r"[\s(]*([A-Za-z]+)", sql)
    return bool(match) and match.group(1).lower() in _QUERY_WORDS


class Datasource(ABC):
    """A connection to one database.

    A subclass declares, as class attributes: the URL ``schemes`` it opens (the first one
    canonical, the others aliases), whether its URLs name a file (``file_based``) or a
    server, sqlglot's name of its SQL ``dialect``, and what it can do, read where it matters:
    ``fingerprint_sql`` (without it the input cache and resumed runs cannot tell a table is
    unchanged), ``single_writer`` (a run's steps then share one connection), ``columns_sql``,
    ``schema_columns_sql`` and ``search_path_sql`` (the shell's catalog) and
    ``transactional_ddl``. Interrupting, bulk inserts, a separate reading connection and
    where its database says a statement went wrong are methods it overrides (``_interrupt``,
    ``_insert``, ``_new_reader``, ``error_offset``); so are a query's column types
    (``result_types``, which TO RUN's write-back declares; none by default) and converting a
    staging table's columns to them (``_retype``, SQL's ``ALTER COLUMN ... TYPE`` by
    default).

    SQL and settings that differ by database are declared here too, and the code that needs
    them asks the datasource (or its class) instead of branching on a dialect's name, as
    dbt's adapters are dispatched to: the base class answers with what databases share and
    a subclass overrides what differs. ``partitioning`` (the parts of ``train.workers``) and
    ``stage_parts``/``drop_parts`` (the helper table they are read from), ``version_sql``
    (the notebook's greeting), ``steps_at_once`` (a Kubernetes run's parallelism),
    ``credentials_env`` (what TO RUN withholds), ``statement_type`` and ``parse_on`` (the
    database's own parser in this process), ``for_workers`` (what ``train.workers``'
    processes read), ``forbid_file_access`` (``sqlml ui --no-file-access``).
    """

    schemes: ClassVar[tuple[str, ...]] = ()  # URL schemes, the first canonical
    file_based: ClassVar[bool] = False  # URLs name a file (scheme:///path), else a server
    url_example: ClassVar[str] = "{scheme}://user:password@host/database"  # for hints
    url_options: ClassVar[tuple[str, ...]] = ()  # the ?options its URLs may give its driver
    dialect: ClassVar[str]  # sqlglot dialect name
    param: ClassVar[str]  # bound parameter placeholder
    types: ClassVar[dict[str, str]]  # "int", "float", "bool", "text", "blob", "key" -> SQL
    current_schema: ClassVar[str]  # SQL expression naming the default schema
    # The type of a name column that compares exactly, where types["key"] ignores case,
    # accents or trailing spaces (the model store's names); None: types["key"] does not.
    exact_key: ClassVar[str | None] = None
    fingerprint_sql: ClassVar[str | None] = None  # a query on {table}; None: unsupported
    # information_schema.columns' columns that tell a column's type, for fingerprints
    column_type_sql: ClassVar[str] = (
        "data_type, character_maximum_length, numeric_precision, numeric_scale"
    )
    transactional_ddl: ClassVar[bool] = True  # a whole write, DDL and all, in one transaction
    single_writer: ClassVar[bool] = False  # one connection writes at a time
    # (table, column, type) of every column of the default schema's ({schema}) tables and
    # views, in order: what the shell completes
    columns_sql: ClassVar[str] = (
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = {schema} ORDER BY table_name, ordinal_position"
    )
    # (schema, table, column, type) of every column of the tables and views of every schema
    # a user may name (not the database's own), in order; None: the default schema's alone
    # (columns_sql). With search_path_sql (a query of the schemas an unqualified name is
    # looked up in, in order), the shell names the others' tables schema.table.
    schema_columns_sql: ClassVar[str | None] = None
    search_path_sql: ClassVar[str] = "SELECT {schema}"
    # Rows the last statement that execute ran inserted, updated or deleted, as its database
    # says (set by execute; None: not told).
    changed_rows: int | None = None
    # A query of the databases of the server (the shell's \\l); None: the connected one alone.
    databases_sql: ClassVar[str | None] = None
    # How a row's part of train.workers is numbered: by default the rank of its keys among
    # all distinct keys (standard SQL, but a sort of them all).
    partitioning: ClassVar[Partitioning] = Partitioning(
        "(DENSE_RANK() OVER (ORDER BY {keys}) - 1) % {count}"
    )
    # A query of one row and column: the database's name and version (``MariaDB 10.11.6``);
    # None: unknown.
    version_sql: ClassVar[str | None] = None
    # The steps of a run on Kubernetes running at once by default, each with a connection.
    steps_at_once: ClassVar[int] = 10
    # Environment variables its driver reads credentials from (a password).
    credentials_env: ClassVar[tuple[str, ...]] = ()
    # How its statements call a function of sqlml's in this process (:meth:`functions`):
    # "batches" (an array of rows a call), "rows" (a call a row), or None: they cannot (a
    # server's statements run in its own process).
    calls_python: ClassVar[str | None] = None

    @classmethod
    def statement_type(cls, sql: str) -> str | None:
        """The type of the one statement ``sql`` holds as the database's own parser, in this
        process, reads it (``"SELECT"`` for any query, ``"INSERT"``...), or None: no such
        parser here (the default: sqlglot checks the statement), or ``sql`` holds a syntax
        error, no statement or several."""
        return None

    @classmethod  # noqa: B027 (a deliberate no-op where there is no parser of its own)
    def parse_on(cls, url: DatasourceURL | None) -> None:
        """A run in this process is about to open ``url`` (None: none is, or it has ended):
        the database's own parser (:meth:`statement_type`) may read with its database."""

    def for_workers(self, selects: Mapping[str, str], folder: Path) -> tuple[dict[str, str], str]:
        """The SELECTs (by name) that ``train.workers``' processes read instead of
        ``selects`` and their datasource's URL: by default the same, on this database.
        ``folder`` is the workers' while they run (for copies of the rows)."""
        return dict(selects), self.url.with_password()

    def stage_parts(self, table: str, select: str, number: str, column: str) -> str:
        """Create the helper table ``table`` of ``select``'s rows, each with its part's
        ``number`` (SQL over its columns) in the column ``column``, stored so that the rows
        of one part are read without the others'; the relation (SQL) to read it as. By
        default: the rows in the parts' order, and an index of them."""
        quoted, part = self.quote([table]), self.quote([column])
        self.execute(
            f"CREATE TABLE {quoted} AS SELECT *, {number} AS {part} "
            f"FROM ({select}) AS sqlml_rows ORDER BY {part}"
        )
        self.execute(f"CREATE INDEX {self.quote([table + '_part'])} ON {quoted} ({part})")
        return quoted

    def drop_parts(self, table: str) -> None:
        """Drop the helper table ``table`` made by :meth:`stage_parts`, if it exists."""
        self.execute(f"DROP TABLE IF EXISTS {self.quote([table])}")

    def __init__(self, url: DatasourceURL, base_dir: Path | None = None) -> None:
        self.url = url
        self.base_dir = base_dir  # where relative file paths resolve; None: the working folder
        self._readers: list[Datasource] = []  # see concurrent_reader

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url}>"

    def program_file(self, path: str) -> Path:
        """A file a statement names (a plot it draws): a relative ``path`` from
        ``base_dir``, else from the working folder."""
        named = Path(path).expanduser()
        return named if named.is_absolute() else (self.base_dir or Path.cwd()) / named

    def forbid_file_access(self) -> None:  # noqa: B027 (a no-op where privileges govern)
        """Keep the statements run on this connection from now on from reading or writing
        the files of the machine sqlml runs on and from loading code into this process, in a
        way no statement undoes (``sqlml ui --no-file-access``: the editor's statements).
        The default does nothing: a database server reads and writes files of its own
        machine only, as the privileges it grants allow (a user without them cannot)."""

    def read_files_from(self, base_dir: Path) -> None:
        """Relative file paths in the statements run from now on are looked up in
        ``base_dir``."""
        self.base_dir = base_dir

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        """Run one statement; return its rows if it is a query."""

    def error_offset(self, error: Exception, sql: str) -> int | None:
        """Where in ``sql`` the driver's ``error`` says the statement went wrong, as a 0-based
        offset, read from the database's own report (each database says it its way); None
        where it does not say (the default)."""
        return None

    def located(self, raised: DatasourceError, error: Exception, sql: str) -> DatasourceError:
        """``raised``, the DatasourceError for the driver's ``error`` on ``sql``, with the
        :meth:`error_offset` it gives; returns it."""
        raised.offset = self.error_offset(error, sql)
        return raised

    def read(self, select: str, reporter: Progress | None = None) -> Columns:
        """Run a SELECT and return its result as columns: its batches joined, their rows
        reported to ``reporter`` in a "reading" stage (None: nowhere)."""
        from sqlml.datasources.arrays import join_batches

        reporter = reporter or Progress()
        with reporter.stage("reading"):
            return join_batches(counted(self.read_batches(select), reporter))

    @abstractmethod
    def read_batches(self, select: str, batch_rows: int = BATCH_ROWS) -> Iterator[Columns]:
        """Run a SELECT and yield its result in batches of at most ``batch_rows`` rows.

        Only about one batch is held at a time. An empty result is one batch of empty
        columns. Stopping early (closing the iterator) leaves the connection usable.
        """

    @abstractmethod
    def _insert(self, table: str, columns: Columns) -> None:
        """Insert ``columns`` into the existing, quoted ``table`` as fast as the driver allows."""

    @abstractmethod
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the body in a transaction: all of it is committed, or none."""

    @contextmanager
    def rolled_back(self) -> Iterator[None]:
        """Run the body in a transaction that is rolled back however it ends: what it
        creates, alters or drops is undone (tables and views too, with ``transactional_ddl``).
        A statement that fails in it may leave the transaction unusable: roll it back."""
        try:
            with self.transaction():
                yield
                raise _Undo
        except _Undo:
            pass

    @contextmanager
    def scoring_compiled_models(self) -> Iterator[None]:
        """The statements run inside call models compiled into SQL, expressions of hundreds of
        kilobytes: the settings that suit them (none by default)."""
        yield

    @contextmanager
    def functions(self, functions: Sequence[QueryFunction]) -> Iterator[None]:
        """``functions`` callable by the statements run inside (``calls_python`` says how);
        an error a function raised is raised as it is, not as the database's."""
        if not functions:
            yield
            return
        raise DatasourceError(f"{type(self).__name__} cannot call functions of sqlml's")

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""

    def interrupt(self) -> None:
        """Ask the statements running on this connection and its readers (in other threads)
        to stop; they then fail with a DatasourceError. Does nothing where the driver cannot
        interrupt."""
        for reader in list(self._readers):
            reader.interrupt()
        self._interrupt()

    def _interrupt(self) -> None:  # noqa: B027 (a deliberate no-op where drivers cannot)
        """Interrupt the statement running on this connection."""

    def quote(self, parts: Sequence[str]) -> str:
        """Quote a possibly qualified identifier, part by part."""
        return ".".join('"' + part.replace('"', '""') + '"' for part in parts)

    @contextmanager
    def concurrent_reader(self) -> Iterator[Datasource]:
        """A datasource to read batches from while this one writes (:meth:`write_batches`
        of batches made from those read): a connection of its own where the driver needs
        one, interrupted with this one."""
        reader = self._new_reader()
        if reader is None:
            yield self
            return
        self._readers.append(reader)
        try:
            yield reader
        finally:
            self._readers.remove(reader)
            reader.close()

    def _new_reader(self) -> Datasource | None:
        """A new connection for :meth:`concurrent_reader`; None: this one reads and writes."""
        return None

    def create_tables(self, statements: Sequence[str]) -> None:
        """Run ``CREATE TABLE IF NOT EXISTS`` statements of sqlml's own tables, safely when
        several processes start on a new database at once."""
        for statement in statements:
            self.execute(statement)

    def table_fingerprint(self, table: Sequence[str]) -> str | None:
        """A value that changes whenever ``table``'s rows or columns (names, types, order)
        change, or None if unknown (no ``fingerprint_sql``, no such table, or none the
        database can compute). A view's changes with the rows it gives: whatever it reads.

        The name is looked up regardless of case, as the dependency analysis lower-cases
        names: on a database whose names are case-sensitive (MySQL on Linux), tables whose
        names differ only in case all count."""
        if self.fingerprint_sql is None:
            return None
        *schema, name = table
        found = self.execute(
            "SELECT table_name FROM information_schema.tables "
            f"WHERE table_schema = COALESCE({self.param}, {self.current_schema}) "
            f"AND LOWER(table_name) = LOWER({self.param}) ORDER BY table_name",
            [schema[-1] if schema else None, name],
        )
        stored = [stored for (stored,) in found.rows] if found else []
        if not stored:
            return None
        found = [self._fingerprint([*schema, each]) for each in stored]
        return None if None in found else repr(found)

    def _fingerprint(self, table: Sequence[str]) -> Any:
        """The fingerprint of the table named exactly ``table``; None if it has none."""
        found = self.execute(self.fingerprint_sql.format(table=self.quote(table)))
        return (self.column_types(table), found.rows if found else None)

    def compares_exactly(self, table: Sequence[str], column: str) -> bool:
        """Whether ``column`` of ``table`` has the type of ``exact_key`` (True without one, or
        without such a column)."""
        return True

    def column_types(self, table: Sequence[str]) -> list[tuple[Any, ...]]:
        """``table``'s columns in order, each its name and type; empty if there is no table."""
        *schema, name = table
        found = self.execute(
            f"SELECT column_name, {self.column_type_sql} FROM information_schema.columns "
            f"WHERE table_schema = COALESCE({self.param}, {self.current_schema}) "
            f"AND table_name = {self.param} ORDER BY table_catalog, ordinal_position",
            [schema[-1] if schema else None, name],
        )
        return [tuple(row) for row in found.rows] if found else []

    def result_types(self, select: str) -> dict[str, str]:
        """The SQL type of each column of ``select``'s result, as a column definition names
        it; empty where the database cannot tell (then a write infers every type)."""
        return {}

    def table_exists(self, table: Sequence[str]) -> bool:
        """Whether ``table`` (``name`` or ``schema.name``) exists."""
        *schema, name = table
        found = self.execute(
            "SELECT COUNT(*) FROM information_schema.tables "
            f"WHERE table_schema = COALESCE({self.param}, {self.current_schema}) "
            f"AND table_name = {self.param}",
            [schema[-1] if schema else None, name],
        )
        return bool(found and found.rows[0][0])

    def write_table(
        self,
        table: Sequence[str],
        columns: Columns,
        replace: bool = False,
        token: Token | None = None,
        types: Mapping[str, str] | None = None,
    ) -> None:
        """Create or replace ``table`` with ``columns``; readers see the old or the new table.

        See :meth:`write_batches` for when an existing table is replaced, ``token`` and
        ``types``."""
        self.write_batches(table, [columns], replace, token, types)

    def write_batches(
        self,
        table: Sequence[str],
        batches: Iterable[Columns],
        replace: bool = False,
        token: Token | None = None,
        types: Mapping[str, str] | None = None,
    ) -> int:
        """Create or replace ``table`` with the rows of ``batches``; the number of rows.

        The rows fill a staging table that then takes the table's place in one step, so
        readers see the old table or the new one. An existing table is replaced only if
        sqlml wrote it, or with ``replace`` (a view too); sqlml's own tables never. Each
        column's type is settled batch by batch, as :func:`~.arrays.join_batches` joins batches: a
        column widens (integers to floats, numbers to text) when a later batch needs it.
        A cancelled ``token`` (that of the statement writing) stops the write before the
        swap: the table is left as it was. ``types`` declares the SQL types of some columns
        (``{column: type}``): once every row is in, those columns are converted to them by
        the database's casts (a value that does not convert fails the write).
        """
        self.check_target(table, replace)
        with self._exclusive_write(table):
            self._drop_leftovers(table)
            return self._write(table, batches, replace, token, types or {})

    @contextmanager
    def _exclusive_write(self, table: Sequence[str]) -> Iterator[None]:
        """The context of a whole write into ``table``: a transaction, which hides the
        staging table from other sessions until it has taken the table's place."""
        with self.transaction():
            yield

    def _write(
        self,
        table: Sequence[str],
        batches: Iterable[Columns],
        replace: bool,
        token: Token | None,
        types: Mapping[str, str],
    ) -> int:
        from sqlml.datasources.arrays import StagingColumns

        *schema, name = table
        staging = [*schema, f"{short_name(name)}{HELPER_MARK}new_{uuid.uuid4().hex[:12]}"]
        rows, columns = 0, None
        try:
            with closing_batches(batches) as source:
                for batch in source:
                    if columns is None:
                        columns = StagingColumns(batch)
                        definition = columns.definition(self.types, self.quote)
                        self._create_staging(staging, definition)
                    else:
                        batch = columns.settle(batch, partial(self._widen, staging))
                    self._insert(self.quote(staging), batch)
                    rows += len(next(iter(batch.values()), ()))
            if columns is None:
                raise ValueError("write_batches needs at least one batch")
            if types:
                self._retype(staging, types)
            if token is not None:
                token.check()  # a cancelled statement never replaces the table
            self._swap(staging, list(table), replace)
        except BaseException:
            if not self.transactional_ddl:  # else the rollback drops it
                self._drop_staging(staging)
            raise
        return rows

    def check_target(self, table: Sequence[str], replace: bool) -> Target | None:
        """What ``table`` is now (None: nothing); a :class:`CheckError` if a write must not
        replace it: one of sqlml's tables, or a table sqlml did not write (a view, a table of
        the user's) without ``replace``, or something that is neither table nor view."""
        shown = ".".join(table)
        if is_own_table(table):
            raise CheckError(
                f"{shown} is one of the tables sqlml keeps its models and runs in; "
                "statements never write into it",
                hint="write the output into another table",
            )
        found = self.describe_target(table)
        if found is None or (found.kind == "table" and found.ours):
            return found
        if found.kind not in ("table", "view"):
            raise CheckError(
                f"{shown} is a {found.kind}, which sqlml does not replace",
                hint="write the output into another table",
            )
        if not replace:
            what = "view" if found.kind == "view" else "table"
            raise CheckError(
                f"{what} {shown} exists and sqlml did not write it: the output would replace "
                f"it{' and its rows' if what == 'table' else ''}",
                hint="write the output into another table, or add WITH output.replace = true "
                f"to replace the {what}",
            )
        return found

    @abstractmethod
    def describe_target(self, table: Sequence[str]) -> Target | None:
        """What ``table`` is (None if nothing by that name): a table or view, and whether a
        sqlml write made it (its mark, :data:`WRITTEN_MARK`)."""

    def _create_staging(self, staging: list[str], definition: str) -> None:
        """Create the staging table, marked as written by sqlml (the mark stays with the
        table when it is renamed)."""
        self.execute(f"CREATE TABLE {self.quote(staging)} ({definition})")
        self.execute(f"COMMENT ON TABLE {self.quote(staging)} IS '{WRITTEN_MARK}'")

    def _widen(self, staging: list[str], column: str, kind: str, wider: str) -> None:
        """Change a staging column's type from ``kind``'s to ``wider``'s, values converted."""
        self.execute(
            f"ALTER TABLE {self.quote(staging)} ALTER COLUMN {self.quote([column])} "
            f"TYPE {self.types[wider]}"
        )

    def _retype(self, staging: list[str], types: Mapping[str, str]) -> None:
        """Convert the staging table's columns named in ``types`` to the types given."""
        for column, sql_type in types.items():
            self.execute(
                f"ALTER TABLE {self.quote(staging)} ALTER COLUMN {self.quote([column])} "
                f"TYPE {sql_type}"
            )

    def _swap(self, staging: list[str], target: list[str], replace: bool) -> None:
        """Make ``staging`` the table ``target`` in one step (in :meth:`write_batches`'s
        transaction): what is there now is checked again, then dropped."""
        found = self.check_target(target, replace)
        if found is not None:
            kind = "VIEW" if found.kind == "view" else "TABLE"
            self.execute(f"DROP {kind} {self.quote(target)}")
        self.execute(f"ALTER TABLE {self.quote(staging)} RENAME TO {self.quote(target[-1:])}")

    def swap_tables(self, pairs: Sequence[tuple[list[str], list[str]]], replace: bool) -> None:
        """Make each staging table of ``pairs`` (staging, target) its target, all of them or
        none: one transaction, where the database's DDL is transactional."""
        with self.transaction():
            for staging, target in pairs:
                self._swap(staging, target, replace)

    def _drop_leftovers(self, table: Sequence[str]) -> None:
        """Drop staging tables that writes into ``table`` left behind when their process was
        killed. Runs in the write's transaction (or under its lock), where no live write's
        staging table is visible, so every one found is a leftover."""
        *schema, name = table
        for leftover in self._helper_tables(schema[-1] if schema else None, short_name(name)):
            found = self.describe_target([*schema, leftover])
            kind = "VIEW" if found is not None and found.kind == "view" else "TABLE"
            self.execute(f"DROP {kind} IF EXISTS {self.quote([*schema, leftover])}")

    def _helper_tables(self, schema: str | None, prefix: str) -> list[str]:
        """The names of the helper tables of tables whose names start with ``prefix``."""
        found = self.execute(
            "SELECT table_name FROM information_schema.tables "
            f"WHERE table_schema = COALESCE({self.param}, {self.current_schema}) "
            f"AND table_name LIKE {self.param} ESCAPE '!'",
            [schema, like_prefix(prefix + HELPER_MARK)],
        )
        return [leftover for (leftover,) in found.rows] if found else []

    def _drop_staging(self, staging: list[str]) -> None:
        """Drop a failed write's staging table, on a new connection if the write lost its
        own; one the database cannot drop now stays behind under its own name, unseen."""
        for _ in range(2):
            with suppress(DatasourceError):
                self.execute(f"DROP TABLE IF EXISTS {self.quote(staging)}")
                return


class _Undo(Exception):
    """Ends :meth:`Datasource.rolled_back`'s transaction in a rollback."""


class FunctionErrors:
    """The errors of sqlml's that functions called by a statement raised: the database
    reports them as its own (DuckDB's "Python exception occurred while executing the UDF",
    SQLite's "user-defined function raised exception"), and :meth:`raised` raises the
    first as it was, with its hint."""

    def __init__(self) -> None:
        self._errors: list[SqlmlError] = []

    def kept(self, call: Callable[..., Any]) -> Callable[..., Any]:
        """``call``, its errors of sqlml's kept."""

        def keeping(*args: Any) -> Any:
            try:
                return call(*args)
            except SqlmlError as error:
                self._errors.append(error)
                raise

        return keeping

    @contextmanager
    def raised(self) -> Iterator[None]:
        try:
            yield
        except DatasourceError:
            if self._errors:
                raise self._errors[0] from None
            raise


@contextmanager
def closing_batches(batches: Iterable[Columns]) -> Iterator[Iterator[Columns]]:
    """``batches`` to loop over in the body, closed when the body ends, however it ends: a
    generator that reads in a transaction (PostgreSQL's cursors) ends it then, not when the
    garbage collector gets to it. An error closing them (a lost connection) gives way to
    the one that ended the body."""
    try:
        yield iter(batches)
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            with suppress(SqlmlError):
                close()


@dataclass(frozen=True)
class Target:
    """What a write's target is: ``kind`` ("table", "view", or the database's word for
    anything else) and whether a sqlml write made it."""

    kind: str
    ours: bool


def like_prefix(prefix: str) -> str:
    """A LIKE pattern matching names that start with ``prefix`` (``!`` escapes)."""
    return re.sub(r"([!%_])", r"!\1", prefix) + "%"


def lost_in_transaction(url: DatasourceURL) -> DatasourceError:
    """The error of a connection lost in a transaction: the server rolled it back, and going
    on in a new connection would commit only the transaction's end."""
    return DatasourceError(
        f"the connection to {url} was lost in a transaction, which the server rolled back",
        hint="run the statement again (sqlml run --resume RUN, or --retries N)",
    )


def short_name(name: str) -> str:
    """The start of a table name (at most 24 bytes), to build helper tables' names from:
    they stay within MySQL's 64 characters and PostgreSQL's 63 bytes."""
    return name.encode()[:24].decode(errors="ignore")


def counted(batches: Iterable[Columns], reporter: Progress) -> Iterator[Columns]:
    """``batches``, each one's rows reported to ``reporter``'s current stage."""
    for batch in batches:
        reporter.advance(len(next(iter(batch.values()), ())))
        yield batch
