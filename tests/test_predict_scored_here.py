"""PREDICT of a model that does not compile into SQL on MySQL and PostgreSQL, which cannot
call sqlml: as a whole item of the outermost SELECT list, sqlml scores the rows the query
returns itself, equal to TO PREDICT, and says so (at run and at check); anywhere else the
call is an error at it, with the reason."""

from __future__ import annotations

import csv
import io
import uuid
from pathlib import Path

import numpy as np
import pytest
from conftest import datasource_url

from sqlml.checking import check_program, errors_of
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import SqlmlWarning

ROWS = 200
PREFIX = f"sh{uuid.uuid4().hex[:8]}_"  # the servers' databases are shared by other runs


def _named(sql: str) -> str:
    return sql.replace("sh_", PREFIX)


def _rows() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(9)
    a = rng.normal(size=ROWS)
    city = rng.choice(["paris", "oslo", "rome"], ROWS).astype(object)
    city[rng.random(ROWS) < 0.1] = None
    return {
        "id": np.arange(ROWS),
        "a": np.where(rng.random(ROWS) < 0.1, np.nan, a),
        "city": city,
        "churn": np.where((a > 0) ^ (city == "rome"), "yes", "no").astype(object),
    }


@pytest.fixture(params=["mysql", "postgresql"], scope="module")
def url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A server holding the rows, a classifier over a hashed text category (which no
    database's SQL computes) and TO PREDICT's table of it."""
    url = datasource_url(request.param, tmp_path_factory.mktemp(request.param))
    ds = connect(url)
    ds.write_table([f"{PREFIX}rows"], _rows(), replace=True)
    ds.close()
    program = (
        "SELECT a, city, churn FROM sh_rows TO TRAIN xgboost.gbtree WITH "
        "train.num_boost_round = 4, objective = 'binary:logistic', max_depth = 3 "
        "COLUMN a, CATEGORY_HASH(city, 16) LABEL churn INTO sh_c;\n"
        "SELECT id, a, city FROM sh_rows TO PREDICT sh_cp.churn "
        "WITH predict.extra_outputs = 'probabilities', output.replace = true USING sh_c;"
    )
    assert main(["-e", _named(program), "--datasource", url]) == 0
    yield url
    main(["-e", _named("DROP MODEL IF EXISTS sh_c;"), "--datasource", url])
    ds = connect(url)
    try:
        for table in ("rows", "cp"):
            ds.execute(f"DROP TABLE IF EXISTS {PREFIX}{table}")
    finally:
        ds.close()


def test_scored_here_equals_to_predict(url: str, capsys):
    query = (
        "SELECT id, PREDICT(sh_c), PREDICT_PROBA(sh_c, 'yes') AS p, city\nFROM sh_rows ORDER BY id;"
    )
    capsys.readouterr()
    assert main(["-e", _named(query), "--datasource", url, "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    found = list(csv.reader(io.StringIO(out)))
    assert found[0] == ["id", f"PREDICT({PREFIX}c)", "p", "city"]
    ds = connect(url)
    try:
        result = ds.execute(f"SELECT id, churn, churn_yes, city FROM {PREFIX}cp ORDER BY id")
        assert result is not None
        expected = [tuple(row) for row in result.rows]
    finally:
        ds.close()
    assert len(found) == ROWS + 1
    assert [(int(r[0]), r[1]) for r in found[1:]] == [(i, c) for i, c, _, _ in expected]
    np.testing.assert_allclose(
        [float(r[2]) for r in found[1:]], [p for _, _, p, _ in expected], rtol=1e-6
    )
    assert [r[3] or None for r in found[1:]] == [city for *_, city in expected]
    assert f"<-e>:1:12: warning: model {PREFIX}c cannot be compiled into SQL" in err, err
    assert "sqlml scores the rows the query returns itself" in err


def test_elsewhere_an_error_at_the_call(url: str, capsys):
    query = "SELECT id FROM sh_rows\nWHERE PREDICT(sh_c) = 'yes';"
    assert main(["-e", _named(query), "--datasource", url]) != 0
    err = capsys.readouterr().err
    assert f"<-e>:2:7: error: model {PREFIX}c cannot be compiled into SQL" in err, err
    assert "CATEGORY_HASH" in err


def test_check_warns_of_an_item_and_refuses_a_where(url: str, tmp_path: Path):
    ds = connect(url)
    try:
        found = check_program(
            _named(
                "SELECT id, PREDICT(sh_c) AS c FROM sh_rows;\n"
                "SELECT id FROM sh_rows WHERE PREDICT(sh_c) = 'yes';\n"
                "SELECT x.c FROM (SELECT PREDICT(sh_c) AS c FROM sh_rows) AS x;"
            ),
            ds.dialect,
            datasource=ds,
        )
    finally:
        ds.close()
    warnings = [e for e in found if isinstance(e, SqlmlWarning)]
    assert [(w.line, w.column) for w in warnings] == [(1, 12)]
    assert "sqlml scores the rows the query returns itself" in warnings[0].message
    errors = errors_of(found)
    assert [(e.line, e.column) for e in errors] == [(2, 38), (3, 25)]  # the names prefixed
    assert all("cannot be compiled into SQL" in e.message for e in errors)
