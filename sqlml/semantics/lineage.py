"""SQL lineage: which tables one standard SQL statement reads and writes, found with sqlglot.

The dependency analysis (:mod:`sqlml.plan.dag`) orders a program by these effects; the
analysis of statements (:mod:`sqlml.semantics.analyze`) uses them to refuse a statement that
writes a table it reads. When in doubt the lineage is conservative:

- table names compare by their last part, lower-cased (``main.T`` and ``t`` are one table),
  since the default schema and the database's case rules are not known here;
- a statement sqlglot cannot parse, or one whose effects are not plain table reads and
  writes (``SET``, ``USE``, ``COPY``, ``CREATE FUNCTION``, ...), is a barrier: its effects
  are unknown.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlml.semantics.sql_check import parse_sql

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
class SqlEffects:
    """The tables (names lower-cased, dotted) one standard SQL statement reads and writes,
    and what it does to views."""

    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    barrier: bool = False  # effects unknown
    view: str | None = None  # the view it (re)defines over ``reads``
    rename: tuple[str, str] | None = None  # (old, new) name of a renamed table or view


_BARRIER = SqlEffects(barrier=True)


def tables_read(sql: str, dialect: str) -> frozenset[str]:
    """The tables a query reads (names lower-cased, dotted), views not expanded."""
    return sql_effects(sql, dialect).reads


@lru_cache(maxsize=64)  # a program is analysed more than once (its DAG, then each step)
def sql_effects(text: str, dialect: str) -> SqlEffects:
    """A standard SQL statement's table reads and writes; a barrier if not understood."""
    try:
        trees = parse_sql(text, dialect)
    except (SqlglotError, RecursionError):  # too deeply nested for sqlglot's parser
        return _BARRIER
    if len(trees) != 1 or trees[0] is None:  # no statement, or several
        return _BARRIER
    tree = trees[0]
    kind, kinds = str(tree.args.get("kind") or "").upper(), _WRITE_KINDS.get(type(tree))
    if not isinstance(tree, _UNDERSTOOD) or (kinds is not None and kind not in kinds):
        return _BARRIER
    targets = _targets(tree)
    if isinstance(tree, _WRITES) and not targets:
        return _BARRIER
    written = {id(table) for table in targets}
    reads = _table_names(t for t in _tables(tree) if id(t) not in written and not _is_cte(t))
    writes = _table_names(targets)
    if isinstance(tree, exp.Create) and kind == "VIEW":
        return SqlEffects(reads, writes, view=_table_name(targets[0]))
    if isinstance(tree, exp.Alter) and len(targets) > 1:
        return SqlEffects(reads, writes, rename=(_table_name(targets[0]), _table_name(targets[1])))
    return SqlEffects(reads, writes)


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
