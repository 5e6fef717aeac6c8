"""sqlml export --format sql: a model compiled into SQL, whose view the database runs by
itself, predicts what TO PREDICT writes, row by row, on every database."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import KINDS, datasource_url, fetch_rows
from db_clients import CLIENTS, client_or_skip, run_file

from sqlml.cli import main
from sqlml.datasources import Datasource, connect
from sqlml.models import family
from sqlml.models.store import ModelStore

ROWS = 240
# XGBoost sums its leaves and computes its links in float32, the SQL in doubles (or exact
# decimals): measured, probabilities differ by at most 9e-8 and values by 3e-7 (2e-6 of
# values near 0) on each database.
SCORE_TOLERANCE = 1e-6  # absolute, of a probability
VALUE_TOLERANCE = 1e-6  # relative, and as much absolute, of a regression's value

# (estimator, attributes, label): tiny trainings, each objective the view compiles.
CASES = {
    "binary": ("xgboost.gbtree", "objective = 'binary:logistic', max_depth = 3", "flag"),
    "multi": ("xgboost.gbtree", "objective = 'multi:softprob', max_depth = 3", "kind"),
    "regression": ("xgboost.gbtree", "objective = 'reg:squarederror', max_depth = 4", "y"),
    "dart": ("xgboost.dart", "objective = 'reg:squarederror', rate_drop = 0.3", "y"),
    "linear": ("xgboost.gblinear", "objective = 'multi:softprob'", "kind"),
}


def _rows() -> dict[str, np.ndarray]:
    """Numbers with NULLs (a), fractions (b), integers (n); a 0/1 flag, three text classes
    and a value to learn from them."""
    rng = np.random.default_rng(7)
    a, b, n = rng.normal(size=ROWS), rng.uniform(-2, 2, ROWS), rng.integers(0, 10, ROWS)
    nulls = rng.random(ROWS) < 0.15
    seen = np.where(nulls, 0.0, a)
    kind = np.where(seen + b > 0.5, "high", np.where(seen - b > 0.0, "mid", "low"))
    return {
        "id": np.arange(ROWS),
        "a": np.where(nulls, np.nan, a),  # NaN is written as NULL
        "b": b,
        "n": n,
        "flag": (seen * b + n / 10 > 0.4).astype(np.int64),
        "kind": kind.astype(object),
        "y": 2 * seen - b + 0.3 * n + rng.normal(scale=0.1, size=ROWS),
    }


def _run(url: str, program: str, capsys) -> None:
    status = main(["-e", program, "--datasource", url])
    assert status == 0, capsys.readouterr().err


def _drop(url: str, statements: list[str]) -> None:
    ds = connect(url)
    try:
        for statement in statements:
            ds.execute(statement)
    finally:
        ds.close()


@pytest.fixture(params=KINDS)
def data(request: pytest.FixtureRequest, tmp_path: Path, unique_name: str):
    """A datasource URL of each kind holding the rows in table ``unique_name``."""
    url = datasource_url(request.param, tmp_path)
    ds = connect(url)
    ds.write_table([unique_name], _rows(), replace=True)
    ds.close()
    yield url, unique_name
    _drop(url, [f"DROP TABLE IF EXISTS {unique_name}"])


def _fetch(ds: Datasource, query: str) -> list[tuple]:
    result = ds.execute(query)
    assert result is not None
    return [tuple(row) for row in result.rows]


@pytest.mark.parametrize("case", CASES)
def test_exported_view_predicts_like_to_predict(data, case, tmp_path, capsys):
    url, table = data
    estimator, attributes, label = CASES[case]
    model, predicted, view = f"{table}_m", f"{table}_p", f"{table}_m_predictions"
    classifier = label != "y"
    extra = "WITH predict.extra_outputs = 'probabilities' " if classifier else ""
    _run(
        url,
        f"SELECT a, b, n, {label} FROM {table} TO TRAIN {estimator} "
        f"WITH train.num_boost_round = 4, {attributes} LABEL {label} INTO {model};\n"
        f"SELECT id, a, b, n, {label} FROM {table} TO PREDICT {predicted}.{label} {extra}"
        f"USING {model};",
        capsys,
    )
    file = tmp_path / "model.sql"
    try:
        status = main(["export", model, str(file), "--format", "sql", "--datasource", url])
        assert status == 0, capsys.readouterr().err
        text = file.read_text()
        assert f"CREATE VIEW {_quoted(url, view)} AS" in text
        ds = connect(url)
        try:
            ds.execute(text.rstrip().rstrip(";"))  # the database runs the file's view itself
            expected = _fetch(ds, f"SELECT id, {label} FROM {predicted} ORDER BY id")
            found = _fetch(ds, f"SELECT id, {label} FROM {view} ORDER BY id")
            assert [row[0] for row in found] == [row[0] for row in expected]
            if classifier:
                assert [row[1] for row in found] == [row[1] for row in expected]
                _check_scores(ds, model, table, predicted)
            else:
                got = np.array([row[1] for row in found], dtype=np.float64)
                want = np.array([row[1] for row in expected], dtype=np.float64)
                np.testing.assert_allclose(got, want, rtol=VALUE_TOLERANCE, atol=VALUE_TOLERANCE)
        finally:
            ds.close()
    finally:
        _drop(url, [f"DROP VIEW IF EXISTS {view}", f"DROP TABLE IF EXISTS {predicted}"])
        main(["-e", f"DROP MODEL IF EXISTS {model};", "--datasource", url])


def _quoted(url: str, name: str) -> str:
    return f"`{name}`" if url.startswith("mysql") else f'"{name}"'


def _check_scores(ds: Datasource, model: str, rows: str, predicted: str) -> None:
    """The compiled class probabilities of ``rows`` (a table, and a WHERE clause) are TO
    PREDICT's, within SCORE_TOLERANCE."""
    stored = ModelStore(ds).load(model)
    compiled = family(stored.metadata["family"]).to_sql(stored)
    scores = [expression.sql(dialect=ds.dialect) for expression in compiled.scores.values()]
    found = _fetch(ds, f"SELECT {', '.join(scores)} FROM {rows} ORDER BY id")
    names = [name for name in _fetch_columns(ds, predicted) if "_" in name and name != "id"]
    expected = _fetch(ds, f"SELECT {', '.join(names)} FROM {predicted} ORDER BY id")
    assert len(names) == len(scores)
    np.testing.assert_allclose(
        np.array(found, dtype=np.float64),
        np.array(expected, dtype=np.float64),
        atol=SCORE_TOLERANCE,
    )


def _fetch_columns(ds: Datasource, table: str) -> list[str]:
    result = ds.execute(f"SELECT * FROM {table} WHERE 1 = 0")
    assert result is not None
    return result.columns


@pytest.mark.parametrize(
    ("training", "reason"),
    [
        (
            "SELECT a, b, kind, y FROM {t} TO TRAIN xgboost.gbtree WITH "
            "train.num_boost_round = 2 COLUMN a, b, CATEGORY_HASH(kind, 3) LABEL y INTO {m};",
            "model {m} cannot be compiled into SQL: its feature column CATEGORY_HASH(kind) "
            "hashes its categories (CATEGORY_HASH), which portable SQL cannot do as sqlml does",
        ),
        (
            "SELECT a, b FROM {t} WHERE a IS NOT NULL TO TRAIN sqlflow_models.OneClassSVM "
            "INTO {m};",
            "model {m} (sqlflow_models.OneClassSVM, outlier) cannot be compiled into SQL",
        ),
    ],
    ids=["feature-column", "family"],
)
def test_uncompiled_models_are_refused_with_the_reason(
    training, reason, tmp_path, unique_name, capsys
):
    url = datasource_url("duckdb", tmp_path)
    ds = connect(url)
    ds.write_table([unique_name], _rows(), replace=True)
    ds.close()
    model = f"{unique_name}_m"
    _run(url, training.format(t=unique_name, m=model), capsys)
    file = tmp_path / "model.sql"
    status = main(["export", model, str(file), "--format", "sql", "--datasource", url])
    assert status != 0
    assert reason.format(m=model) in capsys.readouterr().err
    assert not file.exists()


def test_dialect_and_table_options(data, tmp_path, capsys):
    """--dialect writes another database's SQL; --table names the rows the view predicts,
    all their columns (*) when the datasource has no such table."""
    url, table = data
    model = f"{table}_m"
    _run(
        url,
        f"SELECT a, b, n, y FROM {table} TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = 2 LABEL y INTO {model};",
        capsys,
    )
    file = tmp_path / "model.sql"
    try:
        args = ["export", model, str(file), "--format", "sql", "--datasource", url]
        assert main([*args, "--dialect", "mysql", "--table", "shop.customers"]) == 0
        text = file.read_text()
        assert "FROM `shop`.`customers`" in text
        assert "SELECT\n  *,\n" in text
        assert "CAST(`b` AS DOUBLE)" in text
        assert f"-- model {model} version 1 (xgboost.gbtree), compiled into SQL for mysql" in text
        with pytest.raises(SystemExit):
            main([*args, "--table", "x", "--format", "model"])
        assert "--dialect and --table are for --format sql" in capsys.readouterr().err
    finally:
        main(["-e", f"DROP MODEL IF EXISTS {model};", "--datasource", url])


def test_kmeans_view_assigns_the_nearest_centre_like_to_predict(data, tmp_path, capsys):
    """On rows without NULLs (TO PREDICT puts the mean of the rows it scores in their place,
    the SQL the training rows' mean)."""
    url, table = data
    model, predicted, view = f"{table}_m", f"{table}_p", f"{table}_m_predictions"
    _run(
        url,
        f"SELECT a, b, n FROM {table} WHERE a IS NOT NULL TO TRAIN KMeans "
        f"WITH model.n_clusters = 4 INTO {model};\n"
        f"SELECT id, a, b, n FROM {table} WHERE a IS NOT NULL TO PREDICT {predicted}.cluster "
        f"WITH predict.extra_outputs = 'probabilities' USING {model};",
        capsys,
    )
    file = tmp_path / "model.sql"
    try:
        status = main(["export", model, str(file), "--format", "sql", "--datasource", url])
        assert status == 0, capsys.readouterr().err
        ds = connect(url)
        try:
            ds.execute(file.read_text().rstrip().rstrip(";"))
            expected = _fetch(ds, f"SELECT id, cluster FROM {predicted} ORDER BY id")
            found = _fetch(ds, f"SELECT id, prediction FROM {view} WHERE a IS NOT NULL ORDER BY id")
            assert [(i, int(c)) for i, c in found] == [(i, int(c)) for i, c in expected]
            assert len({c for _, c in found}) == 4
            _check_scores(ds, model, f"{table} WHERE a IS NOT NULL", predicted)
        finally:
            ds.close()
    finally:
        _drop(url, [f"DROP VIEW IF EXISTS {view}", f"DROP TABLE IF EXISTS {predicted}"])
        main(["-e", f"DROP MODEL IF EXISTS {model};", "--datasource", url])


@pytest.mark.parametrize("kind", list(CLIENTS))
def test_exported_file_run_by_the_database_client(kind, tmp_path, unique_name, capsys):
    """The file as written, run by sqlite3, mysql or psql, makes a view that predicts the
    classes TO PREDICT writes."""
    client_or_skip(kind)
    url = datasource_url(kind, tmp_path)
    ds = connect(url)
    ds.write_table([unique_name], _rows(), replace=True)
    ds.close()
    model, predicted = f"{unique_name}_m", f"{unique_name}_p"
    view = f"{model}_predictions"
    _run(
        url,
        f"SELECT a, b, n, kind FROM {unique_name} TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = 3, max_depth = 3 LABEL kind INTO {model};\n"
        f"SELECT id, a, b, n FROM {unique_name} TO PREDICT {predicted}.kind USING {model};",
        capsys,
    )
    file = tmp_path / "model.sql"
    try:
        status = main(["export", model, str(file), "--format", "sql", "--datasource", url])
        assert status == 0, capsys.readouterr().err
        run_file(url, file)
        expected = fetch_rows(url, f"SELECT id, kind FROM {predicted} ORDER BY id")
        assert fetch_rows(url, f"SELECT id, kind FROM {view} ORDER BY id") == expected
    finally:
        _drop(
            url,
            [
                f"DROP VIEW IF EXISTS {view}",
                f"DROP TABLE IF EXISTS {predicted}",
                f"DROP TABLE IF EXISTS {unique_name}",
            ],
        )
        main(["-e", f"DROP MODEL IF EXISTS {model};", "--datasource", url])
