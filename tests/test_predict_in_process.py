"""PREDICT in the queries of the databases that run in sqlml's process: DuckDB calls a
function of sqlml's a vector of rows at a time for every model, SQLite a row at a time for a
model that does not compile into SQL. The function scores with the family's own scorer on
the features TO PREDICT derives, so the two agree exactly, text categories (seen, unseen,
NULL) included; an error of the model's is reported as sqlml's, with its hint."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import datasource_url

from sqlml.cli import main
from sqlml.datasources import connect

ROWS = 300
IN_PROCESS = ("duckdb", "sqlite")


def _rows() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    a = rng.normal(size=ROWS)
    city = rng.choice(["paris", "oslo", "rome", "lima"], ROWS).astype(object)
    city[rng.random(ROWS) < 0.1] = None
    city[:20] = "mars"  # not in the training rows (WHERE id >= 20)
    a_seen = np.where(rng.random(ROWS) < 0.1, np.nan, a)
    return {
        "id": np.arange(ROWS),
        "a": a_seen,
        "city": city,
        "n": rng.integers(0, 10, ROWS),
        "churn": np.where((a > 0) ^ (city == "rome"), "yes", "no").astype(object),
        "y": 3 * a + (city == "oslo") + rng.normal(scale=0.1, size=ROWS),
    }


def _run(url: str, program: str, capsys) -> None:
    status = main(["-e", program, "--datasource", url])
    assert status == 0, capsys.readouterr().err


def _fetch(url: str, query: str) -> list[tuple]:
    ds = connect(url)
    try:
        result = ds.execute(query)
        assert result is not None
        return [tuple(row) for row in result.rows]
    finally:
        ds.close()


@pytest.fixture(params=IN_PROCESS)
def url(request: pytest.FixtureRequest, tmp_path: Path, capsys) -> str:
    """A database of the kind holding the rows, an XGBoost classifier and regressor over a
    hashed text category (which no database's SQL computes), and TO PREDICT's tables."""
    url = datasource_url(request.param, tmp_path)
    ds = connect(url)
    ds.write_table(["rows"], _rows(), replace=True)
    ds.close()
    _run(
        url,
        "SELECT a, city, churn FROM rows WHERE id >= 20 TO TRAIN xgboost.gbtree WITH "
        "train.num_boost_round = 5, objective = 'binary:logistic', max_depth = 3 "
        "COLUMN a, CATEGORY_HASH(city, 16) LABEL churn INTO c;\n"
        "SELECT a, city, y FROM rows WHERE id >= 20 TO TRAIN xgboost.gbtree WITH "
        "train.num_boost_round = 5, max_depth = 3 COLUMN a, CATEGORY_HASH(city, 16) "
        "LABEL y INTO r;\n"
        "SELECT id, a, city FROM rows TO PREDICT cp.churn "
        "WITH predict.extra_outputs = 'probabilities' USING c;\n"
        "SELECT id, a, city FROM rows TO PREDICT rp.y USING r;",
        capsys,
    )
    return url


def test_classes_probabilities_and_values_equal_to_predict(url: str, capsys):
    _run(
        url,
        "CREATE TABLE result AS SELECT id, PREDICT(c) AS churn, "
        "PREDICT_PROBA(c, 'yes') AS p, PREDICT(r) AS y FROM rows;",
        capsys,
    )
    found = _fetch(url, "SELECT id, churn, p, y FROM result ORDER BY id")
    classes = _fetch(url, "SELECT id, churn, churn_yes FROM cp ORDER BY id")
    values = _fetch(url, "SELECT y FROM rp ORDER BY id")
    assert [row[:2] for row in found] == [row[:2] for row in classes]
    assert {row[1] for row in found} == {"yes", "no"}
    assert [row[2] for row in found] == [row[2] for row in classes]  # the same float32 scores
    assert [row[3] for row in found] == [row[0] for row in values]


def test_in_where_group_by_and_a_join(url: str, capsys):
    _run(
        url,
        "CREATE TABLE result AS SELECT PREDICT(c) AS churn, count(*) AS k FROM rows "
        "WHERE PREDICT_PROBA(c, 'yes') > 0.5 OR city IS NULL GROUP BY PREDICT(c);\n"
        "CREATE TABLE joined AS SELECT o.id, s.p FROM rows AS o "
        "JOIN (SELECT id, PREDICT(r) AS p FROM rows) AS s ON s.id = o.id WHERE o.id < 20;",
        capsys,
    )
    expected = _fetch(
        url,
        "SELECT cp.churn, count(*) FROM cp JOIN rows USING (id) "
        "WHERE churn_yes > 0.5 OR cp.city IS NULL GROUP BY cp.churn ORDER BY cp.churn",
    )
    assert _fetch(url, "SELECT churn, k FROM result ORDER BY churn") == expected
    assert _fetch(url, "SELECT id, p FROM joined ORDER BY id") == _fetch(
        url, "SELECT id, y FROM rp WHERE id < 20 ORDER BY id"
    )


def test_a_view_needs_compiled_sql(url: str, capsys):
    """A view outlives sqlml's process, so its calls' models must compile."""
    assert main(["-e", "CREATE VIEW v AS SELECT PREDICT(c) AS p FROM rows;", "--datasource", url])
    err = capsys.readouterr().err
    assert "<-e>:1:25: error: model c cannot be compiled into SQL" in err, err
    assert "a view (or macro) runs after sqlml's process has ended" in err
    assert "TO PREDICT" in err


def test_the_models_error_is_sqlmls(tmp_path: Path, capsys):
    """CATEGORY_ID(n, 4) takes the values as ids below 4: a row holding 9 is the model's
    error, with its hint, not the database's report of a failed function."""
    for kind in IN_PROCESS:
        (tmp_path / kind).mkdir()
        url = datasource_url(kind, tmp_path / kind)
        ds = connect(url)
        ds.write_table(["rows"], _rows(), replace=True)
        ds.close()
        _run(
            url,
            "SELECT a, city, n, y FROM rows WHERE n < 4 TO TRAIN xgboost.gbtree WITH "
            "train.num_boost_round = 2 COLUMN a, CATEGORY_HASH(city, 8), CATEGORY_ID(n, 4) "
            "LABEL y INTO ids;",
            capsys,
        )
        assert main(["-e", "SELECT id, PREDICT(ids) FROM rows;", "--datasource", url]) != 0
        err = capsys.readouterr().err
        assert "CATEGORY_ID column n holds '" in err and "not an id in [0, 4)" in err, err
        assert "hint: raise bucket_size" in err
        assert "UDF" not in err and "user-defined function" not in err
