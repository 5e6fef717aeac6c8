"""DuckDB's cache of table blocks, trimmed while a stream reads.

DuckDB keeps the blocks of the tables a query read in its buffer pool, up to its
``memory_limit`` (80% of RAM by default), whatever reads them: a stream of 4,000,000 rows
left 286 MiB of them, 1,000,000 rows 71 MiB, so a stream's memory grew with the rows it
read. Between batches, once they pass ``KEPT`` bytes, the limit is lowered to what DuckDB
uses besides them plus ``KEPT`` (DuckDB then evicts them) and reset at once. Statements
running at the same time on the database keep what they hold (it is counted in the lowered
limit); one that asks for more in that instant gets it by DuckDB spilling to its temporary
folder, as near any limit. A limit the user set is left alone: it bounds the cache already
(and DuckDB shows it rounded, so it could not be set back exactly), and so is a locked
configuration (``sqlml ui --no-file-access``), which no limit may change.
"""

from __future__ import annotations

from functools import cache
from typing import Any

KEPT = 64 << 20  # bytes of cached table blocks a stream leaves

_USAGE = (
    "SELECT coalesce(sum(memory_usage_bytes) FILTER (WHERE tag = 'BASE_TABLE'), 0), "
    "coalesce(sum(memory_usage_bytes) FILTER (WHERE tag <> 'BASE_TABLE'), 0) FROM duckdb_memory()"
)
_LIMIT = "SELECT current_setting('memory_limit')"
_LOCKED = "SELECT current_setting('lock_configuration')"


def trim(cursor: Any, duckdb: Any) -> None:
    """Evict the cached table blocks beyond ``KEPT`` through ``cursor`` (a connection of the
    database's own, not the stream's) if the memory limit is DuckDB's default."""
    ((cached, other),) = cursor.execute(_USAGE).fetchall()
    if cached <= KEPT or cursor.execute(_LIMIT).fetchall()[0][0] != _default(duckdb):
        return
    if cursor.execute(_LOCKED).fetchall()[0][0]:  # no setting changes (no file access)
        return
    try:
        cursor.execute(f"SET memory_limit = '{int(other + KEPT)}B'")
    except duckdb.Error:  # more is pinned than that: nothing to gain now
        pass
    finally:
        cursor.execute("RESET memory_limit")


@cache
def _default(duckdb: Any) -> str:
    """DuckDB's default memory limit as it shows it (read from a database of its own)."""
    with duckdb.connect(":memory:") as connection:
        return connection.execute(_LIMIT).fetchall()[0][0]
