"""Row partitions of a SELECT: ``count`` disjoint parts that cover its rows, each read on a
connection of its own, the same rows whatever the connection, the session or the order the
database returns them in.

A row's part is a function of its values (of its key columns: the whole row, or a ranker's
query column, so that each query stays whole): a hash of them modulo ``count`` where the
database has a hash of values, else (SQLite) the rank of the key in the order of all keys.
Row numbers over an unordered result, and LIMIT/OFFSET, would not do: a parallel or a
synchronized scan returns the rows in another order on each connection.

Identical keys always fall in one part, so a part may hold more rows than another; with
many distinct keys the parts are about equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlml.datasources import Datasource
from sqlml.errors import ModelError

NUMBER = "sqlml_partition"  # the column of each row's part, where it is computed apart


@dataclass(frozen=True)
class Dialect:
    """How a database numbers a row's part from its key columns (``{keys}``, a
    comma-separated list of quoted names, each written as ``fractional`` says when it is a
    floating-point column) and the number of parts (``{count}``).

    ``windowed``: the number is a window function's, computed in a subquery and filtered
    outside it (SQL filters before windows)."""

    number: str
    windowed: bool = False
    fractional: str = "{name}"


DIALECTS = {
    # DuckDB's hash of values (UBIGINT), the same on every connection and thread.
    "duckdb": Dialect("hash({keys}) % {count}"),
    # The row of the keys as text, hashed (PostgreSQL 11+); abs() of the remainder keeps
    # each part in 0 .. count - 1.
    "postgres": Dialect("abs(hashtextextended(ROW({keys})::text, 0) % {count})"),
    # MySQL and MariaDB: CRC32 of the keys' text. A DOUBLE is hashed as an integer (times
    # 10^15 below 9,000 in magnitude, where that fits 64 bits; else its integral part):
    # MariaDB writes a DOUBLE as text slowly (a part of 2,000,000 rows of 10 DOUBLEs: 10.0 s
    # to hash as text, 2.6 s so).
    "mysql": Dialect(
        "CRC32(CONCAT_WS(',', {keys})) % {count}",
        fractional="IF(ABS({name}) < 9e3, CAST({name} * 1e15 AS SIGNED), CAST({name} AS SIGNED))",
    ),
    # SQLite has no hash function: the keys' rank among all distinct keys (a sort).
    "sqlite": Dialect("(DENSE_RANK() OVER (ORDER BY {keys}) - 1) % {count}", windowed=True),
}


def columns(datasource: Datasource, select: str) -> dict[str, str]:
    """The columns ``select`` returns (no rows read): name -> the kind of its values as
    sqlml reads them (numpy's: ``f`` floating point, ``i`` integers, ``O`` objects...)."""
    read = datasource.read(f"SELECT * FROM ({select}) AS sqlml_rows LIMIT 0")
    return {name: values.dtype.kind for name, values in read.items()}


def partition(
    datasource: Datasource,
    select: str,
    kinds: Mapping[str, str],
    part: int,
    count: int,
    keys: Sequence[str] | None = None,
) -> str:
    """The SELECT of part ``part`` (0 .. ``count`` - 1) of ``select``'s rows, whose columns
    are ``kinds`` (see :func:`columns`): its rows whose ``keys`` (default: every column)
    fall in it."""
    dialect = DIALECTS.get(datasource.dialect)
    if dialect is None:
        raise ModelError(
            f"train.workers cannot split the rows of a {datasource.dialect} database into "
            "parts yet",
            hint="leave out train.workers to train in one process",
        )
    if not 0 <= part < count:
        raise ValueError(f"part {part} of {count}")
    quoted = [datasource.quote([name]) for name in kinds]

    def key(name: str) -> str:
        spelled = datasource.quote([name])
        return dialect.fractional.format(name=spelled) if kinds.get(name) == "f" else spelled

    key_list = ", ".join(key(name) for name in (kinds if keys is None else keys))
    number = dialect.number.format(keys=key_list, count=int(count))
    if not dialect.windowed:
        return f"SELECT * FROM ({select}) AS sqlml_rows WHERE {number} = {int(part)}"
    return (
        f"SELECT {', '.join(quoted)} FROM (SELECT *, {number} AS {NUMBER} "
        f"FROM ({select}) AS sqlml_rows) AS sqlml_parts WHERE {NUMBER} = {int(part)}"
    )
