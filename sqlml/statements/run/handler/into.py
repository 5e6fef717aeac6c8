"""Writing a TO RUN's INTO tables: all of them or none.

One table is written as every statement writes one (``Datasource.write_table``: a staging
table that takes the table's place in one step). Several are first each written into a
staging table of their own; then, in one transaction, each staging table takes its table's
place. Where the database's DDL is transactional (DuckDB, SQLite, PostgreSQL) the tables
change together or not at all. MySQL commits each rename at once: a failure between two
swaps (a lost connection) leaves the tables swapped so far replaced and the others as they
were; the staging tables left are dropped.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from contextlib import suppress

from sqlml.errors import SqlmlError
from sqlml.runtime.cancel import Token
from sqlml.runtime.datasource import Datasource
from sqlml.runtime.datasource.base import Columns, short_name


def write_tables(
    datasource: Datasource,
    outputs: Sequence[tuple[list[str], Columns, Mapping[str, str]]],
    replace: bool,
    token: Token,
) -> None:
    """Create or replace each table of ``outputs`` with its columns (those named in its
    mapping of the SQL types they are declared with), together."""
    if len(outputs) == 1:
        table, columns, types = outputs[0]
        datasource.write_table(table, columns, replace, token, types)
        return
    staged: list[tuple[list[str], list[str]]] = []
    swapped = 0
    try:
        for table, columns, types in outputs:
            staging = [*table[:-1], f"{short_name(table[-1])}_torun_{uuid.uuid4().hex[:12]}"]
            datasource.write_table(staging, columns, False, token, types)
            staged.append((staging, table))
        token.check()
        with datasource.transaction():
            for staging, table in staged:
                datasource._swap(staging, table, replace)  # the datasource's own swap
                swapped += 1
        staged = []
    finally:
        left = staged if datasource.transactional_ddl else staged[swapped:]
        for staging, _ in left:
            with suppress(SqlmlError):
                datasource.execute(f"DROP TABLE IF EXISTS {datasource.quote(staging)}")
