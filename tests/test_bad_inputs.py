"""Bad inputs on the model side: infinite numbers and numbers beyond float32's range (features
and labels), a column of another type than the model was trained on, absurd attribute values,
too many classes and trainings that diverge. Each is a clear error (message and hint, exit
status 1, no traceback) that stores no model and writes no table.
"""

from __future__ import annotations

import pytest
from conftest import KINDS, datasource_url

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore

# Without validation.split, so errors count the rows of the SELECT.
XGB = "xgboost.gbtree WITH objective = 'binary:logistic', train.num_boost_round = 2, " + (
    "validation.split = 0.0"
)
REG = "xgboost.gbtree WITH objective = 'reg:squarederror', train.num_boost_round = 2, " + (
    "validation.split = 0.0"
)
INFINITY = {"duckdb": "'inf'::DOUBLE", "sqlite": "9e999", "postgresql": "'Infinity'::float8"}
TEXT = {"duckdb": "VARCHAR", "sqlite": "VARCHAR", "mysql": "CHAR", "postgresql": "VARCHAR"}


def sqlml(capfd, url: str, program: str) -> tuple[int, str]:
    status = main(["-e", program, "--datasource", url])
    out, err = capfd.readouterr()
    return status, out + err


def assert_error(status: int, output: str, *parts: str) -> None:
    assert status == 1, output
    for part in parts:
        assert part in output, output
    assert "hint: " in output and "Traceback" not in output, output


def models(url: str) -> list[str]:
    ds = connect(url)
    try:
        return [name for name, _, _ in ModelStore(ds).list()]
    finally:
        ds.close()


def table_exists(url: str, table: str) -> bool:
    ds = connect(url)
    try:
        return ds.table_exists([table])
    finally:
        ds.close()


@pytest.fixture(params=KINDS)
def db(request, tmp_path, unique_name):
    """A database of each kind with table ``<u>_d`` (40 rows): x, a 0/1 label y, a number
    r = 2x, text t ('a' or 'b'), and copies big of x and rbig of r with 1e39 (finite, beyond
    float32) in rows 3 and 7. Yields (kind, url, u)."""
    url = datasource_url(request.param, tmp_path)
    ds = connect(url)
    u, number, text = unique_name, ds.types["float"], ds.types["text"]
    ds.execute(
        f"CREATE TABLE {u}_d (x {number}, y INTEGER, r {number}, t {text}, big {number}, "
        f"rbig {number})"
    )
    huge = {3, 7}
    rows = ", ".join(
        f"({i}, {i % 2}, {2 * i}, '{'ab'[i % 2]}', {'1e39' if i in huge else i}, "
        f"{'1e39' if i in huge else 2 * i})"
        for i in range(40)
    )
    ds.execute(f"INSERT INTO {u}_d VALUES {rows}")
    ds.close()
    yield request.param, url, u
    ds = connect(url)
    for suffix in ("d", "p", "e", "x"):
        ds.execute(f"DROP TABLE IF EXISTS {ds.quote([f'{u}_{suffix}'])}")
    store = ModelStore(ds)
    for name in models(url):
        if name.startswith(u):
            store.drop(name)
    ds.close()


BEYOND = "infinite values, or values beyond float32's range (±3.403e+38), in 2 of"


def test_numbers_beyond_float32_are_refused_in_features_and_labels(db, capfd):
    _, url, u = db
    status, output = sqlml(
        capfd, url, f"SELECT big AS x, y FROM {u}_d TO TRAIN {XGB} LABEL y INTO {u}_m0;"
    )
    assert_error(status, output, f"NUMERIC column x holds {BEYOND} 40 rows", "filter those rows")
    status, output = sqlml(
        capfd,
        url,
        f"SELECT x, y FROM {u}_d TO TRAIN {XGB}, "
        f"validation.select = 'SELECT big AS x, y FROM {u}_d' LABEL y INTO {u}_m0;",
    )
    assert_error(status, output, f"validation.select: NUMERIC column x holds {BEYOND} 40 rows")
    status, output = sqlml(
        capfd, url, f"SELECT x, rbig AS r FROM {u}_d TO TRAIN {REG} LABEL r INTO {u}_m0;"
    )
    assert_error(status, output, f"LABEL column r has {BEYOND} 40 rows", "WHERE r BETWEEN")
    assert models(url) == [] or f"{u}_m0" not in models(url)

    trained = (
        f"SELECT x, y FROM {u}_d TO TRAIN {XGB} LABEL y INTO {u}_m;"
        f"SELECT x, r FROM {u}_d TO TRAIN {REG} LABEL r INTO {u}_r;"
    )
    status, output = sqlml(capfd, url, trained)
    assert status == 0, output
    for statement in (
        f"SELECT big AS x FROM {u}_d TO PREDICT {u}_p.y USING {u}_m;",
        f"SELECT big AS x, y FROM {u}_d TO EVALUATE {u}_m LABEL y INTO {u}_e;",
        f"SELECT big AS x FROM {u}_d TO EXPLAIN {u}_m INTO {u}_x;",
    ):
        status, output = sqlml(capfd, url, statement)
        assert_error(status, output, f"NUMERIC column x holds {BEYOND} 40 rows")
    statement = f"SELECT x, rbig AS r FROM {u}_d TO EVALUATE {u}_r LABEL r INTO {u}_e;"
    assert_error(*sqlml(capfd, url, statement), f"LABEL column r has {BEYOND} 40 rows")
    assert not any(table_exists(url, f"{u}_{suffix}") for suffix in "pex")


@pytest.mark.parametrize("kind", KINDS)
def test_a_boolean_feature_with_nulls_is_a_number(kind, tmp_path, capfd, unique_name):
    """PostgreSQL returns such a column as Python booleans and None: it used to fail with
    "NUMERIC column b holds 'True', which is not a number"."""
    url, u = datasource_url(kind, tmp_path), unique_name
    values = ", ".join(
        f"({'NULL' if i == 3 else ('TRUE', 'FALSE')[i % 2]}, {i % 2})" for i in range(8)
    )
    program = (
        f"CREATE TABLE {u}_d (b BOOLEAN, y INTEGER); INSERT INTO {u}_d VALUES {values};"
        f"SELECT b, y FROM {u}_d TO TRAIN {XGB} LABEL y INTO {u};"
        f"SELECT b FROM {u}_d TO PREDICT {u}_p.y USING {u};"
    )
    try:
        status, output = sqlml(capfd, url, program)
        assert status == 0, output
        ds = connect(url)
        predicted = ds.execute(f"SELECT b, y FROM {u}_p").rows
        ds.close()
        # b as written back: 1.0 or 0.0 (read as floats with NaN), or on PostgreSQL (read as
        # Python booleans and None) the text 'True' or 'False'
        shown = {str(b).lower() in ("1.0", "true"): y for b, y in predicted if b is not None}
        assert shown == {True: 0, False: 1}
    finally:
        sqlml(capfd, url, f"DROP TABLE IF EXISTS {u}_d; DROP TABLE IF EXISTS {u}_p;")
        sqlml(capfd, url, f"DROP MODEL IF EXISTS {u};")


@pytest.mark.parametrize("kind", sorted(INFINITY))
def test_infinite_features_and_labels_are_refused(kind, tmp_path, capfd, unique_name):
    url, u, inf = datasource_url(kind, tmp_path), unique_name, INFINITY[kind]
    rows = " UNION ALL ".join(
        f"SELECT {inf if i == 5 else i} AS x, {i % 2} AS y, {inf if i == 6 else i} AS r"
        for i in range(20)
    )
    status, output = sqlml(capfd, url, f"CREATE TABLE {u}_d AS {rows};")
    assert status == 0, output
    try:
        status, output = sqlml(
            capfd, url, f"SELECT x, y FROM {u}_d TO TRAIN {XGB} LABEL y INTO {u};"
        )
        assert_error(status, output, "NUMERIC column x holds infinite values", "in 1 of 20 rows")
        status, output = sqlml(
            capfd, url, f"SELECT y, r FROM {u}_d TO TRAIN {REG} LABEL r INTO {u};"
        )
        assert_error(status, output, "LABEL column r has infinite values", "in 1 of 20 rows")
        assert u not in models(url)
    finally:
        sqlml(capfd, url, f"DROP TABLE {u}_d;")


def test_infinite_text_numbers_are_refused(tmp_path, capfd):
    url = datasource_url("duckdb", tmp_path)
    program = (
        "CREATE TABLE d AS SELECT CASE WHEN i = 4 THEN '1,inf' ELSE i || ',1' END AS v, "
        "i % 2 AS y FROM range(20) t(i);"
        f"SELECT v, y FROM d TO TRAIN {XGB} COLUMN DENSE(v, 2) LABEL y INTO m;"
    )
    status, output = sqlml(capfd, url, program)
    assert_error(status, output, "DENSE column v holds infinite values", "in 1 of 20 rows")


def test_a_column_of_another_type_than_trained_is_refused(db, capfd):
    kind, url, u = db
    status, output = sqlml(
        capfd, url, f"SELECT x, t, y FROM {u}_d TO TRAIN {XGB} LABEL y INTO {u}_m;"
    )
    assert status == 0, output
    as_text = f"CAST(x AS {TEXT[kind]}) AS x"
    number_t, text_x = f"x, 1 AS t FROM {u}_d", f"{as_text}, t FROM {u}_d"
    validation = f"validation.select = 'SELECT x, 1 AS t, y FROM {u}_d'"
    wrong = [  # statement, the column, what it holds
        (f"SELECT {number_t} TO PREDICT {u}_p.y USING {u}_m;", "t", "numbers"),
        (f"SELECT {text_x} TO PREDICT {u}_p.y USING {u}_m;", "x", "text"),
        (f"SELECT {number_t} TO EXPLAIN {u}_m INTO {u}_x;", "t", "numbers"),
        (f"SELECT {text_x} TO EXPLAIN {u}_m INTO {u}_x;", "x", "text"),
        (f"SELECT x, 1 AS t, y FROM {u}_d TO EVALUATE {u}_m LABEL y INTO {u}_e;", "t", "numbers"),
        (f"SELECT x, t, y FROM {u}_d TO TRAIN {XGB}, {validation} LABEL y INTO {u}_m2;", "t",
         "numbers"),
        (f"SELECT {as_text}, t, y FROM {u}_d TO TRAIN xgboost.gbtree LABEL y USING {u}_m "
         f"INTO {u}_m2;", "x", "text"),
    ]  # fmt: skip
    for statement, column, found in wrong:
        trained, cast = ("text", "VARCHAR") if found == "numbers" else ("numbers", "DOUBLE")
        assert_error(
            *sqlml(capfd, url, statement),
            f"feature column {column} holds {found}, but the model was trained on {trained}",
            f"CAST({column} AS {cast})",
        )
    assert f"{u}_m2" not in models(url)
    assert not any(table_exists(url, f"{u}_{suffix}") for suffix in "pex")


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ("model.hidden_units = [100000000000]", "model.hidden_units must be <= 10000"),
        ("model.hidden_units = [64, 10001]", "model.hidden_units must be <= 10000"),
        ("model.n_classes = 2000000000", "model.n_classes must be <= 10000"),
        ("optimizer.learning_rate = 1e308", "optimizer.learning_rate must be <= 10"),
    ],
)
def test_absurd_keras_attributes_are_refused(attribute, message, tmp_path, capfd):
    program = tmp_path / "p.sql"
    program.write_text(f"SELECT * FROM t TO TRAIN DNNClassifier WITH {attribute} LABEL y INTO m;\n")
    status = main(["check", str(program)])
    out, err = capfd.readouterr()
    assert_error(status, out + err, message)


WIDE = ", ".join(["10000"] * 30)


@pytest.mark.parametrize(
    ("estimator", "attribute"),
    [
        ("DNNClassifier", f"model.hidden_units = [{WIDE}]"),
        ("DNNRegressor", f"model.hidden_units = [{WIDE}]"),
        ("DNNLinearCombinedClassifier", f"model.dnn_hidden_units = [{WIDE}]"),
        ("sqlflow_models.DNNClassifier", f"model.hidden_units = [{WIDE}]"),
        ("sqlflow_models.StackedRNNClassifier", f"model.stack_units = [{WIDE}]"),
        (
            "sqlflow_models.LSTMBasedTimeSeriesModel",
            "model.stack_units = [10000, 10000, 10000, 10000]",
        ),
        ("DNNClassifier", "model.hidden_units = CHOICE([64], [10000, 10000, 10000, 10000])"),
    ],
)
def test_a_keras_network_beyond_the_model_limit_is_refused_by_check(
    estimator, attribute, tmp_path, capfd
):
    """Each layer within its 10,000 units, all of them together beyond 1 GiB of weights."""
    program = tmp_path / "p.sql"
    program.write_text(f"SELECT * FROM t TO TRAIN {estimator} WITH {attribute} LABEL y INTO m;\n")
    status = main(["check", str(program)])
    out, err = capfd.readouterr()
    assert_error(status, out + err, "more than a model may hold (268,435,456 weights: 1 GiB)")
    assert f"attribute {attribute.split(' ')[0]} makes a network" in err, err


def test_a_keras_network_within_the_model_limit_checks(tmp_path, capfd):
    program = tmp_path / "p.sql"
    program.write_text(
        "SELECT * FROM t TO TRAIN DNNClassifier WITH model.hidden_units = [10000, 10000] "
        "LABEL y INTO m;\n"
    )
    assert main(["check", str(program)]) == 0, capfd.readouterr()


@pytest.mark.parametrize("kind", ["duckdb", "postgresql"])
def test_a_keras_network_too_large_for_its_features_is_refused_before_tensorflow(
    kind, tmp_path, capfd, monkeypatch, unique_name
):
    """Two layers of 10,000 units check; over a one-hot column of 1,000,000 buckets they
    would hold 10^10 weights: the training refuses them before TensorFlow is imported."""
    from sqlml.models.keras import library

    def imported() -> None:
        raise AssertionError("TensorFlow was imported")

    monkeypatch.setattr(library, "keras", imported)
    url = datasource_url(kind, tmp_path)
    u = unique_name
    program = (
        f"CREATE TABLE {u} (c INTEGER, y INTEGER);"
        f"INSERT INTO {u} VALUES (1, 0), (2, 1), (3, 0), (4, 1);"
        f"SELECT c, y FROM {u} TO TRAIN DNNClassifier WITH model.hidden_units = [10000, 10000] "
        f"COLUMN INDICATOR(CATEGORY_ID(c, 1000000)) LABEL y INTO {u}_m;"
    )
    try:
        status, output = sqlml(capfd, url, program)
        assert_error(
            status,
            output,
            "model.hidden_units over the features' 1,000,000 values makes a network of at least "
            "10,100,030,001 weights",
        )
        assert f"{u}_m" not in models(url)
    finally:
        ds = connect(url)
        try:
            ds.execute(f"DROP TABLE IF EXISTS {u}")
        finally:
            ds.close()


def test_absurd_xgboost_num_class_and_too_many_classes_are_refused(tmp_path, capfd):
    program = tmp_path / "p.sql"
    program.write_text(
        "SELECT * FROM t TO TRAIN xgboost.gbtree WITH num_class = 2000000000 LABEL y INTO m;\n"
    )
    status = main(["check", str(program)])
    out, err = capfd.readouterr()
    assert_error(status, out + err, "num_class must be <= 10000")

    url = datasource_url("duckdb", tmp_path)
    program = (
        "CREATE TABLE d AS SELECT i AS x, 'c' || i AS y FROM range(10001) t(i);"
        "SELECT x, y FROM d TO TRAIN xgboost.gbtree LABEL y INTO m;"
    )
    status, output = sqlml(capfd, url, program)
    assert_error(status, output, "LABEL column y has 10,001 classes; sqlml classifies up to 10,000")
    assert models(url) == []


def test_a_diverging_xgboost_training_saves_nothing(tmp_path, capfd):
    url = datasource_url("duckdb", tmp_path)
    program = (
        "CREATE TABLE d AS SELECT i AS x, (i % 3) * 1e37 AS r FROM range(30) t(i);"
        f"SELECT x, r FROM d TO TRAIN {REG} LABEL r INTO m;"
    )
    status, output = sqlml(capfd, url, program)
    assert_error(status, output, "the training diverged: train_rmse = inf", "lower eta")
    assert models(url) == []


@pytest.mark.keras
def test_keras_refuses_bad_inputs_and_saves_no_diverged_model(tmp_path, capfd):
    """Keras cases together (TensorFlow is imported once): a diverging training, a number
    beyond float32, a text column where it was trained on numbers."""
    pytest.importorskip("keras")
    url = datasource_url("duckdb", tmp_path)
    setup = (
        "CREATE TABLE d AS SELECT i::DOUBLE AS x, (i % 3) * 1e37 AS r, i % 2 AS y, "
        "CASE WHEN i = 3 THEN 1e39 ELSE i END AS big FROM range(30) t(i);"
    )
    dnn = "DNNRegressor WITH train.epoch = 2, validation.split = 0.0"
    status, output = sqlml(capfd, url, f"{setup} SELECT x, r FROM d TO TRAIN {dnn} LABEL r INTO m;")
    assert_error(
        status, output, "the training diverged: train_loss = inf", "lower optimizer.learning_rate"
    )
    assert "Invalid loss" not in output  # nothing printed by Keras
    status, output = sqlml(capfd, url, f"SELECT big AS x, y FROM d TO TRAIN {dnn} LABEL y INTO m;")
    assert_error(status, output, "NUMERIC column x holds infinite values")
    status, output = sqlml(capfd, url, f"SELECT x, y FROM d TO TRAIN {dnn} LABEL y INTO m;")
    assert status == 0, output
    status, output = sqlml(
        capfd, url, "SELECT CAST(x AS VARCHAR) AS x FROM d TO PREDICT p.y USING m;"
    )
    assert_error(
        status, output, "feature column x holds text, but the model was trained on numbers"
    )
    assert models(url) == ["m"]


def test_a_text_label_in_evaluate_of_a_regressor_is_refused(db, capfd):
    """Was a raw traceback: the regressor's metrics were computed on text."""
    _, url, u = db
    status, output = sqlml(capfd, url, f"SELECT x, r FROM {u}_d TO TRAIN {REG} LABEL r INTO {u}_r;")
    assert status == 0, output
    evaluate = f"SELECT x, t AS r FROM {u}_d TO EVALUATE {u}_r LABEL r INTO {u}_e;"
    status, output = sqlml(capfd, url, evaluate)
    assert_error(
        status, output, "LABEL column r of the SELECT holds text, but the model is a regressor"
    )
    assert not table_exists(url, f"{u}_e")
