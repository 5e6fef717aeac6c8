"""Standard SQL checked with sqlglot in the datasource's dialect."""

from __future__ import annotations

import pytest

from sqlml.errors import CheckError
from sqlml.grammar import parse
from sqlml.semantics import analyze


def check(text: str, dialect: str = "duckdb") -> None:
    analyze(parse(text), dialect)


@pytest.mark.parametrize(
    ("text", "dialect"),
    [
        ("SELECT * EXCLUDE (id) FROM t TO TRAIN xgboost.gbtree LABEL y INTO m;", "duckdb"),
        ("FROM t SELECT a, y TO TRAIN xgboost.gbtree LABEL y INTO m;", "duckdb"),
        ("WITH s AS (SELECT * FROM t) SELECT * FROM s TO PREDICT p.y USING m;", "mysql"),
        ("SELECT `a b`, y FROM t TO TRAIN xgboost.gbtree LABEL y INTO m;", "mysql"),
        ("LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE t;", "mysql"),  # not a query: unchecked
        ("CREATE OR REPLACE TABLE t AS SELECT * FROM read_csv('x.csv');", "duckdb"),
        ("SHOW TABLES; DESCRIBE t; PRAGMA version;", "duckdb"),
    ],
)
def test_valid_sql_passes(text, dialect):
    check(text, dialect)


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("SELECT * FROM t WHERE;", 1, 17, "SQL syntax error near 'WHERE'"),
        ("SELECT 1;\nSELECT * FROM t WHERE x = (1 TO TRAIN xgboost.gbtree LABEL y INTO m;",
         2, 28, "SQL syntax error near '1': Expecting )"),
        ("SELECT 1;\n  SELECT a\n  FROM t WHERE TO PREDICT p.y USING m;", 3, 10,
         "SQL syntax error near 'WHERE'"),
        ("INSERT INTO t VALUES (1) TO TRAIN xgboost.gbtree LABEL y INTO m;", 1, 1,
         "the SELECT before TO TRAIN must be a single SELECT"),
        ("SELEC * FROM t TO TRAIN xgboost.gbtree LABEL y INTO m;", 1, 9,
         "SQL syntax error near 'FROM': an expression is incomplete"),
    ],
)  # fmt: skip
def test_errors_point_into_the_program(text, line, column, message):
    with pytest.raises(CheckError) as caught:
        check(text)
    assert (caught.value.line, caught.value.column) == (line, column), caught.value.render()
    assert caught.value.message.startswith(message)
