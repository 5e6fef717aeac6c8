"""Limits: empty results, a single class, NULLs and NaNs, very wide and very varied data, and
statements of megabytes. Each case ends in a clear sqlml error (message and hint) or the right
result, and leaves no partial table or model behind (docs/reliability.md, Limits).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import KINDS, datasource_url

from sqlml.checking import check_program
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError
from sqlml.grammar import parse
from sqlml.models.store import ModelStore
from sqlml.plan import dependencies
from sqlml.semantics import analyze
from sqlml.semantics.sql_check import parse_sql, shorten

XGB = "xgboost.gbtree WITH objective = 'binary:logistic', train.num_boost_round = 5"
DNN = "DNNClassifier WITH model.n_classes = 2, train.epoch = 2"


def sqlml(capfd, url: str, program: str) -> tuple[int, str]:
    status = main(["-e", program, "--datasource", url])
    out, err = capfd.readouterr()
    return status, out + err


def tables(url: str, prefix: str) -> list[str]:
    """The tables whose names start with ``prefix``."""
    ds = connect(url)
    try:
        if url.startswith("sqlite"):
            found = ds.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        else:
            found = ds.execute("SELECT table_name FROM information_schema.tables")
        return sorted(name for (name,) in found.rows if name.startswith(prefix))
    finally:
        ds.close()


def models(url: str) -> list[str]:
    ds = connect(url)
    try:
        return [name for name, _, _ in ModelStore(ds).list()]
    finally:
        ds.close()


@pytest.fixture(params=KINDS)
def db(request, tmp_path, unique_name):
    """A database of each kind with table ``<u>_d``: x, a 0/1 label y, and NULL-holding
    copies xn (NULL every 7th row), yn (NULL every 5th row); 100 rows."""
    url = datasource_url(request.param, tmp_path)
    ds = connect(url)
    table = f"{unique_name}_d"
    ds.execute(f"CREATE TABLE {table} (x INTEGER, y INTEGER, xn INTEGER, yn INTEGER, one INTEGER)")
    rows = ", ".join(
        f"({i}, {int(i >= 50)}, {'NULL' if i % 7 == 0 else i}, "
        f"{'NULL' if i % 5 == 0 else int(i >= 50)}, 1)"
        for i in range(100)
    )
    ds.execute(f"INSERT INTO {table} VALUES {rows}")
    ds.close()
    yield url, unique_name
    leftovers = tables(url, unique_name)
    ds = connect(url)
    for name in leftovers:
        ds.execute(f"DROP TABLE IF EXISTS {ds.quote([name])}")
    store = ModelStore(ds)
    for name in models(url):
        if name.startswith(unique_name):
            store.drop(name)
    ds.close()


def assert_error(status: int, output: str, *parts: str) -> None:
    assert status == 1, output
    for part in parts:
        assert part in output, output
    assert "hint: " in output and "Traceback" not in output, output


# Empty results ------------------------------------------------------------------------------


def test_a_select_without_rows_is_an_error_for_every_statement(db, capfd):
    url, u = db
    empty = f"SELECT x, y FROM {u}_d WHERE x < 0"
    status, output = sqlml(capfd, url, f"{empty} TO TRAIN {XGB} LABEL y INTO {u}_m0;")
    assert_error(status, output, "the SELECT returned no rows", "WHERE")
    assert f"{u}_m0" not in models(url)

    status, output = sqlml(capfd, url, f"SELECT x, y FROM {u}_d TO TRAIN {XGB} LABEL y INTO {u}_m;")
    assert status == 0, output
    # An existing result table survives a PREDICT of nothing.
    ds = connect(url)
    ds.write_table([f"{u}_p"], {"x": np.array([7]), "y": np.array([1])})
    ds.close()
    for statement in (
        f"{empty} TO PREDICT {u}_p.y USING {u}_m;",
        f"{empty} TO EVALUATE {u}_m LABEL y INTO {u}_e;",
        f"{empty} TO EXPLAIN {u}_m INTO {u}_x;",
    ):
        status, output = sqlml(capfd, url, statement)
        assert_error(status, output, "the SELECT returned no rows")
    assert tables(url, u) == sorted([f"{u}_d", f"{u}_p"])
    ds = connect(url)
    assert ds.execute(f"SELECT x, y FROM {u}_p").rows == [(7, 1)]
    ds.close()


# One class, NULLs and NaNs --------------------------------------------------------------------


def test_a_label_with_a_single_class_is_an_error_for_a_classifier(db, capfd):
    url, u = db
    status, output = sqlml(
        capfd, url, f"SELECT x, one FROM {u}_d TO TRAIN {XGB} LABEL one INTO {u}_m;"
    )
    assert_error(status, output, "LABEL column one has a single class (1); a classifier needs two")
    assert f"{u}_m" not in models(url)
    # Without a classification objective the numbers are regressed: a constant is learnt.
    status, output = sqlml(
        capfd, url, f"SELECT x, one FROM {u}_d TO TRAIN xgboost.gbtree LABEL one INTO {u}_r;"
    )
    assert status == 0 and "validation_mae 0," in output, output


def test_null_labels_are_an_error_naming_the_column_and_count(db, capfd):
    url, u = db
    status, output = sqlml(
        capfd, url, f"SELECT x, yn FROM {u}_d TO TRAIN {XGB} LABEL yn INTO {u}_m;"
    )
    assert_error(status, output, "LABEL column yn has NULL (or NaN) values in 20 of 100 rows")
    assert "WHERE yn IS NOT NULL" in output
    assert f"{u}_m" not in models(url)

    status, output = sqlml(capfd, url, f"SELECT x, y FROM {u}_d TO TRAIN {XGB} LABEL y INTO {u}_m;")
    assert status == 0, output
    status, output = sqlml(
        capfd, url, f"SELECT x, yn FROM {u}_d TO EVALUATE {u}_m LABEL yn INTO {u}_e;"
    )
    assert_error(status, output, "LABEL column yn has NULL (or NaN) values in 20 of 100 rows")
    assert tables(url, u) == [f"{u}_d"]


def test_null_features_are_missing_values_for_xgboost(db, capfd):
    url, u = db
    program = (
        f"SELECT xn, y FROM {u}_d TO TRAIN {XGB}, validation.split = 0.0 LABEL y INTO {u}_m;"
        f"SELECT xn FROM {u}_d TO PREDICT {u}_p.y USING {u}_m;"
    )
    status, output = sqlml(capfd, url, program)
    assert status == 0, output
    ds = connect(url)
    rows = ds.execute(f"SELECT xn, y FROM {u}_p").rows
    ds.close()
    assert len(rows) == 100
    # Known values are learnt; a NULL goes down each tree's default branch: 0 or 1.
    assert all(y == int(xn >= 50) for xn, y in rows if xn is not None)
    assert {y for xn, y in rows if xn is None} <= {0, 1}


def test_nan_and_null_text_features_are_missing_values_for_xgboost(tmp_path, capfd):
    url = f"duckdb:///{tmp_path / 'nan.duckdb'}"
    program = (
        "CREATE TABLE d AS SELECT CASE WHEN i % 3 = 0 THEN 'nan'::DOUBLE ELSE i END AS x, "
        "CASE WHEN i % 7 = 0 THEN NULL WHEN i % 2 = 0 THEN 'even' ELSE 'odd' END AS s, "
        "(i >= 50)::INTEGER AS y FROM range(100) t(i);"
        f"SELECT x, s, y FROM d TO TRAIN {XGB}, validation.split = 0.0 LABEL y INTO m;"
        "SELECT x, s FROM d TO PREDICT p.y USING m;"
    )
    status, output = sqlml(capfd, url, program)
    assert status == 0, output
    ds = connect(url)
    rows = ds.execute("SELECT x, y FROM p").rows
    ds.close()
    known = [(x, y) for x, y in rows if x is not None]  # NaN is written back as NULL
    assert len(rows) == 100 and len(known) == 66
    assert all(y == int(x >= 50) for x, y in known)


@pytest.mark.keras
def test_keras_refuses_null_and_nan_features_with_a_hint(tmp_path, capfd):
    pytest.importorskip("keras")
    url = f"duckdb:///{tmp_path / 'k.duckdb'}"
    data = (
        "CREATE TABLE d AS SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE i END AS x, "
        "CASE WHEN i % 3 = 0 THEN 'nan'::DOUBLE ELSE i END AS z, "
        "(i >= 50)::INTEGER AS y FROM range(100) t(i);"
    )
    assert sqlml(capfd, url, data)[0] == 0
    for column in ("x", "z"):
        program = f"SELECT {column}, y FROM d TO TRAIN {DNN} LABEL y INTO m;"
        status, output = sqlml(capfd, url, program)
        assert_error(status, output, "the features hold NULL values", "COALESCE")
    assert models(url) == []
    # The hint's way out: COALESCE (here: the mean) trains.
    status, output = sqlml(
        capfd,
        url,
        f"SELECT COALESCE(x, (SELECT AVG(x) FROM d)) AS x, y FROM d TO TRAIN {DNN} LABEL y INTO m;",
    )
    assert status == 0, output
    assert models(url) == ["m"]


# Wide, varied and long inputs ------------------------------------------------------------------


def test_a_table_of_10000_columns_trains_and_predicts(tmp_path, capfd):
    url = f"duckdb:///{tmp_path / 'wide.duckdb'}"
    # The label is column c9999; the other columns are noise.
    noise = ", ".join(f"(i * {k % 7 + 2}) % 13 AS c{k}" for k in range(9_999))
    program = (
        f"CREATE TABLE w AS SELECT i % 2 AS y, {noise}, i % 2 AS c9999 FROM range(200) t(i);"
        f"SELECT * FROM w TO TRAIN {XGB} LABEL y INTO m;"
        "SELECT * FROM w TO PREDICT p.y USING m;"
    )
    status, output = sqlml(capfd, url, program)
    assert status == 0, output
    assert "validation_accuracy 1," in output, output
    ds = connect(url)
    result = ds.execute("SELECT * FROM p WHERE 1 = 0")
    wrong = ds.execute("SELECT COUNT(*) FROM p WHERE y <> c9999").rows[0][0]
    metadata = ModelStore(ds).load("m").metadata
    ds.close()
    assert len(result.columns) == 10_001 and wrong == 0  # the features and the prediction
    assert len(metadata["features"]) == 10_000


def test_a_feature_of_a_million_distinct_strings_keeps_a_bounded_vocabulary(tmp_path, capfd):
    url = f"duckdb:///{tmp_path / 'strings.duckdb'}"
    program = (
        "CREATE TABLE s AS SELECT 'id' || i::VARCHAR AS s, i % 10 AS n, "
        "(i % 10 >= 5)::INTEGER AS y FROM range(1000000) t(i);"
        f"SELECT s, n, y FROM s TO TRAIN {XGB} LABEL y INTO m;"
    )
    status, output = sqlml(capfd, url, program)
    assert status == 0, output
    assert "validation_accuracy 1," in output, output  # n decides; s is noise
    ds = connect(url)
    stored = ModelStore(ds).load("m")
    ds.close()
    (feature,) = [f for f in stored.metadata["features"] if f["column"] == "s"]
    # The 10,000 most frequent values and a bucket for all others: the model stays small.
    assert len(feature["params"]["vocabulary"]) == 10_000
    assert feature["params"]["bucket_size"] == 10_001
    assert len(json.dumps(stored.metadata)) < 1_000_000


def test_a_1mb_statement_runs(tmp_path, capfd):
    url = f"duckdb:///{tmp_path / 'long.duckdb'}"
    ids = ", ".join(str(i) for i in range(0, 300_000, 2))  # the even ids: 150,000 of them
    statement = (
        f"SELECT x, y FROM d WHERE x IN ({ids}) "
        f"TO TRAIN {XGB}, validation.split = 0.0 LABEL y INTO m;"
    )
    assert len(statement) > 1_000_000
    data = "CREATE TABLE d AS SELECT i AS x, (i % 4 = 0)::INTEGER AS y FROM range(1000) t(i);"
    status, output = sqlml(capfd, url, data + statement)
    assert status == 0, output
    assert "trained m (xgboost.gbtree) on 500 rows" in output, output


def test_a_1mb_statement_with_a_mistake_at_its_end_is_located(tmp_path, capfd):
    url = f"duckdb:///{tmp_path / 'long.duckdb'}"
    ids = ",\n".join(str(i) for i in range(150_000))
    statement = f"SELECT x, y FROM d WHERE x IN ({ids}) TO TRAIN {XGB} LABEL y INTO ;"
    status, output = sqlml(capfd, url, statement)
    assert status == 1 and "<-e>:150000:108: error: unexpected ';'" in output, output


def sqlglot_nodes(sql: str, dialect: str = "duckdb") -> int:
    """How many nodes the tree sqlml's analysis has sqlglot build for ``sql`` holds."""
    (tree,) = parse_sql(sql, dialect)
    return sum(1 for _ in tree.walk())


def test_a_multi_megabyte_in_list_is_checked_and_run_with_a_few_sqlglot_nodes(tmp_path, capfd):
    url = f"duckdb:///{tmp_path / 'long.duckdb'}"
    # 40,000 strings of 90 characters: 3.7 MB. sqlglot used to build an object per literal
    # (3 GB for 10 MB); the analysis now reads the list cut to its first and last items.
    names = ", ".join(f"'{i:090d}'" for i in range(40_000))
    query = f"SELECT count(*) AS n FROM d WHERE name IN ({names})"
    assert len(query) > 3_600_000
    assert sqlglot_nodes(query) < 30
    data = "CREATE TABLE d AS SELECT lpad(i::VARCHAR, 90, '0') AS name FROM range(100000) t(i);"
    program = f"{data}\n{query};\n"
    assert check_program(program, "duckdb") == []
    statements = analyze(parse(program))
    graph = dependencies(statements, "duckdb")
    assert graph.io[statements[1].id].reads_tables == {"d"}
    status, output = sqlml(capfd, url, program)
    assert status == 0 and "40000" in output, output


def test_long_runs_of_literals_and_rows_are_cut_to_their_first_and_last_items():
    numbers = ", ".join(str(i) for i in range(1000))
    lines = ",\n".join(str(i) for i in range(1000))
    rows = ", ".join(f"({i}, 'x{i}', -{i}.5e1)" for i in range(1000))
    sql = (
        f"WITH v(a, b, c) AS (VALUES {rows}) SELECT * FROM v JOIN t ON a IN ({numbers}) "
        f"WHERE b NOT IN ({lines}) AND c = 'x, 1, 2'"
    )
    short = shorten(sql)
    assert short.text == (
        "WITH v(a, b, c) AS (VALUES (0, 'x0', -0.5e1), (999, 'x999', -999.5e1)) "
        "SELECT * FROM v JOIN t ON a IN (0, 999) WHERE b NOT IN (0,\n999) AND c = 'x, 1, 2'"
    )
    for offset, character in enumerate(short.text):  # positions map back to the text
        assert sql[short.source_offset(offset)] == character
    assert sqlglot_nodes(sql) < 100


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 'a\\', " + ", ".join(["1"] * 500),  # a backslash: dialects read it differently
        "SELECT f(" + ", ".join(["1"] * 500) + ")",  # the last item stays: f(1, 1)
        "SELECT -- 1, 1, 1\n" + "/* " + ", ".join(["1"] * 500) + " */ 1",  # in a comment
        "SELECT '" + ", ".join(["1"] * 500) + "'",  # in a string
        "SELECT " + ", ".join(["1"] * 50),  # too short to matter
    ],
)
def test_literals_are_cut_only_as_whole_list_items_outside_strings_and_comments(sql):
    short = shorten(sql).text
    if "f(" in sql:
        assert short == "SELECT f(1, 1)"
    else:
        assert short == sql


def test_sql_errors_after_a_long_list_of_literals_are_located(tmp_path, capfd):
    ids = ", ".join(str(i) for i in range(200_000))
    lines = ",\n".join(str(i) for i in range(200_000))
    for program, line, column in (
        # On one line: the error's column is past the 1.3 MB of literals.
        (f"SELECT 1;\n  SELECT x FROM d WHERE x IN ({ids}) ORDER BY BY x;", 2, len(ids) + 45),
        # Over lines: the line of the error counts the list's lines.
        (f"SELECT x FROM d WHERE x IN ({lines}) AND AND x > 1;", 200_000, 13),
        (
            f"SELECT x FROM d WHERE x IN ({lines}) AND AND x > 1 TO PREDICT p.y USING m;",
            200_000,
            13,
        ),
    ):
        with pytest.raises(CheckError) as raised:
            analyze(parse(program))
        assert (raised.value.line, raised.value.column) == (line, column), raised.value.render()
        assert "SQL syntax error" in raised.value.message
        errors = check_program(program, "duckdb")
        assert [(e.line, e.column) for e in errors] == [(line, column)]
    status, output = sqlml(capfd, f"duckdb:///{tmp_path / 'long.duckdb'}", program)
    assert status == 1 and f"<-e>:{line}:{column}: error: SQL syntax error" in output, output
