"""TO TRAIN then TO PREDICT on held-out iris rows, on DuckDB and MySQL, XGBoost and Keras."""

from __future__ import annotations

import pytest

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore

TRAIN = {
    "xgboost": """
        SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
        TO TRAIN xgboost.gbtree
        WITH objective = "multi:softprob", max_depth = 4, train.num_boost_round = 30
        LABEL class INTO {model};
    """,
    "dnn": """
        SELECT * FROM iris_train
        TO TRAIN DNNClassifier
        WITH model.n_classes = 3, model.hidden_units = [10, 20], train.epoch = 50,
             train.batch_size = 8
        COLUMN sepal_length, sepal_width, petal_length, petal_width
        LABEL class INTO {model};
    """,
}


@pytest.mark.parametrize("estimator", ["xgboost", "dnn"])
def test_train_then_predict_held_out_rows(iris_url, estimator, unique_name, capsys):
    model, table = f"{unique_name}_model", f"{unique_name}_pred"
    program = TRAIN[estimator].format(model=model) + (
        f"SELECT * FROM iris_test TO PREDICT {table}.class USING {model};"
    )
    assert main(["-e", program, "--datasource", iris_url]) == 0, capsys.readouterr().err

    ds = connect(iris_url)
    try:
        predicted = ds.execute(f"SELECT id, class FROM {table} ORDER BY id").rows
        truth = dict(ds.execute("SELECT id, class FROM iris_test").rows)
        columns = ds.execute(f"SELECT * FROM {table} WHERE 1 = 0").columns
        ds.execute(f"DROP TABLE {table}")
        ModelStore(ds).drop(model)
    finally:
        ds.close()
    assert len(predicted) == 30
    assert columns == ["id", "sepal_length", "sepal_width", "petal_length", "petal_width", "class"]
    accuracy = sum(truth[i] == c for i, c in predicted) / len(predicted)
    assert accuracy >= 0.9, f"accuracy {accuracy:.3f} on held-out rows"


def test_predict_replaces_a_users_table_only_when_asked(duckdb_url, capsys):
    ds = connect(duckdb_url)
    ds.execute("CREATE TABLE pred (stale INTEGER)")
    ds.execute("INSERT INTO pred VALUES (7)")
    ds.close()
    program = """
        CREATE OR REPLACE TABLE d AS SELECT i AS x, i % 2 AS y FROM range(100) t(i);
        SELECT x, y FROM d TO TRAIN xgboost.gbtree
          WITH objective = "binary:logistic", train.num_boost_round = 5 LABEL y INTO m;
        SELECT x FROM d WHERE x < 10 TO PREDICT pred.y {opt_in} USING m;
    """
    assert main(["-e", program.format(opt_in=""), "--datasource", duckdb_url]) == 1
    error = capsys.readouterr().err
    assert "5:9: error: table pred exists and sqlml did not write it" in error
    assert "WITH output.replace = true" in error
    ds = connect(duckdb_url)
    assert ds.execute("SELECT * FROM pred").rows == [(7,)]
    ds.close()
    replace = "WITH output.replace = true"
    code = main(["-e", program.format(opt_in=replace), "--datasource", duckdb_url])
    assert code == 0, capsys.readouterr().err
    ds = connect(duckdb_url)
    result = ds.execute("SELECT * FROM pred ORDER BY x")
    leftovers = ds.execute("SELECT table_name FROM information_schema.tables").rows
    ds.close()
    assert result.columns == ["x", "y"]
    assert len(result.rows) == 10
    assert all(isinstance(y, int) for _, y in result.rows)  # typed like the integer label
    assert sorted(name for (name,) in leftovers) == [
        "d",
        "pred",
        "sqlml_model_aliases",
        "sqlml_model_chunks",
        "sqlml_model_retention",
        "sqlml_model_versions",
        "sqlml_run_steps",  # the run record
        "sqlml_runs",
    ]


def test_regression_objective_predicts_numbers(duckdb_url, capsys):
    program = """
        CREATE TABLE d AS SELECT i / 10.0 AS x, 3.0 * i / 10.0 + 1 AS y FROM range(200) t(i);
        SELECT * FROM d TO TRAIN xgboost.gbtree
          WITH train.num_boost_round = 50, validation.split = 0 LABEL y INTO r;
        SELECT x FROM d TO PREDICT out.y USING r;
        SELECT max(abs(out.y - (3.0 * out.x + 1))) AS worst FROM out;
    """
    assert main(["-e", program, "--datasource", duckdb_url, "--format", "csv"]) == 0
    worst = float(capsys.readouterr().out.splitlines()[-1])
    assert worst < 0.5
