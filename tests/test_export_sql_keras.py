"""Keras networks of dense layers compiled into SQL: PREDICT and PREDICT_PROBA in a query
(MySQL, PostgreSQL and SQLite run the compiled SQL), in a view (every database) and in
``sqlml export --format sql`` equal TO PREDICT row by row; a row with a NULL feature, which
TO PREDICT refuses, gets NULL; what does not compile is refused with the reason."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import KINDS, datasource_url

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models import family
from sqlml.models.keras import sql
from sqlml.models.store import ModelStore

ROWS = 240
# Keras computes in float32, the SQL in doubles: measured, probabilities differ by at most
# 1.1e-7, and values (0.05 to 6) by 5.2e-7 relative, 9e-7 absolute, on each database.
TOLERANCE = 1e-6  # absolute of a probability; relative and absolute of a value
PREFIX = f"ks{uuid.uuid4().hex[:8]}_"  # the servers' databases are shared by other runs

# (estimator, attributes, label): each a network of two hidden layers, trained briefly.
CASES = {
    "binary": (
        "DNNClassifier",
        "model.activation = 'sigmoid', model.batch_norm = true, model.dropout = 0.1",
        "flag",
    ),
    "classes": ("DNNClassifier", "model.activation = 'tanh'", "kind"),
    "regression": ("DNNRegressor", "model.activation = 'relu'", "y"),
}
CLASSES = {"flag": ["0", "1"], "kind": ["high", "low", "mid"]}


def _rows() -> dict[str, np.ndarray]:
    """Numbers with NULLs (a), fractions (b), integers (n); a 0/1 flag, three text classes
    and a value to learn from them."""
    rng = np.random.default_rng(5)
    a, b, n = rng.normal(size=ROWS), rng.uniform(-2, 2, ROWS), rng.integers(0, 10, ROWS)
    nulls = rng.random(ROWS) < 0.15
    kind = np.where(a + b > 0.5, "high", np.where(a - b > 0.0, "mid", "low"))
    return {
        "id": np.arange(ROWS),
        "a": np.where(nulls, np.nan, a),  # NaN is written as NULL
        "b": b,
        "n": n,
        "flag": (a * b + n / 10 > 0.4).astype(np.int64),
        "kind": kind.astype(object),
        "y": 2 * a - b + 0.3 * n,
    }


def _run(url: str, program: str, capsys, *options: str) -> tuple[str, str]:
    """Run ``program`` (its ``ks_`` names this run's): its standard output and error."""
    capsys.readouterr()
    status = main(["-e", program.replace("ks_", PREFIX), "--datasource", url, *options])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out, err


def _fetch(url: str, query: str) -> list[tuple]:
    ds = connect(url)
    try:
        result = ds.execute(query.replace("ks_", PREFIX))
        assert result is not None
        return [tuple(row) for row in result.rows]
    finally:
        ds.close()


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], bytes]]:
    """Each case's model, trained once (on the rows without NULLs: a network takes none)."""
    url = datasource_url("duckdb", tmp_path_factory.mktemp("training"))
    ds = connect(url)
    ds.write_table(["rows"], _rows(), replace=True)
    program = "".join(
        f"SELECT a, b, n, {label} FROM rows WHERE a IS NOT NULL TO TRAIN {estimator} "
        f"WITH model.hidden_units = [8, 4], train.epoch = 2, {attributes} "
        f"LABEL {label} INTO {case};\n"
        for case, (estimator, attributes, label) in CASES.items()
    )
    try:
        assert main(["-e", program, "--datasource", url]) == 0
        stored = {case: ModelStore(ds).load(case) for case in CASES}
    finally:
        ds.close()
    return {case: (model.metadata, model.data) for case, model in stored.items()}


@pytest.fixture(params=KINDS, scope="module")
def database(
    request: pytest.FixtureRequest, models, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A datasource of each kind holding the rows (``ks_rows``), the models (``ks_<case>``)
    and TO PREDICT's tables of the rows without NULLs (``ks_<case>_p``)."""
    url = datasource_url(request.param, tmp_path_factory.mktemp(request.param))
    ds = connect(url)
    try:
        ds.write_table([f"{PREFIX}rows"], _rows(), replace=True)
        for case, (metadata, data) in models.items():
            ModelStore(ds).save(f"{PREFIX}{case}", metadata, data)
    finally:
        ds.close()
    probabilities = "predict.extra_outputs = 'probabilities', "
    program = "".join(
        f"SELECT id, a, b, n FROM ks_rows WHERE a IS NOT NULL TO PREDICT ks_{case}_p.{label} "
        f"WITH {probabilities if label in CLASSES else ''}output.replace = true "
        f"USING ks_{case};\n"
        for case, (_, _, label) in CASES.items()
    )
    assert main(["-e", program.replace("ks_", PREFIX), "--datasource", url]) == 0
    yield url
    ds = connect(url)
    try:
        for case in CASES:
            ds.execute(f"DROP VIEW IF EXISTS {PREFIX}{case}_v")
            ds.execute(f"DROP VIEW IF EXISTS {PREFIX}{case}_predictions")
            ds.execute(f"DROP TABLE IF EXISTS {PREFIX}{case}_p")
        ds.execute(f"DROP TABLE IF EXISTS {PREFIX}rows")
    finally:
        ds.close()
    drops = "".join(f"DROP MODEL IF EXISTS {PREFIX}{case};" for case in CASES)
    main(["-e", drops, "--datasource", url])


def _select(case: str) -> str:
    """The prediction (p) and, of a classifier, each class's probability (q_<class>)."""
    label = CASES[case][2]
    probabilities = "".join(
        f", PREDICT_PROBA(ks_{case}, '{c}') AS q_{c}" for c in CLASSES.get(label, [])
    )
    return f"SELECT id, PREDICT(ks_{case}) AS p{probabilities} FROM ks_rows"


def _check(url: str, case: str, found: list[tuple]) -> None:
    """``found`` (id, prediction, probabilities... of each row, by id) is TO PREDICT's on
    the rows without NULLs, and NULL on the others."""
    label = CASES[case][2]
    classes = CLASSES.get(label, [])
    columns = ", ".join([label, *(f"{label}_{c}" for c in classes)])
    expected = {row[0]: row[1:] for row in _fetch(url, f"SELECT id, {columns} FROM ks_{case}_p")}
    nulls = {i for i, a in enumerate(_rows()["a"]) if np.isnan(a)}
    assert [row[0] for row in found] == list(range(ROWS))
    assert all(set(row[1:]) == {None} for row in found if row[0] in nulls)
    scored = [row for row in found if row[0] not in nulls]
    want = [expected[row[0]] for row in scored]
    if classes:
        assert [row[1] for row in scored] == [row[0] for row in want]
        np.testing.assert_allclose(
            np.array([row[2:] for row in scored], dtype=np.float64),
            np.array([row[1:] for row in want], dtype=np.float64),
            rtol=0,
            atol=TOLERANCE,
        )
    else:
        np.testing.assert_allclose(
            np.array([row[1] for row in scored], dtype=np.float64),
            np.array([row[0] for row in want], dtype=np.float64),
            rtol=TOLERANCE,
            atol=TOLERANCE,
        )


@pytest.mark.parametrize("case", CASES)
def test_query_and_view_equal_to_predict(database, case, capsys):
    url = database
    if not url.startswith("duckdb"):  # DuckDB's queries call sqlml's function instead
        out, err = _run(url, f"{_select(case)} ORDER BY id;", capsys, "--format", "json")
        assert "cannot be compiled" not in err and "scores the rows" not in err, err
        found = [tuple(row.values()) for row in json.loads(out)["rows"]]
        _check(url, case, found)
    _run(url, f"CREATE VIEW ks_{case}_v AS {_select(case)};", capsys)
    _check(url, case, _fetch(url, f"SELECT * FROM ks_{case}_v ORDER BY id"))


def test_exported_view_equals_to_predict(database, tmp_path: Path, capsys):
    url, file = database, tmp_path / "model.sql"
    model = f"{PREFIX}classes"
    args = ["--format", "sql", "--table", f"{PREFIX}rows", "--datasource", url]
    assert main(["export", model, str(file), *args]) == 0
    text = file.read_text()
    assert "A row with a NULL feature, which TO PREDICT refuses, gets NULL." in text
    ds = connect(url)
    try:
        ds.execute(text.rstrip().rstrip(";"))  # the database runs the file's view itself
    finally:
        ds.close()
    found = _fetch(url, f"SELECT id, kind FROM {model}_predictions ORDER BY id")
    expected = dict(_fetch(url, "SELECT id, kind FROM ks_classes_p"))
    assert [kind for i, kind in found if i in expected] == [expected[i] for i in sorted(expected)]
    assert sum(kind is None for _, kind in found) == ROWS - len(expected)


def test_relu_is_greatest_with_its_argument_once(models):
    """relu is GREATEST(x, 0), SQLite's MAX(x, 0): each hidden unit's SQL appears once in
    each unit of the next layer, and the SQL of the [8, 4] regressor stays small."""
    from sqlml.models.store import StoredModel

    metadata, data = models["regression"]
    compiled = family("keras").to_sql(StoredModel("r", 1, metadata, data))
    postgres, sqlite = compiled.value.sql(dialect="postgres"), compiled.value.sql(dialect="sqlite")
    assert postgres.count("GREATEST(") == 8 * 4 + 4 and "MAX(" not in postgres
    assert sqlite.count("MAX(") == 8 * 4 + 4 and "GREATEST" not in sqlite
    assert len(postgres) < 20_000


@pytest.fixture(scope="module")
def duckdb_rows(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = datasource_url("duckdb", tmp_path_factory.mktemp("refused"))
    ds = connect(url)
    ds.write_table(["rows"], _rows(), replace=True)
    ds.close()
    return url


@pytest.mark.parametrize(
    ("training", "reason"),
    [
        (
            "SELECT a, b, n, kind FROM rows WHERE a IS NOT NULL TO TRAIN DNNRegressor WITH "
            "model.hidden_units = [4], train.epoch = 1 COLUMN a, b, EMBEDDING(kind, 2) "
            "LABEL n INTO m;",
            "model m cannot be compiled into SQL: its feature column EMBEDDING(kind) is a "
            "EMBEDDING column",
        ),
        (
            "SELECT a, b, n, kind FROM rows WHERE a IS NOT NULL TO TRAIN DNNClassifier WITH "
            "model.hidden_units = [4], train.epoch = 1, model.activation = 'elu' "
            "LABEL kind INTO m;",
            "model m cannot be compiled into SQL: its layer dense's activation is elu, and "
            "only linear, relu, sigmoid, tanh, softmax compile",
        ),
        (
            "SELECT a, b, n, kind FROM rows WHERE a IS NOT NULL TO TRAIN "
            "DNNLinearCombinedClassifier WITH model.dnn_hidden_units = [4], train.epoch = 1 "
            "LABEL kind INTO m;",
            "model m cannot be compiled into SQL: its layer dense reads normalization, not the "
            "layer before it (dense_1): only a chain of layers compiles",
        ),
    ],
    ids=["embedding", "activation", "wide-and-deep"],
)
def test_what_does_not_compile_is_refused_with_the_reason(
    duckdb_rows, training, reason, tmp_path, capsys
):
    url = duckdb_rows
    main(["-e", training, "--datasource", url])
    file = tmp_path / "model.sql"
    capsys.readouterr()
    status = main(["export", "m", str(file), "--format", "sql", "--datasource", url])
    assert status != 0
    assert reason in capsys.readouterr().err
    assert not file.exists()


def test_a_network_whose_sql_is_too_large_is_refused(models, monkeypatch):
    from sqlml.errors import ModelError
    from sqlml.models.store import StoredModel

    metadata, data = models["classes"]
    monkeypatch.setattr(sql, "MAX_SQL_CHARS", 4_000)
    with pytest.raises(ModelError) as error:
        family("keras").to_sql(StoredModel("m", 1, metadata, data))
    found = re.match(
        r"model m cannot be compiled into SQL: a unit of its layer dense_\d would be "
        r"([\d,]+) characters of SQL in the \w+ dialect, more than 4,000 \(each unit repeats "
        r"the SQL of the previous layer's units",
        error.value.message,
    )
    assert found and int(found[1].replace(",", "")) > 4_000, error.value.message
