"""sqlml check --datasource warns about features that may give the label away: selected
columns COLUMN leaves out (features all the same), and keys, by their names or values."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import datasource_url

from sqlml.checking import check_program
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import SqlmlWarning
from sqlml.runtime.features_derive import left_out_warning

FEATURES = "sepal_length, sepal_width, petal_length, petal_width"
LEFT_OUT_ID = left_out_warning(["id"])
ID_BY_NAME = "feature id looks like a key (by its name): a key tells rows apart, and may give "
ID_BY_NAME += "their labels away"


def warned(url: str, text: str) -> list[tuple[int, int, str, str]]:
    """What ``sqlml check --datasource url`` finds in ``text``, all warnings: line, column,
    message, hint."""
    ds = connect(url)
    try:
        found = check_program(text, ds.dialect, ds)
    finally:
        ds.close()
    assert all(isinstance(each, SqlmlWarning) for each in found), [str(e) for e in found]
    return [(w.line, w.column, w.message, w.hint) for w in found]


def test_a_column_left_out_of_column_and_a_key_by_its_name(iris_url):
    """The README's example before it was fixed: id, which COLUMN leaves out, is a feature;
    iris's ids rise with the class, so the model learns the class from them."""
    program = (
        "SELECT * FROM iris_train\n"
        "TO TRAIN DNNClassifier WITH model.n_classes = 3\n"
        f"COLUMN {FEATURES}\n"
        "LABEL class INTO m;\n"
    )
    assert warned(iris_url, program) == [
        (1, 8, *LEFT_OUT_ID),
        (1, 8, ID_BY_NAME, "leave id out of the SELECT unless it measures something the model "
         "should learn from"),
    ]  # fmt: skip


def test_a_program_selecting_only_features_is_not_warned(iris_url):
    program = (
        f"SELECT {FEATURES}, class FROM iris_train TO TRAIN xgboost.gbtree LABEL class INTO m;"
    )
    assert warned(iris_url, program) == []


def test_each_warning_is_where_the_column_is_written(iris_duckdb_url):
    program = (
        "SELECT sepal_length, id,\n"
        "  petal_width, class FROM iris_train\n"
        "TO TRAIN xgboost.gbtree COLUMN sepal_length, Id LABEL class INTO m;\n"
        "SELECT * FROM iris_train TO TRAIN xgboost.gbtree COLUMN petal_width LABEL class INTO m;\n"
    )
    found = [(line, column, message[:40]) for line, column, message, _ in warned(
        iris_duckdb_url, program
    )]  # fmt: skip
    assert found == [
        (2, 3, "the SELECT's petal_width, which COLUMN l"),  # in the SELECT
        (3, 46, "feature Id looks like a key (by its name"),  # in COLUMN
        (4, 8, "the SELECT's id, sepal_length, sepal_wid"),  # at *: all of them in one
        (4, 8, "feature id looks like a key (by its name"),
    ]


@pytest.mark.parametrize("kind", ["duckdb", "mysql", "postgresql", "sqlite"])
def test_a_key_by_its_values(kind, tmp_path, unique_name):
    """Integers all different and packed as row numbers are: in a table the program does
    not change (its rows are read); not in one it creates (they are not)."""
    url = datasource_url(kind, tmp_path)
    table = f"{unique_name}_rows"
    rng = np.random.default_rng(0)
    ds = connect(url)
    ds.write_table(
        [table],
        {
            "seq": np.arange(7, 67),  # 60 rows numbered 7 to 66
            "even": np.arange(2, 122, 2),  # 60 of 2..120
            "price": rng.permutation(60) * 1000 + 500,  # all different, 500 to 59500
            "rooms": rng.integers(1, 6, 60),
            "y": rng.integers(0, 2, 60),
        },
    )
    ds.close()
    program = (
        f"SELECT seq, even, price, rooms, y FROM {table} TO TRAIN xgboost.gbtree LABEL y "
        f"INTO {unique_name}_m;\n"
        f"CREATE TABLE {unique_name}_copy AS SELECT * FROM {table};\n"
        f"SELECT seq, y FROM {unique_name}_copy TO TRAIN xgboost.gbtree LABEL y "
        f"INTO {unique_name}_m;\n"
    )
    try:
        found = [(line, column, message) for line, column, message, _ in warned(url, program)]
    finally:
        ds = connect(url)
        ds.execute(f"DROP TABLE {table}")
        ds.close()
    assert found == [
        (1, 8, "feature seq looks like a key (by its values): its 60 values read are 7 to 66, "
         "each once, as row numbers are"),
        (1, 13, "feature even looks like a key (by its values): its 60 values read are all "
         "different, between 2 and 120, as row numbers are"),
    ]  # fmt: skip


def test_the_run_warns_in_the_same_words(duckdb_url, capsys):
    ds = connect(duckdb_url)
    ds.write_table(["t"], {"id": np.arange(30), "f": np.arange(30) % 7, "y": np.arange(30) % 2})
    ds.close()
    program = "SELECT * FROM t TO TRAIN xgboost.gbtree WITH train.num_boost_round = 2 COLUMN f "
    program += "LABEL y INTO m;"
    assert main(["-e", program, "--datasource", duckdb_url]) == 0
    message, hint = LEFT_OUT_ID
    assert f"<-e>:1:1: warning: {message}\n  hint: {hint}\n" in capsys.readouterr().err


def test_warnings_do_not_fail_the_check(iris_duckdb_url, tmp_path, capsys):
    program = tmp_path / "warned.sql"
    program.write_text(f"SELECT * FROM iris_train TO TRAIN xgboost.gbtree COLUMN {FEATURES} "
                       "LABEL class INTO m;\n")  # fmt: skip
    report = tmp_path / "check.xml"
    args = ["check", str(program), "--datasource", iris_duckdb_url, "--junit", str(report)]
    assert main(args) == 0
    message, hint = LEFT_OUT_ID
    err = capsys.readouterr().err
    assert err.startswith(f"{program}:1:8: warning: {message}\n  hint: {hint}\n")
    assert f"{program}:1:8: warning: {ID_BY_NAME}\n" in err
    [case] = ET.parse(report).getroot().iter("testcase")
    assert [(child.tag, child.get("type")) for child in case] == [("failure", "warning")]
    assert case.find("failure").text == err.rstrip("\n")
    assert (case.get("file"), case.get("line")) == (str(program), "1")
    assert main([*args, "--junit-warnings", "passed"]) == 0
    [case] = ET.parse(report).getroot().iter("testcase")
    assert [child.tag for child in case] == ["system-out"]
    assert case.find("system-out").text == err.rstrip("\n")
