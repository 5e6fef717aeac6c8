"""SQLFlow's ``TO PREDICT <table>`` without ``.<column>`` (issue 36, class 2): the predictions
go into a column named after the model's label, resolved at run time from the stored model;
``sqlml check`` refuses it where it knows the model has no label."""

from __future__ import annotations

import json

from conftest import fetch_rows

from sqlml import ir
from sqlml.checking import check_program, errors_of
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.grammar import parse
from sqlml.semantics import analyze

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"


def test_the_ir_leaves_the_column_to_the_label_and_round_trips():
    (statement,) = analyze(parse("SELECT * FROM t TO PREDICT scored USING m;"), "duckdb")
    assert (statement.table, statement.result_column) == (["scored"], None)
    assert ir.from_dict(json.loads(statement.to_json())) == statement
    (named,) = analyze(parse("SELECT * FROM t TO PREDICT scored.c USING m;"), "duckdb")
    assert (named.table, named.result_column) == (["scored"], "c")  # as in SQLFlow


def test_the_predictions_take_the_labels_name(iris_url, unique_name, capsys):
    model, table = f"{unique_name}_m", f"{unique_name}_p"
    program = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree\n"
        f"WITH train.num_boost_round = 5 LABEL class INTO {model};\n"
        f"SELECT id, {MEASURES}, class AS truth FROM iris_test TO PREDICT {table} USING {model};"
    )
    status = main(["-e", program, "--datasource", iris_url])
    err = capsys.readouterr().err
    assert status == 0, err
    assert f"predicted 30 rows into {table}.class with {model}" in err
    assert "warning" not in err  # the label selected under another name: nothing replaced
    rows = fetch_rows(iris_url, f"SELECT truth, class FROM {table}")
    assert len(rows) == 30
    assert sum(truth == predicted for truth, predicted in rows) >= 27
    ds = connect(iris_url)
    try:
        ds.execute(f"DROP TABLE {ds.quote([table])}")
    finally:
        ds.close()


def test_a_model_without_a_label_needs_the_column_named(iris_duckdb_url, capsys):
    train = (
        f"SELECT {MEASURES} FROM iris_train TO TRAIN KMeans WITH model.n_clusters = 3 INTO km;\n"
    )
    predict = f"SELECT {MEASURES} FROM iris_test TO PREDICT clusters USING km;"
    ds = connect(iris_duckdb_url)
    try:
        (error,) = errors_of(check_program(train + predict, "duckdb", ds))
    finally:
        ds.close()
    assert (error.line, error.column) == (2, 87)  # at the table
    assert error.message == (
        "TO PREDICT clusters names no result column, and km was trained without a LABEL to "
        "name it after"
    )
    assert error.hint == "name the column: TO PREDICT clusters.<result column>"
    assert main(["-e", train + predict, "--datasource", iris_duckdb_url]) == 1
    assert "km was trained without a LABEL" in capsys.readouterr().err
    assert main(["-e", predict.replace("clusters", "out.cluster"), "--datasource",
                 iris_duckdb_url]) == 0  # fmt: skip
    assert len(fetch_rows(iris_duckdb_url, "SELECT DISTINCT cluster FROM out")) == 3
