"""Where TO PREDICT, TO EVALUATE, TO EXPLAIN ... INTO and a search's trials table may write,
on all four databases: never into sqlml's own tables; into a table sqlml wrote, or a new
one; into any other table or view (or the table the SELECT reads) only with
``output.replace = true``. A refused write changes nothing and says so in one error."""

from __future__ import annotations

import numpy as np
import pytest

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError
from sqlml.models.store import ModelStore
from sqlml.statements.predict.handler import probability_columns
from sqlml.tables import OWN_TABLES

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
STATEMENTS = {
    "predict": "SELECT * FROM iris_test TO PREDICT {table}.class {opt_in} USING {model};",
    "evaluate": "SELECT * FROM iris_test TO EVALUATE {model} {opt_in} LABEL class INTO {table};",
    "explain": "SELECT * FROM iris_test TO EXPLAIN {model} {opt_in} INTO {table};",
}
OPT_IN = "WITH output.replace = true"


def _run(args: list[str], capsys) -> tuple[int, str]:
    status = main(args)
    return status, capsys.readouterr().err


@pytest.fixture
def model(iris_url, unique_name, capsys):
    """A datasource holding iris and a model trained on it."""
    train = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = 3 LABEL class INTO {unique_name};"
    )
    status, err = _run(["-e", train, "--datasource", iris_url], capsys)
    assert status == 0, err
    yield iris_url, unique_name
    ds = connect(iris_url)
    try:
        ModelStore(ds).drop(unique_name)
        for name in _tables(ds, unique_name):
            kind = "VIEW" if ds.describe_target([name]).kind == "view" else "TABLE"
            ds.execute(f"DROP {kind} IF EXISTS {ds.quote([name])}")
    finally:
        ds.close()


def _tables(ds, prefix: str) -> list[str]:
    if ds.dialect == "sqlite":
        found = ds.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    else:
        found = ds.execute(
            "SELECT table_name FROM information_schema.tables "
            f"WHERE table_schema = {ds.current_schema}"
        )
    return sorted(name for (name,) in found.rows if name.startswith(prefix))


def _rows(url: str, sql: str) -> list[tuple]:
    ds = connect(url)
    try:
        return [tuple(row) for row in ds.execute(sql).rows]
    finally:
        ds.close()


@pytest.mark.parametrize("own", OWN_TABLES)
def test_sqlml_tables_are_never_written(model, own, capsys, tmp_path):
    url, name = model
    program = tmp_path / "p.sql"
    program.write_text(STATEMENTS["predict"].format(table=own.upper(), model=name, opt_in=OPT_IN))
    for command in (["check", str(program)], ["run", str(program), "--datasource", url]):
        status, err = _run(command, capsys)
        assert status == 1 and "Traceback" not in err
        assert f"{own.upper()}, one of the tables sqlml keeps its models and runs in" in err
    ds = connect(url)
    try:  # also below the language: the write itself refuses, whatever it is asked
        assert ModelStore(ds).list_versions(name) == [1]  # the store is whole
        with pytest.raises(CheckError, match="one of the tables sqlml keeps its models"):
            ds.write_table([own], {"x": np.arange(2)}, replace=True)
    finally:
        ds.close()


@pytest.mark.parametrize("kind", STATEMENTS)
def test_a_users_table_is_replaced_only_with_output_replace(model, kind, capsys, tmp_path):
    url, name = model
    table = f"{name}_{kind}"
    ds = connect(url)
    ds.execute(f"CREATE TABLE {table} (keep INTEGER)")
    ds.execute(f"INSERT INTO {table} VALUES (7)")
    ds.close()
    refused = STATEMENTS[kind].format(table=table, model=name, opt_in="")
    program = tmp_path / "p.sql"
    program.write_text(refused)
    expected = f"error: table {table} exists and sqlml did not write it"
    for command in (["check", str(program)], ["-e", refused]):
        status, err = _run([*command, "--datasource", url], capsys)
        assert status == 1, err
        assert expected in err and "hint: write the output into another table, or add WITH " in err
        assert "Traceback" not in err
    assert _rows(url, f"SELECT * FROM {table}") == [(7,)]

    opted = STATEMENTS[kind].format(table=table, model=name, opt_in=OPT_IN)
    status, err = _run(["-e", opted, "--datasource", url], capsys)
    assert status == 0, err
    written = _rows(url, f"SELECT * FROM {table}")
    assert len(written) == {"predict": 30, "evaluate": 1, "explain": 4}[kind]
    # sqlml wrote it now: the next write replaces it without being asked
    status, err = _run(["-e", refused, "--datasource", url], capsys)
    assert status == 0, err
    assert _rows(url, f"SELECT * FROM {table}") == written
    ds = connect(url)
    try:
        assert _tables(ds, f"{table}__sqlml") == []
    finally:
        ds.close()


def test_a_view_is_replaced_only_when_asked_and_leaves_nothing_behind(model, capsys):
    url, name = model
    view = f"{name}_v"
    ds = connect(url)
    ds.execute(f"CREATE VIEW {view} AS SELECT * FROM iris_test")
    ds.close()
    refused = STATEMENTS["predict"].format(table=view, model=name, opt_in="")
    status, err = _run(["-e", refused, "--datasource", url], capsys)
    assert status == 1 and f"view {view} exists and sqlml did not write it" in err, err
    assert len(_rows(url, f"SELECT * FROM {view}")) == 30  # still the view
    opted = STATEMENTS["predict"].format(table=view, model=name, opt_in=OPT_IN)
    status, err = _run(["-e", opted, "--datasource", url], capsys)
    assert status == 0, err
    ds = connect(url)
    try:
        assert ds.describe_target([view]).kind == "table"
        assert _tables(ds, view) == [view]  # no view or staging table left aside
    finally:
        ds.close()


def test_the_table_the_select_reads_is_replaced_only_when_asked(model, capsys):
    url, name = model
    table = f"{name}_own"
    ds = connect(url)
    ds.write_table([table], {"x": np.arange(3.0), "sepal_length": np.arange(3.0)})
    ds.close()
    select = f"SELECT * FROM iris_test TO PREDICT {table}.class USING {name};"
    status, err = _run(["-e", select, "--datasource", url], capsys)
    assert status == 0, err  # sqlml's own table: replaced
    reads_itself = (
        f"SELECT id, {MEASURES} FROM {table} TO PREDICT {table}.class {{opt_in}} USING {name};"
    )
    status, err = _run(["-e", reads_itself.format(opt_in=""), "--datasource", url], capsys)
    assert status == 1 and "reads" in err and "output.replace" in err, err
    assert len(_rows(url, f"SELECT * FROM {table}")) == 30
    status, err = _run(["-e", reads_itself.format(opt_in=OPT_IN), "--datasource", url], capsys)
    assert status == 0, err
    assert len(_rows(url, f"SELECT * FROM {table}")) == 30


def test_a_search_refuses_a_trials_table_of_the_users_before_training(model, capsys):
    url, name = model
    searched = f"{name}_s"
    ds = connect(url)
    ds.execute(f"CREATE TABLE {searched}_trials (keep INTEGER)")
    ds.close()
    search = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
        "WITH max_depth = CHOICE(2, 3), search.algorithm = grid, train.num_boost_round = 3 "
        "{opt_in} "
        f"LABEL class INTO {searched};"
    )
    status, err = _run(["-e", search.format(opt_in=""), "--datasource", url], capsys)
    assert status == 1 and f"table {searched}_trials exists and sqlml did not write it" in err
    ds = connect(url)
    try:
        assert [n for n, _, _ in ModelStore(ds).list() if n.startswith(searched)] == []
    finally:
        ds.close()
    status, err = _run(["-e", search.format(opt_in=", output.replace = true"),
                        "--datasource", url], capsys)  # fmt: skip
    assert status == 0, err
    assert len(_rows(url, f"SELECT * FROM {searched}_trials")) == 2
    ds = connect(url)
    try:
        ModelStore(ds).drop(searched)
    finally:
        ds.close()


def test_a_result_column_replaces_a_selected_column_with_a_warning(model, capsys):
    """The prediction takes the place of a selected column of its name, as in SQLFlow: the
    label's silently, any other's (a feature above all) with a warning; the SELECT's table
    keeps its rows."""
    url, name = model
    table = f"{name}_clash"
    for result, said in (("sepal_length", "sepal_length (a feature of the model)"), ("id", "id")):
        clash = (
            f"SELECT * FROM iris_test TO PREDICT {table}.{result} "
            f"WITH output.replace = true USING {name};"
        )
        status, err = _run(["-e", clash, "--datasource", url], capsys)
        assert status == 0, err
        assert f"the predictions replace the SELECT's column {said}, as in SQLFlow" in err
        ds = connect(url)
        try:
            written = ds.execute(f"SELECT * FROM {table}")
            before = ds.execute(f"SELECT {result} FROM iris_test")
        finally:
            ds.close()
        assert written.columns[-1] == result and written.columns.count(result) == 1
        assert {row[-1] for row in written.rows} <= {"setosa", "versicolor", "virginica", 0, 1, 2}
        assert len(before.rows) == len(written.rows)  # the input kept its rows and values
    ds = connect(url)
    try:
        classes = ModelStore(ds).load(name).metadata["labels"]["classes"]
    finally:
        ds.close()
    taken = probability_columns("class", classes)[0]
    clash = (
        f"SELECT *, 0 AS {taken} FROM iris_test TO PREDICT {table}_p.class "
        f"WITH predict.extra_outputs = 'probabilities' USING {name};"
    )
    status, err = _run(["-e", clash, "--datasource", url], capsys)
    assert status == 1 and "Traceback" not in err
    replace = "which the extra outputs (predict.extra_outputs) would replace"
    assert f"the SELECT already returns {taken}, {replace}" in err
    ds = connect(url)
    try:
        assert ds.describe_target([f"{table}_p"]) is None  # nothing written
    finally:
        ds.close()
