"""Unquoted names beyond ASCII (données, prix_€), which MySQL, PostgreSQL, DuckDB and SQLite
all take unquoted: parsed in the extended clauses, and a whole program run on each database."""

from __future__ import annotations

import pytest
from conftest import KINDS, datasource_url, fetch_rows, run_program

from sqlml.datasources import connect
from sqlml.grammar import parse
from sqlml.semantics import analyze

PROGRAM = """
CREATE TABLE données{n} AS SELECT 1.0 AS x, 2.0 AS prix_€ UNION ALL SELECT 2.0, 4.0
  UNION ALL SELECT 3.0, 6.0 UNION ALL SELECT 4.0, 8.0;
SELECT x, prix_€ FROM données{n} TO TRAIN xgboost.gbtree
  WITH objective = 'reg:squarederror', train.num_boost_round = 2
  COLUMN x LABEL prix_€ INTO modèle{n};
SELECT x FROM données{n} TO PREDICT prédictions{n}.prix_€ USING modèle{n};
DROP MODEL modèle{n};
"""


def test_unquoted_names_beyond_ascii_parse_in_every_clause():
    statements = analyze(parse(PROGRAM.format(n="")))
    train, predict = statements[1], statements[2]
    assert (train.model, train.label, train.features[0].column) == ("modèle", "prix_€", "x")
    assert (predict.table, predict.result_column) == (["prédictions"], "prix_€")
    assert [s.id for s in statements][1:3] == ["s2-train-modele", "s3-predict-predictions-prix"]


@pytest.mark.parametrize("blank", ["\u00a0", "\u2003", "\ufeff"])
def test_blank_space_beyond_ascii_is_no_part_of_a_name(blank):
    (statement,) = analyze(parse(f"SELECT x, y FROM t TO TRAIN DNNRegressor LABEL y INTO{blank}m;"))
    assert statement.model == "m"


@pytest.mark.parametrize("kind", KINDS)
def test_a_program_of_unquoted_names_beyond_ascii_runs(kind, tmp_path, unique_name, capsys):
    url = datasource_url(kind, tmp_path)
    n = unique_name[1:]  # _<hex>: this run's names
    try:
        status, err = run_program(tmp_path, url, PROGRAM.format(n=n), capsys)
        assert status == 0, err
        rows = fetch_rows(url, f"SELECT prix_€ FROM prédictions{n} ORDER BY prix_€")
        assert len(rows) == 4 and rows[0][0] < rows[-1][0]
    finally:
        ds = connect(url)
        ds.execute(f"DROP TABLE IF EXISTS données{n}")
        ds.execute(f"DROP TABLE IF EXISTS prédictions{n}")
        ds.close()
