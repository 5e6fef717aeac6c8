"""A model sqlml compiled into SQL, used by the database's own client with no sqlml:
``sqlml export MODEL FILE --format sql --dialect postgres|mysql`` of a model trained on
DuckDB, run by ``psql`` or ``mysql`` in a database that holds the same rows but no model,
predicts what TO PREDICT wrote, row by row, as the client reads it back. (A view made with
PREDICT through sqlml and read by the client afterwards: tests/test_predict_function.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import datasource_url, fetch_rows
from db_clients import client_or_skip, client_rows, run_file
from test_predict_function import ROWS
from test_predict_function import rows as _rows

from sqlml.cli import main
from sqlml.datasources import connect

TOLERANCE = 1e-6  # relative, and as much absolute, of a regression's value (float32 sums)
DIALECTS = {"postgresql": "postgres", "mysql": "mysql"}


def _run(url: str, program: str, capsys) -> None:
    status = main(["-e", program, "--datasource", url])
    assert status == 0, capsys.readouterr().err


@pytest.mark.parametrize("kind", list(DIALECTS))
def test_the_exported_file_run_by_the_client_predicts_like_to_predict(
    kind, tmp_path: Path, unique_name: str, capsys
):
    client_or_skip(kind)
    server, trained_on = datasource_url(kind, tmp_path), datasource_url("duckdb", tmp_path)
    table, rows = unique_name, _rows()
    for url in (trained_on, server):
        ds = connect(url)
        ds.write_table([table], rows, replace=True)
        ds.close()
    classifier, regressor = f"{table}_c", f"{table}_r"
    _run(
        trained_on,
        f"SELECT a, b, n, churn FROM {table} TO TRAIN xgboost.gbtree WITH "
        "train.num_boost_round = 4, objective = 'binary:logistic', max_depth = 3 "
        f"LABEL churn INTO {classifier};\n"
        f"SELECT a, b, n, y FROM {table} TO TRAIN xgboost.gbtree WITH "
        f"train.num_boost_round = 4, max_depth = 3 LABEL y INTO {regressor};\n"
        f"SELECT id, a, b, n FROM {table} TO PREDICT {table}_cp.churn USING {classifier};\n"
        f"SELECT id, a, b, n FROM {table} TO PREDICT {table}_rp.y USING {regressor};",
        capsys,
    )
    try:
        for model in (classifier, regressor):
            file = tmp_path / f"{model}.sql"
            exported = main(
                ["export", model, str(file), "--format", "sql", "--dialect", DIALECTS[kind],
                 "--datasource", trained_on]
            )  # fmt: skip
            assert exported == 0, capsys.readouterr().err
            run_file(server, file)  # the view over the server's table of the same rows
        classes = client_rows(server, f"SELECT id, churn FROM {classifier}_predictions ORDER BY id")
        expected = fetch_rows(trained_on, f"SELECT id, churn FROM {table}_cp ORDER BY id")
        assert [(int(i), c) for i, c in classes] == expected
        assert {c for _, c in expected} == {"yes", "no"}
        values = client_rows(server, f"SELECT id, y FROM {regressor}_predictions ORDER BY id")
        expected = fetch_rows(trained_on, f"SELECT id, y FROM {table}_rp ORDER BY id")
        assert [int(i) for i, _ in values] == [i for i, _ in expected] == list(range(ROWS))
        np.testing.assert_allclose(
            np.array([float(v) for _, v in values]),
            np.array([v for _, v in expected], dtype=np.float64),
            rtol=TOLERANCE,
            atol=TOLERANCE,
        )
    finally:
        ds = connect(server)
        try:
            for model in (classifier, regressor):
                ds.execute(f"DROP VIEW IF EXISTS {model}_predictions")
            ds.execute(f"DROP TABLE IF EXISTS {table}")
        finally:
            ds.close()
