"""The shell at psql's level: schemas (\\dn, \\d schema.table, schema. completing), psql's
commands (\\set and :var, \\echo, \\conninfo, \\l, \\g, \\watch, \\copy, \\pset, \\d+, \\s, \\!,
\\h), a command typed on a continuation line, the startup file, row counts of INSERT, UPDATE
and DELETE, and database errors at their line and column, on DuckDB, MariaDB and
PostgreSQL."""

from __future__ import annotations

import re

import pytest

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError, DatasourceError
from sqlml.repl.catalog import Catalog
from sqlml.repl.meta_commands import COMMANDS, run_entry
from sqlml.repl.session import Session
from sqlml.repl.shell_variables import substitute
from sqlml.repl.statements import command_after_statements, entries, is_complete
from tests.conftest import ROOT, datasource_url
from tests.test_repl import CTRL_C, PROMPT, TAB, Shell

SERVERS = ["duckdb", "mysql", "postgresql"]


def test_variables_follow_psqls_quoting_and_never_enter_strings_or_comments():
    variables = {"lim": "2", "who": "it's", "col": 'we"ird'}
    text = (
        "SELECT :\"col\", ':lim', x::int, :'who' -- :lim\n"
        "FROM t /* :lim */ WHERE $$ :lim $$ <> :unset LIMIT :lim;"
    )
    written, shifts = substitute(text, variables, "postgres")
    assert written == (
        "SELECT \"we\"\"ird\", ':lim', x::int, 'it''s' -- :lim\n"
        "FROM t /* :lim */ WHERE $$ :lim $$ <> :unset LIMIT 2;"
    )
    assert len(shifts) == 3
    assert substitute("SELECT :'who';", {"who": "a\\b"}, "mysql")[0] == "SELECT 'a\\\\b';"


def test_a_command_on_a_continuation_line_is_run_as_psql_runs_it():
    assert command_after_statements("SELECT 1\n\\d t\n") == ("SELECT 1\n", "\\d t")
    assert command_after_statements("SELECT '\n\\d t\n") is None  # inside a string
    assert is_complete("SELECT 1\n\\d") and not is_complete("SELECT 1\nFROM t")
    script = ["SELECT 1\n", "\\echo between\n", "  AS one;\n", "SELECT 2\n", "\\g\n"]
    assert list(entries(script)) == [
        (2, "\\echo between\n"),  # a command of its own; the statement goes on after it
        (1, "SELECT 1\n  AS one;\n"),
        (4, "SELECT 2\n\\g\n"),  # \g runs what was typed before it
    ]


@pytest.mark.parametrize("kind", SERVERS)
def test_database_errors_point_at_the_mistake(kind, tmp_path, capsys):
    url = datasource_url(kind, tmp_path)
    datasource = connect(url)
    try:
        with pytest.raises(DatasourceError) as raised:
            datasource.execute("SELECT 1,\n  2 FORM x")
        assert raised.value.offset == len("SELECT 1,\n  2 FORM ")  # the syntax error's place
        with pytest.raises(DatasourceError) as raised:
            datasource.execute("SELECT a, nope FROM (SELECT 1 AS a) AS t")
        assert raised.value.offset == len("SELECT a, ")
        assert "LINE 1" not in (raised.value.unplaced or "")  # the shell draws its own caret
    finally:
        datasource.close()
    program = (
        "SELECT 1;\nSELECT a,\n  nope FROM (SELECT 1 AS a) AS t;\nSELECT 1 FROM no_table_here;\n"
    )
    status, err = _run(tmp_path, url, program, capsys)
    assert status == 1
    assert re.search(r"program\.sql:3:3: error: \w+: .*nope", err), err
    assert "LINE " not in err  # DuckDB's own drawing of the place is left out once mapped
    assert re.search(r"program\.sql:4:15: error: \w+: .*no_table_here", err), err
    status, err = _run(
        tmp_path, url, "SELECT 1 AS x\nTO PREDICT out.y USING no_such_model;", capsys
    )
    assert "program.sql:2:24: error: model no_such_model does not exist" in err


def _run(tmp_path, url, text, capsys):
    program = tmp_path / "program.sql"
    program.write_text(text)
    status = main(["run", str(program), "--datasource", url])
    return status, capsys.readouterr().err


def test_a_backslash_command_outside_the_shell_is_refused(tmp_path, capsys):
    marker = tmp_path / "ran"
    assert main(["-e", f"\\! touch {marker}", "--datasource", "duckdb:///:memory:"]) == 1
    err = capsys.readouterr().err
    assert "\\! is a command of sqlml's interactive shell, not a statement" in err
    assert not marker.exists()  # neither the shell nor the database ran it
    from sqlml.repl.variables import bind  # the notebook's cells
    from sqlml.ui.editor_runner import _analyzed  # the web editor's text

    for read in (lambda text: bind(text, {}, "duckdb"), lambda text: _analyzed(text, "duckdb")):
        with pytest.raises(CheckError, match=r"\\! is a command of sqlml's interactive shell"):
            read(f"SELECT 1;\n\\! touch {marker}\n")


@pytest.fixture(params=SERVERS)
def server(request, tmp_path, unique_name):
    """A URL of each database, with a schema of its own (a database, on MySQL) holding a
    table ``orders``, and a table ``<name>_t`` in the default schema; all dropped after."""
    url = datasource_url(request.param, tmp_path)
    schema, table = f"{unique_name}_s", f"{unique_name}_t"
    datasource = connect(url)
    datasource.execute(f"CREATE SCHEMA {schema}")
    datasource.execute(f"CREATE TABLE {schema}.orders (id INT, amount INT)")
    datasource.execute(f"CREATE TABLE {table} (x INT, y VARCHAR(10))")
    datasource.close()
    yield url, schema, table
    datasource = connect(url)
    try:
        datasource.execute(f"DROP TABLE {schema}.orders")
        datasource.execute(f"DROP SCHEMA {schema}")
        datasource.execute(f"DROP TABLE {table}")
    finally:
        datasource.close()


def test_schemas_counts_and_copies_on_each_database(server, tmp_path):
    url, schema, table = server
    shown: list[str] = []
    session = Session(url, "table", shown.append)
    try:
        assert f"{schema}.orders" in session.catalog.tables  # not on the search path
        assert session.catalog.find(f"{schema.upper()}.ORDERS") is not None
        assert table in session.catalog.tables and table in session.catalog.names(table)[0]
        lines = [
            f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b'), (3, NULL);",
            f"UPDATE {table} SET y = 'z' WHERE x = 2;",
            f"\\copy (SELECT * FROM {table} ORDER BY x) TO '{tmp_path / 'rows.csv'}' CSV HEADER",
            f"DELETE FROM {table};",
            f"\\copy {table} FROM '{tmp_path / 'rows.csv'}' CSV HEADER",
            f"SELECT x, y FROM {table} ORDER BY x;",
            "\\dn",
            f"\\d+ {schema}.orders",
            "\\l",
            "\\conninfo",
        ]
        for line in lines:
            assert run_entry(line, session), (line, shown)
    finally:
        session.close()
    said = "".join(shown)
    assert "INSERT 0 3\n" in said and "UPDATE 1\n" in said and "DELETE 3\n" in said
    assert (tmp_path / "rows.csv").read_text().splitlines() == ["x,y", "1,a", "2,z", "3,"]
    assert said.count("COPY 3\n") == 2
    assert re.search(r" 1 \| a\n +2 \| z\n +3 \| NULL\n\(3 rows\)", said)
    assert re.search(rf"{schema}\s+\|\s+1\s+\|\s*\n", said)  # \dn: not on the search path
    assert re.search(r"amount\s+\|\s+int", said, re.IGNORECASE) and "rows: 0\n" in said
    assert re.search(r"\n test\s*\n", said)  # \l: the database test (test.duckdb)
    assert re.search(
        r"connected to \S+ \((DuckDB|MariaDB|PostgreSQL) [^)]+\); schemas searched", said
    )


@pytest.mark.parametrize("kind", SERVERS)
def test_psql_habits_in_a_terminal(kind, tmp_path, unique_name):
    url = datasource_url(kind, tmp_path)
    schema, table = f"{unique_name}_s", f"{unique_name}_t"
    datasource = connect(url)
    datasource.execute(f"CREATE SCHEMA {schema}")
    datasource.execute(f"CREATE TABLE {schema}.orders (id INT, amount INT)")
    datasource.close()
    shell = Shell(url, tmp_path / "history")
    try:
        _session(shell, schema, table)
    finally:
        if shell.child.isalive():
            shell.child.terminate(force=True)
        datasource = connect(url)
        for drop in (f"TABLE {schema}.orders", f"SCHEMA {schema}", f"TABLE IF EXISTS {table}"):
            datasource.execute(f"DROP {drop}")
        datasource.close()


def _session(shell: Shell, schema: str, table: str) -> None:
    """What a psql user types, on a table ``table`` made here and ``schema.orders``."""
    shell.run(f"CREATE TABLE {table} (x INT);")
    assert shell.run(f"INSERT INTO {table} VALUES (1), (2), (3);").startswith("INSERT 0 3\n")
    assert re.search(rf"{schema}\s+\|\s+1\s+\|", shell.run("\\dn", until=r"\(\d+ rows\)"))
    assert f"{schema}.orders" in shell.run(f"\\dt {schema}.*", until=r"\(1 row\)")
    described = shell.run(f"\\d {schema}.orders", until=r"\(2 rows\)")
    assert re.search(r"amount\s+\|\s+int", described, re.IGNORECASE)
    shell.child.send(f"SELECT * FROM {schema}.ord")  # the catalog knows the schema's tables
    shell.expect(f"{schema}.orders")  # the menu offers it as it is typed
    shell.child.send(TAB)
    assert "(0 rows)" in shell.run(";")
    shell.run("\\set lim 2", until="")
    limited = shell.run(f"SELECT x FROM {table} ORDER BY x LIMIT :lim;")
    assert re.search(r"\n +1\n +2\n\(2 rows\)", limited), limited
    # \d on a continuation line runs, and what was typed waits at the next prompt
    shell.child.send("SELECT count(*) AS n\r")
    shell.expect(r"\.\.\.>")
    assert re.search(r"x\s+\|\s+int", shell.run(f"\\d {table}", until=r"\(1 row\)"), re.I)
    shell.expect(r"SELECT count\(\*\) AS n")  # back at the prompt, to be finished
    counted = shell.run(f"\rFROM {table};")
    assert re.search(r"\n +3\n\(1 row\)", counted), counted
    # \watch runs the last entry until Ctrl-C
    shell.child.send("\\watch 0.1\r")
    shell.expect(r"\(every 0\.1s\)[\s\S]*?\(1 row\)[\s\S]*?\(every 0\.1s\)")
    shell.child.send(CTRL_C)
    shell.expect(PROMPT)
    error = shell.run(f"SELECT x,\n  nope FROM {table};", until=r"\^\r?\n")
    assert "<input>:2:3: error:" in error and "2 |   nope FROM" in error, error
    assert shell.run("\\echo done :lim", until=r"\n") == "done 2\n"
    shell.quit()


def test_startup_file_shell_escape_and_file_names(iris_duckdb_url, tmp_path):
    rc = tmp_path / "sqlmlrc"
    rc.write_text("\\set greeting hello\n\\timing off\n")
    (tmp_path / "script_to_run.sql").write_text("SELECT 40 + 2 AS answer;\n")
    shell = Shell(iris_duckdb_url, tmp_path / "history", SQLMLRC=str(rc))
    assert shell.run("\\echo :greeting", until=r"\n") == "hello\n"
    assert "Time:" not in shell.run("SELECT 1 AS one;", until=r"\(1 row\)\r?\n")  # \timing off
    marker = tmp_path / "ran"
    shell.run(f"\\! touch {marker} && echo made", until=r"made\r?\n")
    assert marker.exists()
    shell.child.send(f"\\i {tmp_path}/script_to")
    shell.child.send(TAB)  # completes the file's name
    shell.expect("script_to_run.sql")
    shell.child.send("\r")
    shell.expect(r"answer\s+-+\s+42")
    assert "SELECT ... TO TRAIN ... [WITH ...]" in shell.run("\\h TRAIN", until=r"syntax\.\r?\n")
    shell.quit()


def test_the_catalog_names_other_schemas_tables_with_their_schema():
    catalog = Catalog(search_path=["public"])
    from sqlml.repl import catalog as module

    catalog.tables, catalog.schemas = module._named(
        [
            ("public", "orders", "id", "int"),
            ("sales", "orders", "id", "int"),
            ("sales", "regions", "name", "text"),
        ],
        ["public"],
    )
    assert list(catalog.tables) == ["orders", "sales.orders", "sales.regions"]
    assert catalog.schemas == {"public": ["orders"], "sales": ["orders", "regions"]}
    assert catalog.find("public.orders") == ("orders", [("id", "int")])
    assert catalog.parts("sales.orders") == ["sales", "orders"]


def test_the_docs_table_lists_every_command():
    table = (ROOT / "docs" / "repl.md").read_text().split("## Backslash commands")[1]
    listed = set(re.findall(r"^\| `(\\\S+?)[ `]", table, re.MULTILINE))
    listed |= set(re.findall(r"`(\\\S+?)[ `]", table.split("\n\n")[1]))
    assert set(COMMANDS) <= listed, set(COMMANDS) - listed
