"""``Datasource.interrupt`` stops the statement another thread runs on that connection, and a
standard SQL statement whose token is stopped is interrupted even when the cancel came before
the database had started it (an interrupt then is lost: DuckDB's, SQLite's)."""

from __future__ import annotations

import pytest

from sqlml.errors import DatasourceError
from sqlml.grammar import parse
from sqlml.runtime.cancel import Token, interrupted_once_stopped
from sqlml.runtime.execute import execute
from sqlml.semantics import analyze

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


def _stopped() -> Token:
    token = Token()
    token.cancel("a test")
    return token


def test_interrupt_stops_the_running_statement_and_keeps_the_connection(datasource):
    """Interrupts from another thread, repeated until the statement ends (whichever of them
    comes once it runs), stop it; the connection answers the next statement."""
    with pytest.raises(DatasourceError), interrupted_once_stopped(_stopped(), datasource.interrupt):
        datasource.execute(LONG_QUERIES[datasource.dialect])
    found = datasource.execute("SELECT 1")
    assert found is not None and found.rows[0][0] == 1


def test_a_statement_cancelled_before_it_started_is_interrupted(datasource):
    """The cancel came between the last check and the statement's start: the statement is
    interrupted all the same instead of running to its end."""
    statement = analyze(parse(LONG_QUERIES[datasource.dialect] + ";"), datasource.dialect)[0]
    with pytest.raises(DatasourceError):
        execute(statement, datasource, token=_stopped())
    found = datasource.execute("SELECT 1")
    assert found is not None and found.rows[0][0] == 1
