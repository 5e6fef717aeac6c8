"""scikit-learn models compiled into SQL: PREDICT(m) and PREDICT_PROBA(m, 'class') of linear
and logistic regression, random forests and k-means equal TO PREDICT, row by row (NULL
features among them), on every database; the other estimators are refused, at run time and
at ``sqlml check``."""

from __future__ import annotations

import math
import uuid
from pathlib import Path

import numpy as np
import pytest
from conftest import KINDS, assert_close, datasource_url

from sqlml.checking import check_program, errors_of
from sqlml.cli import main
from sqlml.datasources import Datasource, connect

ROWS = 240
# TO PREDICT reads features as float32, the SQL as doubles: measured on the four databases,
# linear regression's values differ by at most 2.1e-7, logistic regression's and k-means's
# probabilities by 1.1e-7; forests (whose paths are exact) by 2e-15.
PREFIX = f"sk{uuid.uuid4().hex[:8]}_"  # the servers' databases are shared by other runs
SKLEARN = "sklearn."

# name: (estimator, attributes, label, classes whose probabilities are compared)
MODELS = {
    "linear": ("linear_model.LinearRegression", "", "y", ()),
    "logistic": ("linear_model.LogisticRegression", "", "flag", ("0", "1")),
    "multinomial": ("linear_model.LogisticRegression", "", "kind", ("low", "mid", "high")),
    "forest": (
        "ensemble.RandomForestClassifier",
        "model.n_estimators = 3, model.max_depth = 4, model.min_samples_leaf = 4",
        "kind",
        ("low", "mid", "high"),
    ),
    "binary_forest": (
        "ensemble.RandomForestClassifier",
        "model.n_estimators = 4",
        "flag",
        ("0", "1"),
    ),
    "regression_forest": (
        "ensemble.RandomForestRegressor",
        "model.n_estimators = 3, model.max_depth = 6",
        "y",
        (),
    ),
    "kmeans": ("cluster.KMeans", "model.n_clusters = 3", "", ("0", "1", "2")),
    # one tree about 30 splits deep: nested CASEs beyond what SQLite's parser takes
    "deep_tree": (
        "ensemble.RandomForestRegressor",
        "model.n_estimators = 1, model.bootstrap = false",
        "peak",
        (),
    ),
}


def _named(sql: str) -> str:
    """``sql`` with this run's names: each ``sk_`` (tables, models) prefixed so."""
    return sql.replace("sk_", PREFIX)


def _rows() -> dict[str, np.ndarray]:
    """Numbers with NULLs (a), fractions (b), integers (n), a column NULL in every training
    row (e); a 0/1 flag, three text classes and values to learn from them."""
    rng = np.random.default_rng(5)
    a, b, n = rng.normal(size=ROWS), rng.uniform(-2, 2, ROWS), rng.integers(0, 10, ROWS)
    nulls = rng.random(ROWS) < 0.15
    seen = np.where(nulls, 0.0, a)
    kind = np.where(seen + b > 0.5, "high", np.where(seen - b > 0.0, "mid", "low"))
    return {
        "id": np.arange(ROWS),
        "a": np.where(nulls, np.nan, a),  # NaN is written as NULL
        "b": b,
        "n": n,
        # NULL in the training rows (id < 200): the imputer keeps it as 0s
        "e": np.where(np.arange(ROWS) < 200, np.nan, rng.normal(size=ROWS)),
        "flag": (seen * b + n / 10 > 0.4).astype(np.int64),
        "kind": kind.astype(object),
        "y": 2 * seen - b + 0.3 * n + rng.normal(scale=0.1, size=ROWS),
        # each split of a regression tree cuts off the row of the greatest b
        "peak": 4.0 ** np.maximum(np.argsort(np.argsort(b)) - (ROWS - 30), 0),
    }


def _program() -> str:
    """Train each of :data:`MODELS` on the first 200 rows, and TO PREDICT all rows."""
    statements = []
    for name, (estimator, attributes, label, classes) in MODELS.items():
        with_ = f"WITH {attributes} " if attributes else ""
        labelled = f"LABEL {label} " if label else ""
        selected = f"a, b, n, e{', ' + label if label else ''}"
        result = label or "cluster"
        extra = "predict.extra_outputs = 'probabilities', " if classes else ""
        statements += [
            f"SELECT {selected} FROM sk_rows WHERE id < 200 TO TRAIN {SKLEARN}{estimator} "
            f"{with_}COLUMN a, b, n, NUMERIC(e, 1) {labelled}INTO sk_{name};",
            f"SELECT id, a, b, n, e FROM sk_rows TO PREDICT sk_{name}_p.{result} "
            f"WITH {extra}output.replace = true USING sk_{name};",
        ]
    statements.append(
        "SELECT a, b, n, e FROM sk_rows TO TRAIN sklearn.svm.OneClassSVM INTO sk_svm;"
    )
    return _named("\n".join(statements))


def _fetch(ds: Datasource, query: str) -> list[tuple]:
    result = ds.execute(_named(query))
    assert result is not None
    return [tuple(row) for row in result.rows]


@pytest.fixture(params=KINDS, scope="module")
def trained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A datasource of each kind holding the rows (``sk_rows``), each model of
    :data:`MODELS` and an uncompilable one (``sk_svm``), and TO PREDICT's tables."""
    url = datasource_url(request.param, tmp_path_factory.mktemp(request.param))
    ds = connect(url)
    ds.write_table([f"{PREFIX}rows"], _rows(), replace=True)
    ds.close()
    assert main(["-e", _program(), "--datasource", url]) == 0
    yield url
    ds = connect(url)
    try:
        ds.execute(f"DROP VIEW IF EXISTS {PREFIX}view")
        for table in ("rows", *(f"{name}_p" for name in MODELS)):
            ds.execute(f"DROP TABLE IF EXISTS {PREFIX}{table}")
    finally:
        ds.close()
    dropped = "".join(f"DROP MODEL IF EXISTS sk_{name};" for name in [*MODELS, "svm"])
    main(["-e", _named(dropped), "--datasource", url])


def _query(url: str, query: str, capsys) -> list[tuple]:
    """The rows of ``query`` defining a view with sqlml (a view holds the PREDICT calls
    compiled into SQL on every database), read plainly."""
    status = main(["-e", _named(f"CREATE VIEW sk_view AS {query};"), "--datasource", url])
    assert status == 0, capsys.readouterr().err
    ds = connect(url)
    try:
        return _fetch(ds, "SELECT * FROM sk_view ORDER BY 1")
    finally:
        ds.execute(_named("DROP VIEW sk_view"))
        ds.close()


@pytest.mark.parametrize("name", MODELS)
def test_predict_equals_to_predict(trained, name, capsys):
    url = trained
    _, _, label, classes = MODELS[name]
    result = label or "cluster"
    probabilities = "".join(f", PREDICT_PROBA(sk_{name}, '{c}') AS p{c}" for c in classes)
    found = _query(url, f"SELECT id, PREDICT(sk_{name}) AS p{probabilities} FROM sk_rows", capsys)
    columns = "".join(f", {result}_{c}" for c in classes)
    ds = connect(url)
    try:
        expected = _fetch(ds, f"SELECT id, {result}{columns} FROM sk_{name}_p ORDER BY id")
    finally:
        ds.close()
    assert [row[0] for row in found] == [row[0] for row in expected] == list(range(ROWS))
    if classes:
        assert [row[1] for row in found] == [row[1] for row in expected]
        assert len({row[1] for row in expected}) > 1
        assert_close([row[2:] for row in found], [row[2:] for row in expected])
    else:
        assert_close([row[1] for row in found], [row[1] for row in expected])


def test_exported_view_predicts_like_to_predict(trained, tmp_path: Path, capsys):
    """``sqlml export --format sql`` writes the compiled forest as a view over the training
    table, which the database runs by itself."""
    url = trained
    file = tmp_path / "forest.sql"
    status = main(
        ["export", _named("sk_forest"), str(file), "--format", "sql", "--datasource", url]
    )
    assert status == 0, capsys.readouterr().err
    text = file.read_text()
    assert "-- Rows follow scikit-learn's trees exactly" in text
    ds = connect(url)
    try:
        ds.execute(text.rstrip().rstrip(";"))
        found = _fetch(ds, "SELECT id, kind FROM sk_forest_predictions ORDER BY id")
        assert found == _fetch(ds, "SELECT id, kind FROM sk_forest_p ORDER BY id")
    finally:
        ds.execute(_named("DROP VIEW sk_forest_predictions"))
        ds.close()


def test_uncompilable_models_are_refused(trained, capsys, monkeypatch):
    """An estimator not compiled, named, when the statement runs and at ``sqlml check``; a
    forest too large for SQL, saying what to train instead."""
    url = trained
    view = "CREATE VIEW sk_view AS SELECT id,\n  PREDICT(sk_svm) AS p FROM sk_rows;"
    status = main(["-e", _named(view), "--datasource", url])
    err = capsys.readouterr().err
    assert status != 0
    assert (
        _named(
            ":2:3: error: model sk_svm cannot be compiled into SQL: sklearn.svm.OneClassSVM "
            "models are not compiled"
        )
        in err
    ), err
    ds = connect(url)
    try:
        found = errors_of(
            check_program(
                _named(
                    "SELECT 1;\nCREATE VIEW sk_view AS SELECT id,\n"
                    "  PREDICT_PROBA(sk_svm, '1') AS p FROM sk_rows;"
                ),
                ds.dialect,
                datasource=ds,
            )
        )
    finally:
        ds.close()
    assert [(e.line, e.column) for e in found] == [(3, 3)]
    assert "sklearn.svm.OneClassSVM models are not compiled" in found[0].message
    monkeypatch.setattr("sqlml.models.sklearn.sql.MAX_SPLITS", 20)  # a forest too large
    from sqlml.statements.sql.handler import model_calls  # compiled before, kept by its bytes

    monkeypatch.setattr(model_calls, "_COMPILED", type(model_calls._COMPILED)(8))
    view = "CREATE VIEW sk_view AS SELECT PREDICT(sk_forest) AS p FROM sk_rows;"
    status = main(["-e", _named(view), "--datasource", url])
    err = capsys.readouterr().err
    assert status != 0
    assert "written 6 times (each class, each pair of classes), more than the 20" in err, err


def test_splits_compare_as_float32_exactly():
    """A split's condition on a double is scikit-learn's ``float32(x) <= threshold``, for
    thresholds between float32 values (as scikit-learn's trees place them), on them, and at
    the ends of float32's range, and doubles on every side of where float32 rounding turns."""
    from sqlml.models.sklearn.sql import _bounds

    rng = np.random.default_rng(3)
    top = float(np.finfo(np.float32).max)
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    pairs = rng.normal(scale=10.0, size=(200, 2)).astype(np.float32).astype(np.float64)
    thresholds = np.concatenate(
        [
            pairs.mean(axis=1),  # scikit-learn's midpoints
            pairs[:, 0],
            rng.normal(size=50),
            [0.0, -0.0, tiny / 2, -tiny / 2, 1.5, -1.5, top, -top, top * 1.5, -top * 1.5],
        ]
    )
    middles, ties_low, never = _bounds(thresholds)
    checked = 0
    for t, middle, tie_low, no_row in zip(thresholds, middles, ties_low, never, strict=True):
        near = np.float32(np.clip(t, -top, top))
        with np.errstate(over="ignore"):
            around = [np.nextafter(near, np.float32(s)) for s in (-np.inf, np.inf)] + [near]
        xs = {float(v) for v in around}
        xs |= {(float(a) + float(b)) / 2 for a in around for b in around}
        xs |= {np.nextafter(x, side) for x in list(xs) for side in (-np.inf, np.inf)}
        for x in xs:
            if not math.isfinite(x) or abs(x) > top:
                continue  # beyond float32's range: TO PREDICT refuses such features
            with np.errstate(over="ignore"):
                wanted = bool(np.float32(x) <= t)
            found = False if no_row else (x <= middle if tie_low else x < middle)
            assert found == wanted, (t, x)
            checked += 1
    assert checked > 2000
