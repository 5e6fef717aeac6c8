"""Where a SELECT writes each column it returns, for messages about one of them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlml.semantics.sql_check import parse_sql, shorten


@dataclass(frozen=True)
class Projection:
    """Offsets in a SELECT's text: of each column it names (by its name in the result,
    case folded), and of its first ``*`` (None without one)."""

    named: dict[str, int]
    star: int | None


@lru_cache(maxsize=16)
def projection(select: str, dialect: str) -> Projection:
    """Where ``select`` (a query in ``dialect``) writes its columns; nothing where sqlglot
    cannot read it."""
    try:
        trees = parse_sql(select, dialect)
    except (SqlglotError, RecursionError):
        return Projection({}, None)
    query = trees[0] if len(trees) == 1 else None
    if not isinstance(query, exp.Query):
        return Projection({}, None)
    named: dict[str, int] = {}
    stars: list[int] = []
    short = shorten(select)
    for item in query.selects:
        written = _written(item)
        if written is None or "start" not in written.meta:
            continue
        offset = short.source_offset(written.meta["start"])
        if isinstance(written, exp.Star):
            stars.append(offset)
        else:
            named.setdefault(item.alias_or_name.casefold(), offset)
    return Projection(named, min(stars, default=None))


def _written(item: exp.Expression) -> exp.Expression | None:
    """What names a selected column: its alias, its column's name, or its ``*``."""
    if isinstance(item, exp.Alias):
        return item.args.get("alias")
    if isinstance(item, exp.Column):
        return item.this
    return item if isinstance(item, exp.Star) else None
