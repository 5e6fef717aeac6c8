"""Writing a TO RUN's INTO tables: all of them or none.

One table is written as every statement writes one (``Datasource.write_table``: a staging
table that takes the table's place in one step). Several are first each written into a
staging table of their own; then each staging table takes its table's place, all together
or none (``Datasource.swap_tables``: one transaction where the database's DDL is
transactional, DuckDB, SQLite, PostgreSQL; on MySQL, which commits each DDL statement at
once, one RENAME TABLE of them all). A failure leaves every table as it was; the staging
tables are dropped.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from contextlib import suppress

from sqlml.datasources import Datasource
from sqlml.datasources.base import Columns, short_name
from sqlml.errors import SqlmlError
from sqlml.runtime.cancel import Token


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
    try:
        for table, columns, types in outputs:
            staging = [*table[:-1], f"{short_name(table[-1])}_torun_{uuid.uuid4().hex[:12]}"]
            datasource.write_table(staging, columns, False, token, types)
            staged.append((staging, table))
        token.check()
        datasource.swap_tables(staged, replace)
        staged = []
    finally:
        for staging, _ in staged:
            with suppress(SqlmlError):
                datasource.execute(f"DROP TABLE IF EXISTS {datasource.quote(staging)}")
