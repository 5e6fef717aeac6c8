"""PREDICT_CONTRIBUTION(m, 'feature' [, 'class']): each row's SHAP contribution of a
feature to a tree model's raw score, as XGBoost's ``pred_contribs`` computes it, on every
database (in sqlml's process; on MySQL and PostgreSQL as an item of the outermost SELECT
list), with clear errors for what a model does not give."""

from __future__ import annotations

import csv
import io
import uuid

import numpy as np
import pytest
import xgboost as xgb
from conftest import KINDS, datasource_url

from sqlml.checking import check_program, errors_of
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore

ROWS = 150
PREFIX = f"pc{uuid.uuid4().hex[:8]}_"  # the servers' databases are shared by other runs


def _named(sql: str) -> str:
    return sql.replace("pc_", PREFIX)


def _rows() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=ROWS), rng.normal(size=ROWS)
    return {
        "id": np.arange(ROWS),
        "a": np.where(rng.random(ROWS) < 0.1, np.nan, a),
        "b": b,
        "churn": np.where(a - b > 0, "yes", "no").astype(object),
        "kind": np.array(["x", "y", "z"], dtype=object)[(a > 0).astype(int) + (b > 0)],
    }


@pytest.fixture(params=KINDS, scope="module")
def url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    url = datasource_url(request.param, tmp_path_factory.mktemp(request.param))
    ds = connect(url)
    ds.write_table([f"{PREFIX}rows"], _rows(), replace=True)
    ds.close()
    program = (
        "SELECT a, b, churn FROM pc_rows TO TRAIN xgboost.gbtree WITH "
        "train.num_boost_round = 4, objective = 'binary:logistic', max_depth = 3 "
        "LABEL churn INTO pc_c;\n"
        "SELECT a, b, kind FROM pc_rows TO TRAIN xgboost.gbtree WITH "
        "train.num_boost_round = 3, objective = 'multi:softprob', max_depth = 2 "
        "LABEL kind INTO pc_k;"
    )
    assert main(["-e", _named(program), "--datasource", url]) == 0
    yield url
    main(["-e", _named("DROP MODEL pc_c; DROP MODEL pc_k;"), "--datasource", url])
    ds = connect(url)
    try:
        ds.execute(f"DROP TABLE IF EXISTS {PREFIX}rows")
    finally:
        ds.close()


def _contributions(url: str, model: str) -> np.ndarray:
    """XGBoost's own ``pred_contribs`` of the rows, by id (rows x [classes x] a, b, bias)."""
    ds = connect(url)
    try:
        booster = xgb.Booster()
        booster.load_model(bytearray(ModelStore(ds).load(PREFIX + model).data))
        data = ds.read(f"SELECT a, b FROM {PREFIX}rows ORDER BY id")
    finally:
        ds.close()
    x = np.column_stack([data["a"], data["b"]]).astype(np.float32)
    return booster.predict(xgb.DMatrix(x), pred_contribs=True)


def _query(url: str, sql: str, capsys) -> list[list[str]]:
    capsys.readouterr()
    assert main(["-e", _named(sql), "--datasource", url, "--format", "csv"]) == 0
    return list(csv.reader(io.StringIO(capsys.readouterr().out)))[1:]


def test_contributions_equal_xgboosts(url: str, capsys):
    found = _query(
        url,
        "SELECT id, PREDICT_CONTRIBUTION(pc_c, 'a') AS a, PREDICT_CONTRIBUTION(pc_c, 'b') AS b,"
        " PREDICT_CONTRIBUTION(pc_c, 'b', 'no') AS b_no,"
        " PREDICT_CONTRIBUTION(pc_k, 'a', 'z') AS k_a FROM pc_rows ORDER BY id;",
        capsys,
    )
    values = np.array([[float(v) for v in row[1:]] for row in found])
    binary, multi = _contributions(url, "c"), _contributions(url, "k")
    np.testing.assert_allclose(values[:, 0], binary[:, 0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(values[:, 1], binary[:, 1], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(values[:, 2], -binary[:, 1], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(values[:, 3], multi[:, 2, 0], rtol=1e-6, atol=1e-7)
    assert np.abs(values[:, 0]).max() > 0.01  # the features do contribute


def test_in_a_where_in_process(url: str, capsys):
    if not url.startswith(("duckdb", "sqlite")):
        assert main(
            ["-e", _named("SELECT id FROM pc_rows WHERE PREDICT_CONTRIBUTION(pc_c, 'a') > 0;"),
             "--datasource", url]
        )  # fmt: skip
        assert "is not compiled into SQL" in capsys.readouterr().err
        return
    found = _query(
        url, "SELECT id FROM pc_rows WHERE PREDICT_CONTRIBUTION(pc_c, 'a') > 0 ORDER BY id;", capsys
    )
    expected = np.flatnonzero(_contributions(url, "c")[:, 0] > 0)
    assert [int(row[0]) for row in found] == expected.tolist()


def test_what_a_model_does_not_give(url: str):
    ds = connect(url)
    try:
        found = errors_of(
            check_program(
                _named(
                    "SELECT PREDICT_CONTRIBUTION(pc_c, 'nope') AS x FROM pc_rows;\n"
                    "SELECT PREDICT_CONTRIBUTION(pc_k, 'a') AS x FROM pc_rows;\n"
                    "SELECT PREDICT_CONTRIBUTION(pc_c, 'a', 'maybe') AS x FROM pc_rows;\n"
                    "SELECT PREDICT_CONTRIBUTION(pc_c, 'a') AS x, PREDICT(pc_c) AS y "
                    "FROM pc_rows;"
                ),
                ds.dialect,
                datasource=ds,
            )
        )
    finally:
        ds.close()
    assert [(e.line, e.column) for e in found] == [(1, 8), (2, 8), (3, 8)]
    assert f"model {PREFIX}c has no feature 'nope'" in found[0].message
    assert "its features: 'a', 'b'" in (found[0].hint or "")
    assert f"model {PREFIX}k has 3 classes" in found[1].message
    assert "gives no probability of the class 'maybe'" in found[2].message
