"""Dependency analysis: which tables and models each statement reads and writes, and the DAG.

Statement B runs after A when B reads what A writes (read after write), or writes what A
reads or writes (write after read, write after write): running the DAG in parallel keeps
the program's meaning. A pass over the IR: each statement's kind declares its effects (the
IR fields naming what it reads and writes); the tables of its SQL are found with sqlglot
(:mod:`sqlml.semantics.lineage`). When in doubt the analysis is conservative:

- names compare by their last part, table names lower-cased (``main.T`` and ``t`` are one
  table), since the default schema and the database's case rules are not known here; model
  names as written (sqlml's model store compares them exactly);
- reading a view reads the tables behind it (as far as the program created the view);
- a statement sqlglot cannot parse, or one whose effects are not plain table reads and
  writes (``SET``, ``USE``, ``COPY``, ``CREATE FUNCTION``, ...), is a barrier: it runs
  after every earlier statement and before every later one;
- files a statement writes (its plots) compare by their path as written: two statements
  writing one file run in program order;
- ``SHOW MODELS`` reads every model;
- an ``ASSERT`` reads the tables of its condition's subqueries.

Edges are direct dependencies only: an edge implied by others is left out.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from sqlml import ir
from sqlml.semantics.table_names import name_key
from sqlml.statements import KINDS


@dataclass(frozen=True)
class StatementIO:
    """The tables (names lower-cased, dotted) and models (as written) one statement reads
    and writes."""

    reads_tables: frozenset[str] = frozenset()
    writes_tables: frozenset[str] = frozenset()
    reads_models: frozenset[str] = frozenset()
    writes_models: frozenset[str] = frozenset()
    reads_all_models: bool = False  # SHOW MODELS
    writes_files: frozenset[str] = frozenset()  # paths as written
    barrier: bool = False  # effects unknown: ordered after and before everything


@dataclass(frozen=True)
class ProgramGraph:
    """Each statement's reads and writes, and the statements it must run after, by id."""

    io: Mapping[str, StatementIO]
    after: Mapping[str, tuple[str, ...]]  # direct dependencies, in program order


@dataclass(frozen=True)
class _Facts:
    """A statement's IO, plus what it does to views: the graph tracks what views read."""

    io: StatementIO
    view: str | None = None  # the view it (re)defines over io.reads_tables
    rename: tuple[str, str] | None = None  # (old, new) name of a renamed table or view


def dependencies(statements: Sequence[ir.Statement], dialect: str) -> ProgramGraph:
    """Analyse ``statements`` (SQL in sqlglot's ``dialect``) into a :class:`ProgramGraph`."""
    graph = _Graph()
    for statement in statements:
        graph.add(statement.id, _facts(statement, dialect))
    return ProgramGraph(graph.io, graph.after)


def _facts(statement: ir.Statement, dialect: str) -> _Facts:
    """What one statement reads and writes (as its kind declares), views not yet expanded."""
    from sqlml.semantics.lineage import sql_effects  # sqlglot, loaded with the first SQL read

    kind = KINDS.get(statement.kind)
    if kind is None:
        return _Facts(StatementIO(barrier=True))
    effects = kind.effects
    if effects.standard_sql:
        sql = sql_effects(statement.text, dialect)
        io = StatementIO(
            reads_tables=sql.reads,
            writes_tables=sql.writes,
            reads_models=frozenset(effects.values(statement, effects.reads_models)),  # PREDICT
            barrier=sql.barrier,
        )
        return _Facts(io, sql.view, sql.rename)
    selects = [sql_effects(sql, dialect) for sql in effects.values(statement, effects.queries)]
    written = (".".join(t) for t in effects.values(statement, effects.writes_tables))
    io = StatementIO(
        reads_tables=frozenset().union(*(sql.reads for sql in selects)),
        writes_tables=frozenset().union(*(sql.writes for sql in selects))
        | frozenset(name.lower() for name in written),
        # models are named exactly as written
        reads_models=frozenset(
            effects.values(statement, effects.reads_models + effects.alters_models)
        ),
        writes_models=frozenset(
            effects.values(
                statement, effects.writes_models + effects.drops_models + effects.alters_models
            )
        ),
        reads_all_models=effects.reads_all_models,
        writes_files=frozenset(
            map(os.path.normpath, effects.values(statement, effects.writes_files))
        ),
        barrier=any(sql.barrier for sql in selects),
    )
    return _Facts(io)


class _Names:
    """For one kind of name (tables or models): its last writer and its readers since."""

    def __init__(self, key: Callable[[str], str] = name_key) -> None:
        self.key = key
        self.writer: dict[str, int] = {}
        self.readers: dict[str, list[int]] = {}
        self.all_readers: list[int] = []  # statements that read every name
        self.seen: dict[str, int] = {}  # per name: len(all_readers) when last written

    def dependencies(self, reads: Iterable[str], writes: Iterable[str], read_all: bool) -> set[int]:
        deps = {self.writer[key] for key in map(self.key, reads) if key in self.writer}
        if read_all:
            deps.update(self.writer.values())
        for key in map(self.key, writes):
            if key in self.writer:
                deps.add(self.writer[key])
            deps.update(self.readers.get(key, ()))
            deps.update(self.all_readers[self.seen.get(key, 0) :])
        return deps

    def record(
        self, index: int, reads: Iterable[str], writes: Iterable[str], read_all: bool
    ) -> None:
        for key in map(self.key, reads):
            self.readers.setdefault(key, []).append(index)
        if read_all:
            self.all_readers.append(index)
        for key in map(self.key, writes):
            self.writer[key] = index
            self.readers[key] = []
            self.seen[key] = len(self.all_readers)


class _Graph:
    """Builds the DAG one statement at a time, in program order."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.io: dict[str, StatementIO] = {}
        self.after: dict[str, tuple[str, ...]] = {}
        self.ancestors: list[int] = []  # per statement: a bit set of every statement before it
        self.sinks: set[int] = set()  # statements nothing depends on yet
        self.views: dict[str, frozenset[str]] = {}  # view key -> tables it reads
        self._reset(None)

    def _reset(self, barrier: int | None) -> None:
        self.barrier = barrier
        self.tables, self.models, self.files = _Names(), _Names(), _Names(str)

    def add(self, statement_id: str, facts: _Facts) -> None:
        io = self._expand_views(facts)
        index = len(self.ids)
        if io.barrier:
            deps = set(self.sinks)
            self._reset(index)
        else:
            deps = self.tables.dependencies(io.reads_tables, io.writes_tables, False)
            deps |= self.models.dependencies(io.reads_models, io.writes_models, io.reads_all_models)
            deps |= self.files.dependencies((), io.writes_files, False)
            if not deps and self.barrier is not None:
                deps = {self.barrier}
            self.tables.record(index, io.reads_tables, io.writes_tables, False)
            self.models.record(index, io.reads_models, io.writes_models, io.reads_all_models)
            self.files.record(index, (), io.writes_files, False)
        reach = 0
        for dep in deps:
            reach |= self.ancestors[dep]
        direct = sorted(dep for dep in deps if not reach >> dep & 1)
        self.ancestors.append(reach | sum(1 << dep for dep in direct))
        self.sinks.difference_update(direct)
        self.sinks.add(index)
        self.ids.append(statement_id)
        self.io[statement_id] = io
        self.after[statement_id] = tuple(self.ids[dep] for dep in direct)

    def _expand_views(self, facts: _Facts) -> StatementIO:
        """``facts.io`` also reading the tables behind the views it reads; tracks the views."""
        io = facts.io
        behind = (self.views.get(name_key(name), frozenset()) for name in io.reads_tables)
        io = replace(io, reads_tables=io.reads_tables.union(*behind))
        renamed = self.views.get(name_key(facts.rename[0])) if facts.rename else None
        for name in io.writes_tables:
            self.views.pop(name_key(name), None)
        if facts.view is not None:
            self.views[name_key(facts.view)] = io.reads_tables
        if facts.rename and renamed is not None:
            self.views[name_key(facts.rename[1])] = renamed
        return io
