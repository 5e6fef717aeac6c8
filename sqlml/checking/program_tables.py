"""The tables as a program's earlier statements leave them, as far as ``sqlml check`` can
know without changing anything in the database.

The database describes them itself: the program's schema statements (CREATE, ALTER and
DROP of tables, views and schemas, as :mod:`sqlml.semantics.schema_changes` reads them) are
replayed in it, a ``CREATE TABLE ... AS <query>`` with no rows, where nothing lasts: in a
transaction that is always rolled back where the database's DDL is transactional (DuckDB,
PostgreSQL, SQLite); as TEMPORARY tables on MySQL, whose DDL commits, dropped at the end
(there its views and schemas, and changes of tables not created here, are not replayed).
Rows are never written: INSERT, UPDATE and DELETE are not replayed.

What the database cannot describe is *unknown*: a table an extended statement writes (TO
PREDICT ... INTO), one whose statement was not or could not be replayed, and after a
statement whose effects are not known (SET, COPY, ...) every table. A check of what reads
an unknown table says nothing: it cannot know, and a false error would stop a program that
runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import ExitStack, suppress
from typing import Any, TypeVar

from sqlml import ir
from sqlml.datasources import Columns, Datasource
from sqlml.errors import DatasourceBusy, DatasourceError
from sqlml.plan.dag import StatementIO
from sqlml.semantics.schema_changes import (
    ALTER,
    CREATE,
    CREATE_AS,
    DROP,
    ROWS,
    WRITES,
    SchemaChange,
    schema_change,
)
from sqlml.semantics.table_names import name_key
from sqlml.statements import kind_of

T = TypeVar("T")
# MySQL refuses to read a TEMPORARY table twice in one query: a table that the program
# creates for good, which the check made temporary, is then unknown.
_TEMPORARY_LIMITS = ("Can't reopen table",)


class ProgramTables:
    """The tables of the database as the statements followed so far leave them (a context
    manager: what the replay made is undone at its end)."""

    def __init__(self, datasource: Datasource, dialect: str) -> None:
        self.datasource, self.dialect = datasource, dialect
        self.unknown: set[str] = set()  # tables and views (name keys) whose columns are unknown
        self.unknown_schemas: set[str] = set()  # lower-cased
        self.all_unknown = False  # after a statement whose effects are not known
        self.written: set[str] = set()  # tables (name keys) whose rows may have changed
        self._replayed: list[str] = []  # run in the transaction so far
        self._temporary: dict[str, list[str]] = {}  # MySQL: lower-cased dotted name -> parts
        self._transaction = ExitStack()

    def __enter__(self) -> ProgramTables:
        self._begin()
        return self

    def __exit__(self, *exc: object) -> None:
        with suppress(DatasourceError):
            self._transaction.close()
        for parts in self._temporary.values():
            with suppress(DatasourceError):
                self.datasource.execute(f"DROP TEMPORARY TABLE {self.datasource.quote(parts)}")

    def ask(self, question: Callable[..., T], *args: Any) -> T:
        """``question(*args)``, asked of the database as the program leaves it. A failure
        (which may have spoiled the transaction) is raised once the transaction is made
        again."""
        try:
            return question(*args)
        except DatasourceError:
            self._restart()
            raise

    def certain(self, io: StatementIO) -> bool:
        """Whether the database describes the tables ``io`` reads as the program leaves them."""
        if self.all_unknown:
            return False
        if io.barrier:  # what it reads is not known
            return not (self.unknown or self.unknown_schemas)
        return all(map(self.known, io.reads_tables))

    def known(self, name: str) -> bool:
        """Whether the database describes the table ``name`` (dotted) as the program leaves it."""
        *schema, _ = name.lower().split(".")
        return not (
            self.all_unknown
            or name_key(name.lower()) in self.unknown
            or (schema and schema[-1] in self.unknown_schemas)
        )

    def describe(self, select: str) -> Columns | None:
        """The columns of ``select``'s result, no row read; None where the database cannot
        tell (a limit of MySQL's temporary tables)."""
        try:
            return self.ask(self.datasource.read, f"SELECT * FROM ({select}\n) AS q LIMIT 0")
        except DatasourceError as error:
            if any(limit in error.message for limit in _TEMPORARY_LIMITS):
                return None
            raise

    def untouched(self, io: StatementIO) -> bool:
        """Whether the tables ``io`` reads hold the rows they hold now: no statement of the
        program wrote them so far."""
        reads = map(name_key, io.reads_tables)
        return not (self.all_unknown or io.barrier or self.written.intersection(reads))

    def follow(self, statement: ir.Statement, io: StatementIO) -> None:
        """Take in what ``statement`` (``io``: what it reads and writes) does to the tables.
        Raises the database's error where a replayed statement fails that only reads and
        changes tables known."""
        self.written.update(map(name_key, io.writes_tables))
        if not kind_of(statement).effects.standard_sql:
            self._forget(io.writes_tables)  # what an extended statement writes is not known
            return
        change = schema_change(statement.text, self.dialect)
        if change is None or (io.barrier and change.action == ROWS):  # rows of what?
            self.all_unknown = True
        elif change.action == WRITES:
            self._forget(_dotted(change))
        elif change.action in (CREATE, CREATE_AS, ALTER, DROP) and not self.all_unknown:
            self._follow_change(statement.text, change, io)

    def _follow_change(self, text: str, change: SchemaChange, io: StatementIO) -> None:
        """Replay ``change`` where that leaves what it names as the program does: it reads
        only tables known, and alters or keeps (IF NOT EXISTS) only tables known; it drops
        unknown ones silently (they may not be there)."""
        names = _dotted(change)
        reads_known = change.kind == "schema" or self.certain(io)
        names_known = change.kind == "schema" or all(map(self.known, names))
        keeps = change.action == ALTER or (change.action == CREATE and change.if_exists)
        if not reads_known or (keeps and not names_known):
            self._forget(names, change.kind)
        elif not self.datasource.transactional_ddl:
            self._replay_temporary(text, change, report=names_known)
        else:
            self._replay(text, change, report=names_known)

    def _replay(self, text: str, change: SchemaChange, report: bool) -> None:
        """``change`` replayed in the transaction; its failure raised if ``report``."""
        names = _dotted(change)
        sql = _without_rows(text, change) if change.action == CREATE_AS else text
        try:
            self.ask(self.datasource.execute, sql)
        except DatasourceError as error:
            self._forget(names, change.kind)
            if report and not isinstance(error, DatasourceBusy):
                raise
            return
        self._replayed.append(sql)
        self._known(names, change.kind)

    def _replay_temporary(self, text: str, change: SchemaChange, report: bool) -> None:
        """MySQL: a table created as TEMPORARY (hiding a table of that name), then altered or
        dropped as such; the rest is unknown. A failure says nothing: it may be the
        temporary table's (a user may not create them), but for the query of a CREATE TABLE
        ... AS, read first, raised if ``report``."""
        names = _dotted(change)
        replayed = change.kind == "table" and (
            change.action != ALTER or names[0].lower() in self._temporary
        )
        if not replayed:
            self._forget(names, change.kind)
            return
        if change.action == CREATE_AS and change.query is not None and report:
            try:
                self.describe(text[slice(*change.query)])
            except DatasourceError:
                self._forget(names, change.kind)
                raise
        try:
            self._replay_table(text, change)
        except DatasourceError:
            self._forget(names, change.kind)

    def _replay_table(self, text: str, change: SchemaChange) -> None:
        """``change`` of a table made TEMPORARY: created as one, or dropped or altered as
        the one it is; a table of the database that remains under a name dropped is unknown."""
        quote, name = self.datasource.quote, change.names[0]
        key = ".".join(name).lower()
        if change.action == DROP:
            for parts in change.names:
                dropped = self._temporary.pop(".".join(parts).lower(), None)
                if dropped is not None:
                    self.ask(self.datasource.execute, f"DROP TEMPORARY TABLE {quote(dropped)}")
                if self.ask(self.datasource.describe_target, parts) is None:
                    self._known([".".join(parts)])
                else:  # a table of the database, which the check does not drop
                    self._forget([".".join(parts)])
            return
        if change.action == ALTER:
            self.ask(self.datasource.execute, text)
            if len(change.names) > 1:  # renamed
                self._temporary.pop(key)
                self._temporary[".".join(change.names[-1]).lower()] = list(change.names[-1])
            self._known(_dotted(change))
            return
        if change.if_exists and self.ask(self.datasource.describe_target, name) is not None:
            return  # the program keeps the table there is
        sql = _without_rows(text, change) if change.action == CREATE_AS else text
        if not change.temporary and change.table_word is not None:
            sql = f"{sql[: change.table_word]}TEMPORARY {sql[change.table_word :]}"
        self.ask(self.datasource.execute, sql)
        self._temporary[key] = list(name)
        self._known([key])

    def _forget(self, names: Iterable[str], kind: str = "table") -> None:
        """Tables (or schemas) whose columns are now unknown."""
        if kind == "schema":
            self.unknown_schemas.update(name.lower() for name in names)
        else:
            self.unknown.update(name_key(name.lower()) for name in names)

    def _known(self, names: Iterable[str], kind: str = "table") -> None:
        """Tables (or schemas) the database now describes as the program leaves them."""
        if kind == "schema":
            self.unknown_schemas.difference_update(name.lower() for name in names)
        else:
            self.unknown.difference_update(name_key(name.lower()) for name in names)

    def _begin(self) -> None:
        """The transaction the statements are replayed in, where DDL has them."""
        if self.datasource.transactional_ddl:
            self._transaction.enter_context(self.datasource.rolled_back())

    def _restart(self) -> None:
        """The transaction rolled back and made again, its statements replayed."""
        if not self.datasource.transactional_ddl:
            return
        with suppress(DatasourceError):
            self._transaction.close()
        self._transaction = ExitStack()
        try:
            self._begin()
            for sql in self._replayed:
                self.datasource.execute(sql)
        except DatasourceError:  # the replay cannot go on: nothing is known any more
            self.all_unknown = True


def _dotted(change: SchemaChange) -> list[str]:
    return [".".join(name) for name in change.names]


def _without_rows(text: str, change: SchemaChange) -> str:
    """``CREATE TABLE ... AS <query>`` that creates the table without its rows."""
    start, end = change.query or (len(text), len(text))
    query = text[start:end].rstrip()
    # a newline before the parenthesis: the query may end in a -- comment
    return f"{text[:start]}SELECT * FROM ({query}\n) AS sqlml_query LIMIT 0 {text[end:]}"
