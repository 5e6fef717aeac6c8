"""The rows a SELECT returned: the check that there are some, and errors naming their source."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from sqlml.datasources import Columns
from sqlml.errors import ModelError, SqlmlError
from sqlml.ir import FeatureColumn
from sqlml.runtime.features_expand import sources
from sqlml.semantics.column_patterns import STAR, is_pattern

# Rows scored at once (a trained model's predictions, a validation set's scores).
SCORE_BATCH = 65536


def check_rows(columns: Columns) -> int:
    """The number of rows; a :class:`ModelError` if the SELECT returned none."""
    rows = len(next(iter(columns.values()))) if columns else 0
    if rows == 0:
        raise ModelError("the SELECT returned no rows", hint="check its WHERE clause and table")
    return rows


@contextmanager
def blame(source: str | None) -> Iterator[None]:
    """Errors in the body name ``source`` (when given) as their cause."""
    try:
        yield
    except SqlmlError as error:
        if source is None:
            raise
        raise type(error)(f"{source}: {error.message}", hint=error.hint) from None


def spelled(columns: Columns, names: Iterable[str | None]) -> Columns:
    """``columns`` with each of ``names`` (as a statement writes them) that it holds in
    another case only renamed to it: SQL's names are case-insensitive, and a database may
    return a column as its table spells it (DuckDB; MySQL for ``*``) whatever the statement
    writes. A name that is there, or that matches no column or several, changes nothing."""
    missing = {name for name in names if name and name not in columns}
    if not missing:
        return columns
    folded: dict[str, list[str]] = {}
    for name in columns:
        folded.setdefault(name.casefold(), []).append(name)
    renamed = {}
    for name in missing:
        found = folded.get(name.casefold(), [])
        if len(found) == 1:
            renamed[found[0]] = name
    return {renamed.get(name, name): values for name, values in columns.items()}


def named_columns(features: Iterable[FeatureColumn], *others: str | None) -> list[str]:
    """The columns ``features`` name (patterns and ``*`` aside), and ``others`` (the label,
    the query column)."""
    named = [name for feature in features for name in sources(feature)]
    return [n for n in [*named, *others] if n and n != STAR and not is_pattern(n)]
