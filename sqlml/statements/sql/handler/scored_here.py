"""``PREDICT`` of a model that does not compile into SQL, on a database that cannot call
sqlml (MySQL, PostgreSQL), scored by sqlml itself where it receives the rows: a whole item
of the outermost SELECT list. The item becomes a placeholder column under its name and the
model's feature columns under hidden names; once the rows arrive, the placeholder takes the
predictions and the hidden columns go. Anywhere else (a WHERE, a subquery, a view) the call
stays an error that says why."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from sqlml.datasources.base import QueryFunction, ResultSet

if TYPE_CHECKING:
    from sqlml.datasources import Datasource
    from sqlml.errors import ModelError
    from sqlml.semantics.predict_calls import SelectItem

_HIDDEN = "sqlml_scored_{call}_{column}"


@dataclass(frozen=True)
class ScoredHere:
    """One item scored by sqlml: its function and the hidden columns it reads."""

    function: QueryFunction
    hidden: list[str]


def scores_here(item: SelectItem | None, datasource: Datasource) -> bool:
    """Whether sqlml scores a call of a model that does not compile, ``item`` of its SELECT
    list (None: none), on ``datasource``."""
    return bool(item and item.outermost and datasource.calls_python is None)


def elsewhere(error: ModelError, datasource: Datasource, lasting: bool) -> ModelError:
    """``error``, of a call that sqlml cannot score where it is, with a hint at where it
    can."""
    if datasource.calls_python is None and not lasting:
        error.hint = (
            "call it as a whole item of the outermost SELECT list, where sqlml scores the rows "
            "the query returns, or score them into a table with TO PREDICT"
        )
    return error


def notice(why: str) -> tuple[str, str]:
    """The warning that an item is scored here, and its hint, ``why`` the database cannot."""
    return (
        f"{why}: sqlml scores the rows the query returns itself",
        "the same call in a WHERE, a subquery or a view is an error",
    )


def item_sql(
    index: int, name: str, function: QueryFunction, columns: list[str], datasource: Datasource
) -> tuple[str, ScoredHere]:
    """The SELECT items that stand for the ``index``-th item scored here, named ``name`` (as
    written in SQL): a placeholder, then the feature ``columns`` under hidden names."""
    hidden = [_HIDDEN.format(call=index, column=i) for i in range(len(columns))]
    reads = [f"{datasource.quote([c])} AS {h}" for c, h in zip(columns, hidden, strict=True)]
    return ", ".join([f"NULL AS {name}", *reads]), ScoredHere(function, hidden)


def scored(result: ResultSet, items: list[ScoredHere]) -> ResultSet:
    """``result`` with each item's placeholder column holding its predictions of the rows'
    hidden columns, which are left out."""
    from sqlml.datasources.arrays import batch_array, inferred_kind, python_values

    columns, rows = list(result.columns), [list(row) for row in result.rows]
    for item in items:
        at = [columns.index(h) for h in item.hidden]
        arrays = []
        for index in at:
            values = [_plain(row[index]) for row in rows]
            arrays.append(batch_array(values, inferred_kind(set(map(type, values)))))
        predictions = python_values(item.function.call(arrays)) if rows else []
        for row, value in zip(rows, predictions, strict=True):
            row[at[0] - 1] = value
    dropped = {h for item in items for h in item.hidden}
    kept = [i for i, name in enumerate(columns) if name not in dropped]
    return ResultSet([columns[i] for i in kept], [tuple(row[i] for i in kept) for row in rows])


def _plain(value: object) -> object:
    """A driver's value as the readers give it: an exact decimal as a double."""
    return float(value) if isinstance(value, Decimal) else value
