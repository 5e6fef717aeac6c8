"""sqlml check: every error in a program, without running it."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import datasource_url

from sqlml.checking import check_program, errors_of
from sqlml.cli import main
from sqlml.datasources import connect

PROGRAM = """\
SELECT 1;
SELECT * FROM t TO TRAIN x WITH a = ; INTO m;
SELECT * FROM iris_train TO TRAIN DNNClassifer LABEL class INTO m1;
SELECT * FROM iris_train TO TRAIN DNNClassifier LABEL klass INTO m2;
SELECT * FROM nowhere TO TRAIN xgboost.gbtree LABEL class INTO m3;
SELECT * FROM iris_test TO PREDICT p.class USING never_trained;
SELECT * FROM iris_train TO TRAIN xgboost.gbtree LABEL class INTO m4;
SELECT * FROM iris_test TO PREDICT p.class USING m4;
SELECT * FROM iris_test TO EVALUATE m4 LABEL kind INTO e;
DROP MODEL m4;
SELECT * FROM iris_test TO EXPLAIN m4;
SELECT 'unterminated
"""


def located(errors) -> list[tuple[int, int, str]]:
    """Each error's line, column and message up to its first "; " or ": "."""
    return [(e.line, e.column, re.split(r"; |: ", e.message)[0]) for e in errors]


def test_every_syntax_and_semantic_error_is_reported():
    assert located(check_program(PROGRAM, "duckdb")) == [
        (2, 37, "unexpected ';'"),
        (3, 35, "unknown estimator DNNClassifer"),
        (12, 8, "this string is never closed"),
    ]


def test_datasource_checks_tables_columns_labels_and_models(iris_url):
    datasource = connect(iris_url)
    try:
        dialect = "mysql" if iris_url.startswith("mysql") else "duckdb"
        errors = errors_of(check_program(PROGRAM, dialect, datasource))
    finally:
        datasource.close()
    found = located(errors)
    assert found[:3] == [
        (2, 37, "unexpected ';'"),
        (3, 35, "unknown estimator DNNClassifer"),
        (4, 55, "column klass is not in the result of the SELECT"),
    ]
    assert found[3][:2] == (5, 1) and "nowhere" in errors[3].message  # the database's words
    assert found[4:] == [
        (6, 50, "model never_trained does not exist in " + str(datasource.url)
         + " and no earlier statement trains it"),
        (9, 46, "column kind is not in the result of the SELECT"),
        (11, 36, "model m4 does not exist in " + str(datasource.url)
         + " and no earlier statement trains it"),
        (12, 8, "this string is never closed"),
    ]  # fmt: skip


def test_check_command_exit_status(tmp_path):
    good, bad = tmp_path / "good.sql", tmp_path / "bad.sql"
    good.write_text("SELECT 1;\nSELECT * FROM t TO TRAIN xgboost.gbtree LABEL y INTO m;\n")
    bad.write_text(PROGRAM)
    run = [sys.executable, "-m", "sqlml", "check"]
    assert subprocess.run([*run, str(good)], capture_output=True).returncode == 0
    done = subprocess.run([*run, str(bad)], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.count(f"{bad}:") == 3


OUTPUTS = """\
SELECT x FROM t1 TO PREDICT SQLML_Model_Versions.y USING m1;
SELECT * FROM t TO PREDICT main.T.y USING m;
SELECT * FROM t TO PREDICT t.y WITH output.replace = true USING m;
SELECT * FROM t TO EVALUATE m LABEL y INTO sqlml_runs;
SELECT * FROM t TO TRAIN xgboost.gbtree WITH eta = CHOICE(0.1, 0.2), search.trials_table =
  'db.sqlml_run_steps' LABEL y INTO m;
WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d TO EXPLAIN m INTO x;
"""


def test_outputs_are_checked_without_a_datasource():
    assert located(check_program(OUTPUTS, "postgres")) == [
        (1, 29, "TO PREDICT would write SQLML_Model_Versions, one of the tables sqlml keeps "
         "its models and runs in"),
        (2, 28, "TO PREDICT would write main.T, a table the statement reads"),
        (4, 44, "TO EVALUATE would write sqlml_runs, one of the tables sqlml keeps its models "
         "and runs in"),
        (5, 70, "the hyperparameter search would write db.sqlml_run_steps, one of the tables "
         "sqlml keeps its models and runs in"),
        (7, 1, "the SELECT before TO EXPLAIN may only read data, but it holds a DELETE"),
    ]  # fmt: skip


@pytest.mark.parametrize("kind", ["duckdb", "postgresql"])
def test_a_delete_in_the_select_of_an_extended_statement_never_runs(
    kind, tmp_path, unique_name, capfd
):
    url = datasource_url(kind, tmp_path)
    table = f"{unique_name}_rows"
    ds = connect(url)
    ds.execute(f"CREATE TABLE {table} (x INTEGER, y INTEGER)")
    ds.execute(f"INSERT INTO {table} VALUES (1, 0), (2, 1), (3, 0), (4, 1)")
    ds.close()
    deleting = f"WITH d AS (DELETE FROM {table} RETURNING *) SELECT * FROM d"
    try:
        for program in (
            f"{deleting} TO PREDICT {unique_name}_p.y USING {unique_name}_m;",
            f"SELECT * FROM {table} TO TRAIN xgboost.gbtree WITH validation.select = "
            f"'{deleting}' LABEL y INTO {unique_name}_m;",
        ):
            assert main(["-e", program, "--datasource", url]) == 1
            err = capfd.readouterr().err
            assert "may only read data, but it holds a DELETE" in err, err
            assert "hint: run the DELETE as a statement of its own before this one" in err
        ds = connect(url)
        assert ds.execute(f"SELECT COUNT(*) FROM {table}").rows == [(4,)]
    finally:
        ds = connect(url)
        ds.execute(f"DROP TABLE {table}")
        ds.close()
