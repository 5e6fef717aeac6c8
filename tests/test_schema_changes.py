"""What a standard SQL statement does to the tables, as sqlml check replays it: the query of
a CREATE TABLE ... AS found in the text as written, in each dialect's forms."""

from __future__ import annotations

import pytest

from sqlml.semantics.schema_changes import schema_change

CASES = [
    # dialect, statement, action, kind, names, its query (CREATE TABLE ... AS)
    ("duckdb", "CREATE OR REPLACE TABLE churn AS\nSELECT * FROM read_csv('c.csv', "
     "types = {'churned': 'VARCHAR'}) -- the file", "create as", "table", [["churn"]],
     "SELECT * FROM read_csv('c.csv', types = {'churned': 'VARCHAR'}) -- the file"),
    ("duckdb", "CREATE TABLE t AS (SELECT 1 AS x)", "create as", "table", [["t"]],
     "(SELECT 1 AS x)"),
    ("duckdb", "CREATE TABLE t AS WITH q AS (SELECT 1 AS x) SELECT * FROM q", "create as",
     "table", [["t"]], "WITH q AS (SELECT 1 AS x) SELECT * FROM q"),
    ("mysql", "CREATE TABLE t SELECT 1 AS x", "create as", "table", [["t"]], "SELECT 1 AS x"),
    ("mysql", "CREATE TABLE t (a INT) ENGINE=InnoDB AS SELECT 1 AS a", "create as", "table",
     [["t"]], "SELECT 1 AS a"),
    ("postgres", "CREATE TABLE t (a, b) AS SELECT 1, 2 WITH NO DATA", "create as", "table",
     [["t"]], "SELECT 1, 2 "),
    ("postgres", "CREATE TABLE t WITH (fillfactor = 70) AS SELECT 1 AS x", "create as", "table",
     [["t"]], "SELECT 1 AS x"),
    ("duckdb", "CREATE TABLE s.t (a INTEGER, b TEXT)", "create", "table", [["s", "t"]], None),
    ("duckdb", "CREATE SCHEMA IF NOT EXISTS iris", "create", "schema", [["iris"]], None),
    ("mysql", "CREATE DATABASE iris", "create", "schema", [["iris"]], None),
    ("duckdb", "CREATE VIEW v AS SELECT 1", "create", "view", [["v"]], None),
    ("postgres", "CREATE MATERIALIZED VIEW v AS SELECT 1", "writes", "view", [["v"]], None),
    ("postgres", "SELECT 1 AS x INTO t", "writes", "table", [["t"]], None),
    ("duckdb", "ALTER TABLE t RENAME TO u", "alter", "table", [["t"], ["u"]], None),
    ("duckdb", "ALTER TABLE t RENAME COLUMN a TO b", "alter", "table", [["t"]], None),
    ("mysql", "DROP TABLE IF EXISTS a, b", "drop", "table", [["a"], ["b"]], None),
    ("duckdb", "DROP SCHEMA s CASCADE", "drop", "schema", [["s"]], None),
    ("duckdb", "INSERT INTO t SELECT 1", "rows", "", [], None),
    ("duckdb", "WITH q AS (SELECT 1) SELECT * FROM q", "query", "", [], None),
    ("duckdb", "CREATE INDEX i ON t (a)", "nothing", "", [], None),
    ("duckdb", "EXPLAIN SELECT 1", "nothing", "", [], None),
    ("duckdb", "INTO m", "nothing", "", [], None),  # no statement of any database starts so
]  # fmt: skip


@pytest.mark.parametrize(("dialect", "sql", "action", "kind", "names", "query"), CASES)
def test_what_a_statement_does(dialect, sql, action, kind, names, query):
    change = schema_change(sql, dialect)
    assert (change.action, change.kind, [list(n) for n in change.names]) == (action, kind, names)
    assert (sql[slice(*change.query)] if change.query else None) == query


@pytest.mark.parametrize("sql", ["SET search_path = x", "USE iris", "COPY t TO 'f.csv'",
                                 "CREATE MACRO f(a) AS a + 1", "LOAD httpfs"])  # fmt: skip
def test_a_statement_of_unknown_effects(sql):
    assert schema_change(sql, "duckdb") is None
