"""Portable SQL that recreates a tutorial's tables, shared by every ``data.py`` here.

The SQL runs unchanged on DuckDB and MySQL (through ``sqlml run``): identifiers are plain
(never quoted), strings are single-quoted and may not hold a backslash (MySQL reads it as an
escape, DuckDB does not), floats are written with enough digits to round-trip.

API:

- ``sql_value(value) -> str``: one SQL literal (``NULL``, a number, ``'text'``).
- ``schema_sql(schema) -> str``: ``CREATE SCHEMA IF NOT EXISTS schema;``.
- ``table_sql(table, columns, rows, batch=500) -> list[str]``: the statements that drop
  ``table`` (``"schema.name"``), create it with ``columns`` (``[(name, sql_type), ...]``) and
  insert ``rows`` (sequences in column order), at most ``batch`` rows per INSERT.
- ``emit(statements)``: print the statements to stdout, one per line.

A ``data.py`` (in ``examples/sqlflow/<tutorial>/``) imports this module with
``sys.path.insert(0, str(Path(__file__).resolve().parent.parent))``, builds its rows with
numpy from a fixed seed and ends with, for example::

    emit([schema_sql("iris"), *table_sql("iris.train", COLUMNS, rows)])
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import numpy as np

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")


def _identifier(name: str) -> str:
    if not IDENTIFIER.fullmatch(name):
        raise ValueError(f"not a plain (optionally schema-qualified) identifier: {name!r}")
    return name


def sql_value(value: object) -> str:
    """``value`` as a SQL literal both DuckDB and MySQL read the same way."""
    if value is None:
        return "NULL"
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"no portable SQL literal for {number}")
        return repr(number)
    if isinstance(value, str):
        if "\\" in value:
            raise ValueError(f"a backslash is read differently by MySQL and DuckDB: {value!r}")
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"no SQL literal for a {type(value).__name__}: {value!r}")


def schema_sql(schema: str) -> str:
    """The statement that creates ``schema`` (a database on MySQL) unless it exists."""
    return f"CREATE SCHEMA IF NOT EXISTS {_identifier(schema)};"


def table_sql(
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Iterable[Sequence[object]],
    batch: int = 500,
) -> list[str]:
    """DROP, CREATE and INSERT statements that make ``table`` hold exactly ``rows``."""
    name = _identifier(table)
    fields = ", ".join(f"{_identifier(column)} {sql_type}" for column, sql_type in columns)
    statements = [f"DROP TABLE IF EXISTS {name};", f"CREATE TABLE {name} ({fields});"]
    values = []
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(f"{table}: a row of {len(row)} values for {len(columns)} columns")
        values.append("(" + ", ".join(sql_value(v) for v in row) + ")")
    for start in range(0, len(values), batch):
        statements.append(f"INSERT INTO {name} VALUES {', '.join(values[start : start + batch])};")
    return statements


def emit(statements: Iterable[str]) -> None:
    """Print ``statements`` to stdout, one a line."""
    for statement in statements:
        print(statement)
