"""Dependency analysis: which tables and models each statement reads and writes, and the DAG.

Statement B runs after A when B reads what A writes (read after write), or writes what A
reads or writes (write after read, write after write): running the DAG in parallel keeps
the program's meaning. Tables are found with sqlglot. When in doubt the analysis is
conservative:

- names compare by their last part, table names lower-cased (``main.T`` and ``t`` are one
  table), since the default schema and the database's case rules are not known here; model
  names as written (sqlml's model store compares them exactly);
- reading a view reads the tables behind it (as far as the program created the view);
- a statement sqlglot cannot parse, or one whose effects are not plain table reads and
  writes (``SET``, ``USE``, ``COPY``, ``CREATE FUNCTION``, ...), is a barrier: it runs
  after every earlier statement and before every later one;
- ``SHOW MODELS`` reads every model;
- an ``ASSERT`` reads the tables of its condition's subqueries.

Edges are direct dependencies only: an edge implied by others is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlml import ir
from sqlml.semantics.sql_check import parse_sql
from sqlml.statements import KINDS

# The statements understood: the ones that write (only these kinds of the ones with kinds)...
_WRITE_KINDS: dict[type[exp.Expression], set[str]] = {
    exp.Create: {"TABLE", "VIEW", "INDEX"},
    exp.Drop: {"TABLE", "VIEW"},
    exp.Alter: {"TABLE", "VIEW"},
}
_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.TruncateTable, *_WRITE_KINDS)
# ...and the ones that only read. The rest are barriers.
_UNDERSTOOD = (exp.Query, exp.Describe, *_WRITES)


@dataclass(frozen=True)
class StatementIO:
    """The tables (names lower-cased, dotted) and models (as written) one statement reads
    and writes."""

    reads_tables: frozenset[str] = frozenset()
    writes_tables: frozenset[str] = frozenset()
    reads_models: frozenset[str] = frozenset()
    writes_models: frozenset[str] = frozenset()
    reads_all_models: bool = False  # SHOW MODELS
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
    kind = KINDS.get(statement.kind)
    if kind is None:
        return _Facts(StatementIO(barrier=True))
    effects = kind.effects
    if effects.standard_sql:
        return _sql_facts(statement.text, dialect)
    io = _extended(
        list(effects.values(statement, effects.queries)),
        dialect,
        reads_models=effects.values(statement, effects.reads_models),
        writes_models=effects.values(statement, effects.writes_models + effects.drops_models),
        writes_tables=(".".join(t) for t in effects.values(statement, effects.writes_tables)),
    )
    if effects.reads_all_models:
        return _Facts(replace(io.io, reads_all_models=True))
    return io


def _extended(
    selects: Sequence[str],
    dialect: str,
    *,
    reads_models: Iterable[str] = (),
    writes_models: Iterable[str] = (),
    writes_tables: Iterable[str] = (),
) -> _Facts:
    """An extended statement: its SELECTs' reads plus the given model and table effects."""
    ios = [_sql_facts(select, dialect).io for select in selects]
    return _Facts(
        StatementIO(
            reads_tables=frozenset().union(*(io.reads_tables for io in ios)),
            writes_tables=frozenset().union(*(io.writes_tables for io in ios))
            | _names(writes_tables),
            reads_models=frozenset(reads_models),  # models are named exactly as written
            writes_models=frozenset(writes_models),
            barrier=any(io.barrier for io in ios),
        )
    )


def tables_read(sql: str, dialect: str) -> frozenset[str]:
    """The tables a query reads (names lower-cased, dotted), views not expanded."""
    return _sql_facts(sql, dialect).io.reads_tables


def same_table(a: str, b: str) -> bool:
    """Whether two table names (dotted) name one table, as the analysis compares them."""
    return _key(a.lower()) == _key(b.lower())


@lru_cache(maxsize=64)  # a program is analysed more than once (its DAG, then each step)
def _sql_facts(text: str, dialect: str) -> _Facts:
    """A standard SQL statement's table reads and writes; a barrier if not understood."""
    try:
        trees = parse_sql(text, dialect)
    except (SqlglotError, RecursionError):  # too deeply nested for sqlglot's parser
        return _Facts(StatementIO(barrier=True))
    if len(trees) != 1 or trees[0] is None:  # no statement, or several
        return _Facts(StatementIO(barrier=True))
    tree = trees[0]
    kind, kinds = str(tree.args.get("kind") or "").upper(), _WRITE_KINDS.get(type(tree))
    if not isinstance(tree, _UNDERSTOOD) or (kinds is not None and kind not in kinds):
        return _Facts(StatementIO(barrier=True))
    targets = _targets(tree)
    if isinstance(tree, _WRITES) and not targets:
        return _Facts(StatementIO(barrier=True))
    written = {id(table) for table in targets}
    reads = [t for t in _tables(tree) if id(t) not in written and not _is_cte(t)]
    io = StatementIO(reads_tables=_table_names(reads), writes_tables=_table_names(targets))
    if isinstance(tree, exp.Create) and kind == "VIEW":
        return _Facts(io, view=_table_name(targets[0]))
    if isinstance(tree, exp.Alter) and len(targets) > 1:
        return _Facts(io, rename=(_table_name(targets[0]), _table_name(targets[1])))
    return _Facts(io)


def _targets(tree: exp.Expression) -> list[exp.Table]:
    """The tables a statement writes; for a join in MySQL's UPDATE, each joined table."""
    match tree:
        case exp.Drop() | exp.TruncateTable():
            return _tables(tree)
        case exp.Update():
            return _tables(tree.this)
        case exp.Delete():
            return list(tree.args.get("tables") or _tables(tree.this)[:1])
        case exp.Alter():
            renames = [a for a in tree.args.get("actions") or () if isinstance(a, exp.AlterRename)]
            return [*_tables(tree.this)[:1], *(t for rename in renames for t in _tables(rename))]
        case exp.Create() | exp.Insert() | exp.Merge():
            return _tables(tree.this)[:1]
    return [table for into in tree.find_all(exp.Into) for table in _tables(into)]


def _tables(tree: exp.Expression | None) -> list[exp.Table]:
    """The tables named in ``tree``, nearest first, but table functions (``read_csv(...)``)."""
    if tree is None:
        return []
    return [t for t in tree.find_all(exp.Table) if isinstance(t.this, exp.Identifier)]


def _is_cte(table: exp.Table) -> bool:
    """Whether ``table`` names a common table expression in scope, not a stored table."""
    if table.args.get("db") or table.args.get("catalog"):
        return False
    name = table.name.lower()
    child: exp.Expression = table
    node = table.parent
    while node is not None:
        visible: list[exp.Expression] = []
        if isinstance(node, exp.With):
            # Inside a CTE: the CTEs before it are visible, and itself if RECURSIVE.
            ctes = node.expressions
            here = next((i for i, cte in enumerate(ctes) if cte is child), len(ctes))
            visible = ctes[: here + bool(node.args.get("recursive"))]
        elif (with_ := node.args.get("with_")) is not None and with_ is not child:
            visible = with_.expressions
        if any(cte.alias_or_name.lower() == name for cte in visible):
            return True
        child, node = node, node.parent
    return False


def _table_name(table: exp.Table) -> str:
    return ".".join(part.name for part in table.parts).lower()


def _table_names(tables: Iterable[exp.Table]) -> frozenset[str]:
    return frozenset(_table_name(t) for t in tables)


def _names(names: Iterable[str]) -> frozenset[str]:
    return frozenset(name.lower() for name in names)


def _key(name: str) -> str:
    """What a table or model is compared by: its last name part."""
    return name.rsplit(".", 1)[-1]


class _Names:
    """For one kind of name (tables or models): its last writer and its readers since."""

    def __init__(self) -> None:
        self.writer: dict[str, int] = {}
        self.readers: dict[str, list[int]] = {}
        self.all_readers: list[int] = []  # statements that read every name
        self.seen: dict[str, int] = {}  # per name: len(all_readers) when last written

    def dependencies(self, reads: Iterable[str], writes: Iterable[str], read_all: bool) -> set[int]:
        deps = {self.writer[key] for key in map(_key, reads) if key in self.writer}
        if read_all:
            deps.update(self.writer.values())
        for key in map(_key, writes):
            if key in self.writer:
                deps.add(self.writer[key])
            deps.update(self.readers.get(key, ()))
            deps.update(self.all_readers[self.seen.get(key, 0) :])
        return deps

    def record(
        self, index: int, reads: Iterable[str], writes: Iterable[str], read_all: bool
    ) -> None:
        for key in map(_key, reads):
            self.readers.setdefault(key, []).append(index)
        if read_all:
            self.all_readers.append(index)
        for key in map(_key, writes):
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
        self.tables, self.models = _Names(), _Names()

    def add(self, statement_id: str, facts: _Facts) -> None:
        io = self._expand_views(facts)
        index = len(self.ids)
        if io.barrier:
            deps = set(self.sinks)
            self._reset(index)
        else:
            deps = self.tables.dependencies(io.reads_tables, io.writes_tables, False)
            deps |= self.models.dependencies(io.reads_models, io.writes_models, io.reads_all_models)
            if not deps and self.barrier is not None:
                deps = {self.barrier}
            self.tables.record(index, io.reads_tables, io.writes_tables, False)
            self.models.record(index, io.reads_models, io.writes_models, io.reads_all_models)
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
        behind = (self.views.get(_key(name), frozenset()) for name in io.reads_tables)
        io = replace(io, reads_tables=io.reads_tables.union(*behind))
        renamed = self.views.get(_key(facts.rename[0])) if facts.rename else None
        for name in io.writes_tables:
            self.views.pop(_key(name), None)
        if facts.view is not None:
            self.views[_key(facts.view)] = io.reads_tables
        if facts.rename and renamed is not None:
            self.views[_key(facts.rename[1])] = renamed
        return io
