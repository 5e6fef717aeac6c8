"""sqlml check: every error in a program, without running it."""

from __future__ import annotations

import re
import subprocess
import sys

from sqlml.checking import check_program
from sqlml.runtime.datasource import connect

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
        errors = check_program(
            PROGRAM, "mysql" if iris_url.startswith("mysql") else "duckdb", datasource
        )
    finally:
        datasource.close()
    found = located(errors)
    assert found[:3] == [
        (2, 37, "unexpected ';'"),
        (3, 35, "unknown estimator DNNClassifer"),
        (4, 1, "column klass is not in the result of the SELECT"),
    ]
    assert found[3][:2] == (5, 1) and "nowhere" in errors[3].message  # the database's words
    assert found[4:] == [
        (6, 1, "model never_trained does not exist in " + str(datasource.url)
         + " and no earlier statement trains it"),
        (9, 1, "column kind is not in the result of the SELECT"),
        (11, 1, "model m4 does not exist in " + str(datasource.url)
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
