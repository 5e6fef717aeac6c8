"""``Datasource.interrupt`` stops the statement another thread runs on that connection."""

from __future__ import annotations

import threading

import pytest

from sqlml.errors import DatasourceError

# A query of each database that runs for minutes at least.
LONG_QUERIES = {
    "duckdb": "SELECT sum(i * i % 13) FROM range(10000000000000) t(i)",
    "sqlite": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
    "WHERE n < 1000000000000) SELECT count(*) FROM r",
    "mysql": "SELECT COUNT(*) FROM information_schema.collations AS a, "
    "information_schema.collations AS b, information_schema.collations AS c, "
    "information_schema.collations AS d",
    "postgres": "SELECT pg_sleep(600)",
}


def test_interrupt_stops_the_running_statement_and_keeps_the_connection(datasource):
    timer = threading.Timer(0.5, datasource.interrupt)
    timer.start()
    try:
        with pytest.raises(DatasourceError):
            datasource.execute(LONG_QUERIES[datasource.dialect])
    finally:
        timer.cancel()
    found = datasource.execute("SELECT 1")
    assert found is not None and found.rows[0][0] == 1
