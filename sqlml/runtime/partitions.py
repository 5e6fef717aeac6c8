"""Row partitions of a SELECT: ``count`` disjoint parts that cover its rows, each read on a
connection of its own, each read costing its share of the rows only.

One process (rank 0 of ``train.workers``) stages the SELECT once (:func:`stage`): the
database computes it once into a helper table (DuckDB: a Parquet file) in which each row
has its part's number, stored so that a part is read without the others (MySQL/MariaDB
cluster the table by it; PostgreSQL, SQLite and DuckDB store the rows in its order, with an
index or the file's statistics). Each process then reads its part of that table
(:func:`part`), and rank 0 drops it (:func:`drop`).

A row's part is a function of its values (of its key columns: the whole row, or a ranker's
query column, so that each query stays whole): a hash of them modulo ``count`` where the
database has a hash of values, else the rank of the key in the order of all keys (the
datasource's ``partitioning``). So the split is the same whichever process stages it and
whenever (a retried training reads the same parts), whatever order the database returns
the rows in; row numbers over an unordered result would not be.

Identical keys always fall in one part, so a part may hold more rows than another; with
many distinct keys the parts are about equal.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from sqlml.datasources import Datasource
from sqlml.tables import HELPER_MARK

NUMBER = "sqlml_partition"  # the staged column of each row's part


def columns(datasource: Datasource, select: str) -> dict[str, str]:
    """The columns ``select`` returns (no rows read): name -> the kind of its values as
    sqlml reads them (numpy's: ``f`` floating point, ``i`` integers, ``O`` objects...)."""
    read = datasource.read(f"SELECT * FROM ({select}) AS sqlml_rows LIMIT 0")
    return {name: values.dtype.kind for name, values in read.items()}


def number(
    datasource: Datasource, kinds: Mapping[str, str], count: int, keys: Sequence[str] | None
) -> str:
    """The SQL of a row's part (0 .. ``count`` - 1) over columns ``kinds`` (see
    :func:`columns`), a function of its ``keys`` (default: every column)."""
    parts = datasource.partitioning

    def key(name: str) -> str:
        spelled = datasource.quote([name])
        return parts.fractional.format(name=spelled) if kinds.get(name) == "f" else spelled

    key_list = ", ".join(key(name) for name in (kinds if keys is None else keys))
    return parts.number.format(keys=key_list, count=int(count))


def stage(
    datasource: Datasource,
    select: str,
    kinds: Mapping[str, str],
    count: int,
    keys: Sequence[str] | None = None,
) -> tuple[str, str]:
    """Compute ``select`` (columns ``kinds``) once into a new helper table whose rows carry
    their part of ``count``: its name (for :func:`drop`) and the relation its parts are read
    from (for :func:`part`)."""
    if count < 1:
        raise ValueError(f"{count} parts")
    table = f"workers{HELPER_MARK}parts_{uuid.uuid4().hex[:12]}"
    numbered = number(datasource, kinds, count, keys)
    return table, datasource.stage_parts(table, select, numbered, NUMBER)


def part(datasource: Datasource, relation: str, kinds: Mapping[str, str], index: int) -> str:
    """The SELECT of part ``index`` of the rows staged in ``relation`` (:func:`stage`): its
    rows, with the columns ``kinds`` of the staged SELECT."""
    names = ", ".join(datasource.quote([name]) for name in kinds)
    where = f"{datasource.quote([NUMBER])} = {int(index)}"
    return f"SELECT {names} FROM {relation} AS sqlml_parts WHERE {where}"


def drop(datasource: Datasource, table: str) -> None:
    """Drop the helper table ``table`` made by :func:`stage` (nothing if it is gone)."""
    datasource.drop_parts(table)
