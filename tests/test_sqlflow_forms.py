"""SQLFlow forms of issue 36: SPARSE's default LIBSVM key-value lists ("1:0.5 3:-1.5"),
``eval_metric = accuracy_score``, a published model's name after TO PREDICT's USING, and
MySQL's backquoted names on every database."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import KINDS, datasource_url, fetch_rows
from conftest import run_program as run

from sqlml.datasources import connect
from sqlml.errors import CheckError, ParseError
from sqlml.grammar import parse
from sqlml.ir import FeatureColumn
from sqlml.runtime.features_derive import derive
from sqlml.semantics import analyze
from sqlml.semantics.backquotes import double_quoted


@pytest.fixture(params=KINDS)
def url(request: pytest.FixtureRequest, tmp_path) -> str:
    return datasource_url(request.param, tmp_path)


@pytest.fixture
def tables(url: str, unique_name: str):
    """A unique prefix for the test's tables (the MySQL database is shared); dropped after."""
    yield unique_name
    ds = connect(url)
    try:
        for suffix in ("", "_out"):
            ds.execute(f"DROP TABLE IF EXISTS {unique_name}{suffix}")
    finally:
        ds.close()


def libsvm_rows(count: int = 60) -> list[tuple[str, int]]:
    """LIBSVM key-value lists of keys 0..10 (SQLFlow's xgboost_sparse_data_case_sql.go's
    form) and their class: 1 where key 3's value is 1.5, 0 where it is -1.5."""
    generator = np.random.default_rng(7)
    found = []
    for row in range(count):
        keys = sorted({3, *generator.choice(11, 3, replace=False).tolist()})
        values = {key: round(float(generator.normal()), 2) for key in keys}
        values[3] = 1.5 if row % 2 else -1.5
        found.append((" ".join(f"{k}:{v:g}" for k, v in values.items()), row % 2))
    return found


@pytest.mark.parametrize("shape", ["", ", 11"])
def test_sparse_key_value_lists_in_sqlflows_default_format_train_and_predict(
    tmp_path, url, tables, capsys, shape
):
    """e2e_common_cases.go's caseXGBoostSparseKeyValueColumn: COLUMN SPARSE(c1) and
    SPARSE(c1, 11) over "1:0.5 3:-1.5 5:6.7"; every training row predicted right."""
    t, out = tables, f"{tables}_out"
    data = libsvm_rows()
    values = ", ".join(f"('{text}', {label})" for text, label in data)
    program = f"""CREATE TABLE {t} (c1 VARCHAR(255), label_col INT);
INSERT INTO {t} VALUES {values};
SELECT c1, label_col FROM {t}
TO TRAIN xgboost.gbtree
WITH objective = "binary:logistic", train.num_boost_round = 10
COLUMN SPARSE(c1{shape})
LABEL label_col
INTO {t}_model;
SELECT c1, label_col FROM {t} TO PREDICT {out}.new_label_col USING {t}_model;
"""
    status, err = run(tmp_path, url, program, capsys)
    assert status == 0, err
    found = dict(fetch_rows(url, f"SELECT * FROM {out}"))  # c1 and the label's new place
    assert {text: int(label) for text, label in found.items()} == dict(data)


@pytest.mark.parametrize(
    ("texts", "params"),
    [
        (["1:0.5 3:-1.5 5:6.7", "3:-1.3 10:0.6  2:-3.4"], {"delimiter": " ", "kv_delimiter": ":"}),
        (["0:0.2,3:0.5", "7:1"], {"delimiter": ","}),
        (["3,5,7", "1"], {"delimiter": ","}),
    ],
)
def test_sparse_without_a_delimiter_reads_the_format_of_its_values(texts, params):
    columns = {"c": np.array(texts, dtype=object), "y": np.array([0, 1])}
    (feature,) = derive(columns, [FeatureColumn("sparse", "c")], "y")
    assert feature.params == {**params, "shape": 11 if "3:-1.3" in texts[1] else 8}


def test_eval_metric_accuracy_score_is_refused_with_xgboosts_nearest_metric():
    """e2e_mysql_test.go's CaseXGBoost: XGBoost knows no accuracy_score."""
    text = """SELECT * FROM t TO TRAIN xgboost.gbtree
WITH objective = "multi:softprob", num_class = 3, eval_metric = accuracy_score
LABEL class INTO m;"""
    with pytest.raises(CheckError) as raised:
        analyze(parse(text))
    assert (raised.value.line, raised.value.column) == (2, 65)
    assert "accuracy_score is scikit-learn's accuracy, not an XGBoost metric" in str(raised.value)
    assert "merror, is 1 - accuracy" in str(raised.value)
    assert "validation.metrics = 'accuracy_score'" in (raised.value.hint or "")


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("SELECT * FROM t TO PREDICT t2.c USING models.sqlflow.org/public/my_first_model;", 39),
        ("SELECT * FROM t TO PREDICT t2.c WITH predict.batch_size = 9 USING a/m:v1;", 67),
        ("SELECT * FROM t TO EVALUATE sqlflow/sqlflow:step/m LABEL c INTO e;", 29),
        ("SELECT * FROM t TO EXPLAIN registry:5000/m:v1;", 28),
    ],
)
def test_a_published_models_name_is_refused_where_a_stored_model_is_meant(text, column):
    with pytest.raises(ParseError) as raised:
        parse(text)
    assert (raised.value.line, raised.value.column) == (1, column)
    assert "is a published model's name; sqlml uses the models stored in its database" in str(
        raised.value
    )
    assert "TO IMPORT" in (raised.value.hint or "")


def test_backquoted_names_work_on_every_database(tmp_path, url, tables, capsys):
    """MySQL's quoting, which SQLFlow programs use, in standard SQL, the SELECT,
    validation.select and the extended clauses."""
    t, out = tables, f"{tables}_out"
    values = ", ".join(f"({x}, {int(x > 4)})" for x in range(10))
    program = f"""CREATE TABLE `{t}` (`x` INT, `class` INT);
INSERT INTO `{t}` (`x`, `class`) VALUES {values};
SELECT `x`, `class` FROM `{t}` WHERE `x` >= 0
TO TRAIN xgboost.gbtree
WITH objective = "binary:logistic", train.num_boost_round = 5, min_child_weight = 0,
  validation.select = "SELECT `x`, `class` FROM `{t}`"
COLUMN `x`
LABEL `class`
INTO `{t}_model`;
SELECT `x` FROM `{t}` TO PREDICT `{out}`.`class` USING `{t}_model`;
"""
    status, err = run(tmp_path, url, program, capsys)
    assert status == 0, err
    found = fetch_rows(url, f"SELECT x, class FROM {out} ORDER BY x")
    assert [(int(x), int(c)) for x, c in found] == [(x, int(x > 4)) for x in range(10)]


@pytest.mark.parametrize(
    ("sql", "dialect", "expected"),
    [
        ("SELECT `a` FROM `s`.`t` -- `c`", "duckdb", 'SELECT "a" FROM "s"."t" -- `c`'),
        (
            "SELECT '`a`', \"`b`\", /* `c` */ `d`",
            "postgres",
            'SELECT \'`a`\', "`b`", /* `c` */ "d"',
        ),
        ("SELECT $$ `a` $$, `b`", "postgres", 'SELECT $$ `a` $$, "b"'),
        ('SELECT `a"b`', "duckdb", 'SELECT `a"b`'),  # the same length is kept: left as written
        ("SELECT `a`", "mysql", "SELECT `a`"),
        ("SELECT `a`", "sqlite", "SELECT `a`"),
    ],
)
def test_backquoted_names_are_double_quoted_outside_strings_and_comments(sql, dialect, expected):
    assert double_quoted(sql, dialect) == expected
