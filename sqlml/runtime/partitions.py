"""Row partitions of a SELECT: ``count`` disjoint parts that cover its rows, each read on a
connection of its own, the same rows whatever the connection, the session or the order the
database returns them in.

A row's part is a function of its values (of its key columns: the whole row, or a ranker's
query column, so that each query stays whole): a hash of them modulo ``count`` where the
database has a hash of values, else the rank of the key in the order of all keys (the
datasource's ``partitioning``).
Row numbers over an unordered result, and LIMIT/OFFSET, would not do: a parallel or a
synchronized scan returns the rows in another order on each connection.

Identical keys always fall in one part, so a part may hold more rows than another; with
many distinct keys the parts are about equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlml.datasources import Datasource

NUMBER = "sqlml_partition"  # the column of each row's part, where it is computed apart


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
    parts = datasource.partitioning
    if not 0 <= part < count:
        raise ValueError(f"part {part} of {count}")
    quoted = [datasource.quote([name]) for name in kinds]

    def key(name: str) -> str:
        spelled = datasource.quote([name])
        return parts.fractional.format(name=spelled) if kinds.get(name) == "f" else spelled

    key_list = ", ".join(key(name) for name in (kinds if keys is None else keys))
    number = parts.number.format(keys=key_list, count=int(count))
    if not parts.windowed:
        return f"SELECT * FROM ({select}) AS sqlml_rows WHERE {number} = {int(part)}"
    return (
        f"SELECT {', '.join(quoted)} FROM (SELECT *, {number} AS {NUMBER} "
        f"FROM ({select}) AS sqlml_rows) AS sqlml_parts WHERE {NUMBER} = {int(part)}"
    )
