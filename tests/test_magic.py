"""The Jupyter magic, run in a real IPython kernel by nbclient, and its variable binding."""

from __future__ import annotations

import io
import os
import re
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from sqlml.cli import main
from sqlml.datasources import connect, parse_url
from sqlml.errors import CheckError
from sqlml.repl.magic import SqlmlCellError, SqlmlMagics
from sqlml.repl.variables import bind
from sqlml.runtime.bound_parameters import bound, placeholders
from tests.conftest import ROOT, datasource_url, fetch_rows, iris_columns, load_iris

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
EVIL = "setosa' OR '1'='1"


def run_notebook(cells: list[tuple[str, bool]], folder: Path) -> list[nbformat.NotebookNode]:
    """Execute the cells (source, whether it is meant to fail) in a python3 kernel that
    imports this checkout's sqlml; each cell's outputs."""
    notebook = new_notebook(
        cells=[
            new_code_cell(source, metadata={"tags": ["raises-exception"]} if fails else {})
            for source, fails in cells
        ]
    )
    client, env = kernel(notebook, folder)
    client.execute(env=env)
    return [cell.outputs for cell in notebook.cells]


def kernel(
    notebook: nbformat.NotebookNode, folder: Path, timeout: int = 600
) -> tuple[NotebookClient, dict[str, str]]:
    """A client running ``notebook`` in ``folder`` in a python3 kernel, and the kernel's
    environment: this checkout's sqlml, a cache of its own, no default datasource."""
    client = NotebookClient(
        notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": folder}}
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SQLML_CACHE_DIR": str(folder / "cache")}
    env.pop("SQLML_DATASOURCE", None)
    return client, env


def iris_file(folder: Path) -> Path:
    """A DuckDB file in ``folder`` holding the iris tables."""
    database = folder / "iris.duckdb"
    source = connect(f"duckdb:///{database}")
    load_iris(source)
    source.close()
    return database


def text(outputs: list[nbformat.NotebookNode]) -> str:
    """The text a cell printed or showed."""
    parts = []
    for output in outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            parts.append(output.data.get("text/plain", ""))
    return "\n".join(parts)


def test_a_notebook_queries_trains_predicts_plots_and_binds_variables(tmp_path):
    database = iris_file(tmp_path)
    cells = [
        ("import sqlml\nprint(sqlml.__file__)", False),
        ("%load_ext sqlml", False),
        (f"%%sqlml --datasource duckdb:///{database} flowers\nSELECT * FROM iris_train;", False),
        ("print(type(flowers).__name__, flowers.shape, list(flowers.columns))", False),
        ("rounds = 20\nkind = 'setosa'\nevil = " + repr(EVIL), False),
        (
            f"%%sqlml\nSELECT {MEASURES}, class FROM iris_train\n"
            "TO TRAIN xgboost.gbtree WITH train.num_boost_round = :rounds LABEL class INTO m;",
            False,
        ),
        (
            "%%sqlml scored\nSELECT * FROM iris_test TO PREDICT pred.class USING m;\n"
            "SELECT count(*) AS n, sum(CAST(p.class = t.class AS INT)) AS correct\n"
            "FROM pred p JOIN iris_test t USING (id);",
            False,
        ),
        ("print(scored.n[0], scored.correct[0])", False),
        (
            "%%sqlml\nSELECT * FROM iris_test TO EVALUATE m WITH evaluate.plot = 'eval.png' "
            "LABEL class INTO metrics;",
            False,
        ),
        (
            "%%sqlml counts\nSELECT count(*) AS n FROM iris_train WHERE class = :kind\n"
            "UNION ALL SELECT count(*) FROM iris_train WHERE class = :evil;",
            False,
        ),
        ("print(counts.n.tolist())", False),
        ("%sqlml SELECT :evil AS v, count(*) AS n FROM iris_train", False),
        ("%%sqlml\nSELECT 1;\nSELECT * FROM no_such_table;", True),
        ("%sqlml SELECT * FROM no_such_table", True),
        ("%%sqlml\nSELECT 1;\n  SELEC 2;", True),
        (
            "%%sqlml live\nSELECT id, PREDICT(m) AS class, PREDICT_PROBA(m, 'setosa') AS p\n"
            "FROM iris_test ORDER BY id;",
            False,
        ),
        ("%%sqlml written\nSELECT id, class FROM pred ORDER BY id;", False),
        (
            "print(live[['id', 'class']].equals(written), len(live), live.p.between(0, 1).all())",
            False,
        ),
    ]
    outputs = run_notebook(cells, tmp_path)
    assert text(outputs[0]).strip() == str(ROOT / "sqlml" / "__init__.py")
    assert text(outputs[3]).strip() == (
        "DataFrame (120, 6) "
        "['id', 'sepal_length', 'sepal_width', 'petal_length', 'petal_width', 'class']"
    )
    trained = text(outputs[5])
    assert "trained m (xgboost.gbtree) on 96 rows" in trained
    assert "training (m): 20/20 rounds" in trained  # the progress line, at its end
    n, correct = map(int, text(outputs[7]).split())
    assert n == 30 and correct >= 27
    images = [o for o in outputs[8] if "image/png" in o.get("data", {})]
    assert len(images) == 1 and (tmp_path / "eval.png").is_file()
    assert "evaluated m on 30 rows" in text(outputs[8])
    assert text(outputs[10]).strip() == "[40, 0]"  # the injection attempt is one odd class name
    assert EVIL in text(outputs[11]) and "120" in text(outputs[11])
    (error,) = [output for output in outputs[12] if output.output_type == "error"]
    # Lines count as Jupyter counts them: the %%sqlml line is line 1.
    assert error.traceback[0].startswith("cell:3:15: error: DuckDB: Catalog Error")
    assert "no_such_table" in error.traceback[0]
    assert not any("Traceback" in line or 'File "' in line for line in error.traceback)
    (error,) = outputs[13]
    assert error.traceback[0].startswith("cell:1:15: error: DuckDB: Catalog Error")
    (error,) = [output for output in outputs[14] if output.output_type == "error"]
    assert error.traceback[0].startswith("cell:3:3: error: ")
    assert error.traceback[-2:] == ["3 |   SELEC 2;", "  |   ^"]
    # PREDICT in a query: the rows shown are the classes TO PREDICT wrote
    shown = outputs[15][0].data["text/plain"]
    assert re.search(r"^0\s+5\s+setosa\s+0\.\d+$", shown, re.MULTILINE), shown
    assert text(outputs[17]).strip() == "True 30 True"


@pytest.mark.parametrize(
    ("sql", "names"),
    [
        ("SELECT * FROM t WHERE a = :a AND b IN (:b, :c)", ["a", "b", "c"]),
        ("SELECT x[1:n], y::INT, ':s' AS s, \":q\" FROM t -- :c", []),
        ("SELECT * FROM t /* :c */ WHERE a=:a", ["a"]),
    ],
)
def test_placeholders_are_found_outside_strings_comments_slices_and_casts(sql, names):
    assert [p.name for p in placeholders(sql, "duckdb")] == names


def test_ml_statements_get_typed_literals_and_sql_keeps_placeholders():
    namespace = {"rounds": 7, "units": [8, 4], "kind": "it's", "rate": 0.5}
    train, select = bind(
        "SELECT * FROM t WHERE c <> :kind TO TRAIN DNNClassifier "
        "WITH model.hidden_units = :units, optimizer.learning_rate = :rate LABEL c INTO m;\n"
        "SELECT * FROM t WHERE c = :kind LIMIT :rounds;",
        namespace,
        "duckdb",
    )
    assert train.select == "SELECT * FROM t WHERE c <> 'it''s'"
    assert train.attributes["model.hidden_units"] == [8, 4]
    assert train.attributes["optimizer.learning_rate"] == 0.5
    assert select.text == "SELECT * FROM t WHERE c = :kind LIMIT :rounds"
    assert select.params == {"kind": "it's", "rounds": 7}
    assert (select.line, select.column) == (2, 1)


@pytest.mark.parametrize(
    ("namespace", "message"),
    [
        ({}, ":v names no Python variable"),
        ({"v": {"a": 1}}, ":v is a dict; SQL takes a str, int, float, bool or None"),
        ({"v": float("nan")}, ":v is nan, not a number SQL takes"),
    ],
)
def test_unusable_variables_are_errors_at_their_place(namespace, message):
    with pytest.raises(CheckError) as raised:
        bind("SELECT 1;\nSELECT * FROM t WHERE a =  :v;", namespace, "duckdb")
    assert raised.value.message == message
    assert (raised.value.line, raised.value.column) == (2, 28)


def test_a_with_string_cannot_smuggle_a_backslash():
    with pytest.raises(CheckError, match="backslash"):
        bind(
            "SELECT * FROM t TO TRAIN xgboost.gbtree WITH objective = :o LABEL c INTO m;",
            {"o": "x\\"},
            "duckdb",
        )


@pytest.mark.parametrize("kind", ["duckdb", "sqlite", "mysql", "postgresql"])
def test_bound_values_stay_values_on_every_database(kind, tmp_path):
    source = connect(datasource_url(kind, tmp_path))
    try:
        (statement,) = bind(
            "SELECT :evil AS v, '100%' AS p, :n AS n;", {"evil": EVIL, "n": 3}, source.dialect
        )
        result = source.execute(*bound(statement.text, statement.params, source))
    finally:
        source.close()
    assert result is not None
    assert [tuple(map(str, row)) for row in result.rows] == [(EVIL, "100%", "3")]


@pytest.mark.parametrize(
    ("dialect", "quote"), [("duckdb", '"'), ("sqlite", '"'), ("mysql", "`"), ("postgres", '"')]
)
def test_templates_paste_quoted_names_in_sql_and_ml_clauses(dialect, quote):
    namespace = {"table": "main.iris", "cols": ("a", "b"), "label": "class", "model": "m", "n": 3}
    train, select = bind(
        "SELECT {{cols}}, {{label}} FROM {{table}} WHERE a > :n\n"
        "TO TRAIN xgboost.gbtree COLUMN {{cols}} LABEL {{ label }} INTO {{model}};\n"
        "SELECT {{label}} FROM {{table}} -- {{nothing}}\nWHERE c = '{{kept}}' AND a > :n;",
        namespace,
        dialect,
    )
    q = quote
    assert train.select == (
        f"SELECT {q}a{q}, {q}b{q}, {q}class{q} FROM {q}main{q}.{q}iris{q} WHERE a > 3"
    )
    assert [f.column for f in train.features] == ["a", "b"]
    assert (train.label, train.model) == ("class", "m")
    assert select.text == (
        f"SELECT {q}class{q} FROM {q}main{q}.{q}iris{q} -- {{{{nothing}}}}\n"
        "WHERE c = '{{kept}}' AND a > :n"
    )
    assert select.params == {"n": 3}
    assert (select.line, select.column) == (3, 1)


def test_errors_after_a_template_point_at_the_text_as_written():
    with pytest.raises(CheckError) as raised:
        bind(
            "SELECT 1;\nSELECT {{cols}} FROM t TO TRAIN xgboost.gbtree WITH nope = 1 "
            "LABEL c INTO m;",
            {"cols": ["a_long_column", "another_long_column"]},
            "duckdb",
        )
    assert (raised.value.line, raised.value.column) == (2, 53)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "{{v}} names no Python variable"),
        (3, "{{v}} is 3; a template takes a name (a str) or a list of names"),
        ([], "{{v}} is []; a template takes a name (a str) or a list of names"),
        ("t; DROP TABLE t", "{{v}} is 't; DROP TABLE t', not a table or column name"),
        ("a.", "{{v}} is 'a.', not a table or column name"),
        (["a", 'b"c'], "{{v}} holds 'b\"c', not a table or column name"),
        ("1st", "{{v}} is '1st', not a table or column name"),
    ],
)
def test_a_template_holds_names_only(value, message):
    namespace = {} if value is None else {"v": value}
    with pytest.raises(CheckError) as raised:
        bind("SELECT 1;\nSELECT * FROM  {{v}};", namespace, "duckdb")
    assert raised.value.message == message
    assert (raised.value.line, raised.value.column) == (2, 16)


@pytest.mark.parametrize("sql", ["SELECT {{ 1 }} FROM t", "SELECT {{a b}} FROM t", "SELECT {{"])
def test_double_braces_without_a_name_are_an_error(sql):
    with pytest.raises(CheckError, match=r"'\{\{' opens no template"):
        bind(sql, {"a": "x"}, "duckdb")


@pytest.mark.parametrize("kind", ["duckdb", "sqlite", "mysql", "postgresql"])
def test_templated_names_reach_every_database(kind, tmp_path):
    source = connect(datasource_url(kind, tmp_path))
    namespace = {"table": "sqlml_template_test", "column": "order"}  # a keyword as a name
    try:
        (create, insert, select) = bind(
            "CREATE TABLE {{table}} ({{column}} INT);\n"
            "INSERT INTO {{table}} VALUES (:n);\nSELECT {{column}} FROM {{table}};",
            {**namespace, "n": 7},
            source.dialect,
        )
        source.execute("DROP TABLE IF EXISTS sqlml_template_test")
        for statement in (create, insert):
            source.execute(*bound(statement.text, statement.params, source))
        result = source.execute(select.text)
        source.execute("DROP TABLE sqlml_template_test")
    finally:
        source.close()
    assert result is not None and result.rows == [(7,)]


@pytest.mark.parametrize(
    ("kind", "server"),
    [
        ("duckdb", r"DuckDB v[\d.]+"),
        ("sqlite", r"SQLite [\d.]+"),
        ("mysql", r"(MariaDB|MySQL) [\d.]+"),
        ("postgresql", r"PostgreSQL [\d.]+"),
    ],
)
def test_a_datasource_alone_is_confirmed_and_a_bad_one_keeps_the_last(kind, server, tmp_path):
    url = datasource_url(kind, tmp_path)
    magics = SqlmlMagics(shell=None)
    with redirect_stdout(io.StringIO()) as said:
        magics.sqlml(f"--datasource {url}")
    shown = str(parse_url(url))
    assert re.fullmatch(f"connected to {re.escape(shown)} \\({server}\\)\n", said.getvalue())
    with pytest.raises(SqlmlCellError) as raised:
        magics.sqlml("--datasource mysql://root:hunter2@127.0.0.1:1/test")
    message = str(raised.value)
    assert message.startswith("--datasource: error: cannot connect to mysql://root:***@")
    assert message.endswith(f"the datasource stays {shown}") and "hunter2" not in message
    assert magics.datasource == url


def test_a_bug_is_one_paragraph_in_the_cell(tmp_path, monkeypatch):
    """A bug in sqlml, planted in ASSERT's handler (in the run) and in the binding of
    variables (outside it), shows as one paragraph, its traceback kept in a file."""

    def broken(*args: object) -> None:
        raise AttributeError("planted")

    monkeypatch.setenv("SQLML_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("sqlml.statements.assertion.handler.check_assertion", broken)
    magics = SqlmlMagics(shell=None)
    magics.shell = type("Shell", (), {"user_ns": {}})()
    with redirect_stdout(io.StringIO()):
        magics.sqlml(f"--datasource duckdb:///{tmp_path / 'db.duckdb'}")
    with pytest.raises(SqlmlCellError) as in_the_run:
        magics.sqlml("", "SELECT 1;\nASSERT 1 = 1;")
    said = str(in_the_run.value)
    assert re.match(r"cell:3:1: error: internal error in step s2-assert\S*: AttributeError", said)
    assert "traceback kept in" in said and "Traceback" not in said

    monkeypatch.setattr("sqlml.repl.variables.bind", broken)
    with pytest.raises(SqlmlCellError) as outside:
        magics.sqlml("", "SELECT 1;")
    said = str(outside.value)
    assert said.startswith("cell: error: internal error in the cell: AttributeError: planted")
    (kept,) = [path for path in (tmp_path / "cache" / "errors").iterdir()]
    assert "AttributeError: planted" in kept.read_text()


def test_a_cell_fails_with_every_failure_of_its_statements(tmp_path):
    """The cell's error holds each statement that failed and each it left out, in order
    (only the first failure used to be shown); the results of the others still show."""
    magics = SqlmlMagics(shell=None)
    magics.shell = SimpleNamespace(user_ns={})
    magics.datasource = f"duckdb:///{tmp_path / 'cell.duckdb'}"
    cell = (
        "SELECT 41 + 1 AS answer;\n"
        "ASSERT 1 = 2 MESSAGE 'first';\n"
        "CREATE TABLE t AS SELECT * FROM nowhere;\n"
        "SELECT * FROM t;\n"
    )
    with pytest.raises(SqlmlCellError) as raised, redirect_stdout(io.StringIO()) as printed:
        magics.sqlml("", cell)
    told = [line for line in str(raised.value).splitlines() if line.startswith("cell:")]
    assert told == [
        "cell:3:1: error: ASSERT failed: first: 1 = 2 is false",
        "cell:4:33: error: DuckDB: Catalog Error: Table with name nowhere does not exist!",
        "cell:5:1: note: not run: it waits for s3-create, which failed",
    ]
    assert "answer" in printed.getvalue() and "42" in printed.getvalue()  # displayed


@pytest.mark.parametrize("kind", ["duckdb", "sqlite", "mysql", "postgresql"])
def test_a_cell_runs_a_query_with_predict_and_shows_its_rows(kind, tmp_path, unique_name):
    """PREDICT and PREDICT_PROBA in a cell's query, on each database: the rows the cell shows
    (its value, kept in the variable it names) are TO PREDICT's. (The model is trained by
    ``sqlml -e``: a training's progress bar needs a kernel, as in the notebook test above.)"""
    url, t = datasource_url(kind, tmp_path), unique_name
    source = connect(url)
    source.write_table([t], iris_columns(), replace=True)
    source.close()
    program = (
        f"SELECT {MEASURES}, class FROM {t} TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = 3 LABEL class INTO {t}_m;\n"
        f"SELECT id, {MEASURES} FROM {t} TO PREDICT {t}_p.class "
        f"WITH predict.extra_outputs = 'probabilities' USING {t}_m;"
    )
    magics = SqlmlMagics(shell=None)
    magics.shell = SimpleNamespace(user_ns={})
    magics.datasource = url
    try:
        assert main(["-e", program, "--datasource", url]) == 0
        shown = magics.sqlml(
            "scored",
            f"SELECT id, PREDICT({t}_m) AS class, PREDICT_PROBA({t}_m, 'virginica') AS p\n"
            f"FROM {t} WHERE PREDICT({t}_m) <> 'setosa' ORDER BY id;",
        )
        assert magics.shell.user_ns["scored"] is shown
        expected = fetch_rows(
            url, f"SELECT id, class, class_virginica FROM {t}_p WHERE class <> 'setosa' ORDER BY id"
        )
        assert list(shown.columns) == ["id", "class", "p"] and len(expected) >= 90
        assert [(int(i), c) for i, c in zip(shown.id, shown["class"], strict=True)] == [
            (int(i), c) for i, c, _ in expected
        ]
        assert shown.p.tolist() == pytest.approx([p for _, _, p in expected], abs=1e-6)
    finally:
        drop = f"DROP TABLE IF EXISTS {t}_p;\nDROP TABLE {t};\nDROP MODEL IF EXISTS {t}_m;"
        main(["-e", drop, "--datasource", url])
