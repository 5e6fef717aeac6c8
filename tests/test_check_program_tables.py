"""sqlml check knows what a program's own statements create, alter and drop: no error where
the program runs, the database's error where it would fail, and nothing left behind."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from conftest import datasource_url, fetch_rows, run_program

from sqlml.checking import check_program, errors_of
from sqlml.cli import main
from sqlml.datasources import Datasource, connect

DATABASES = ["duckdb", "mysql", "postgresql"]


@pytest.fixture(params=DATABASES)
def url(request: pytest.FixtureRequest, tmp_path) -> str:
    return datasource_url(request.param, tmp_path)


@pytest.fixture
def p(unique_name: str, url: str) -> Iterator[str]:
    """The prefix of the names a test's program uses; what it left is dropped at the end."""
    yield unique_name
    ds = connect(url)
    try:
        for kind, schema, name in _objects(ds, unique_name):
            if kind == "SCHEMA":
                cascade = "" if ds.dialect == "mysql" else " CASCADE"
                ds.execute(f"DROP SCHEMA {ds.quote([name])}{cascade}")
            else:
                ds.execute(f"DROP {kind} IF EXISTS {ds.quote([schema, name])}")
    finally:
        ds.close()


def _objects(ds: Datasource, prefix: str) -> list[tuple[str, str, str]]:
    """The views, tables and schemas whose names start with ``prefix``."""
    like = f"'{prefix}%'"
    found = ds.execute(
        "SELECT CASE WHEN table_type = 'VIEW' THEN 'VIEW' ELSE 'TABLE' END, table_schema, "
        f"table_name FROM information_schema.tables WHERE table_name LIKE {like} "
        f"UNION ALL SELECT 'SCHEMA', schema_name, schema_name FROM information_schema.schemata "
        f"WHERE schema_name LIKE {like} ORDER BY 1 DESC"
    )
    return [tuple(row) for row in found.rows]


def checked(url: str, text: str) -> list[tuple[int, int, str]]:
    """The errors ``sqlml check --datasource url`` finds in ``text``: line, column, message."""
    ds = connect(url)
    try:
        return [
            (e.line, e.column, e.message) for e in errors_of(check_program(text, ds.dialect, ds))
        ]
    finally:
        ds.close()


def catalog(url: str, prefix: str) -> list[tuple]:
    """Every schema, table, column and type the test's database holds (on MySQL, whose
    server other tests share: its database and the schemas named with ``prefix``)."""
    ds = connect(url)
    try:
        where = (
            f"table_schema = DATABASE() OR table_schema LIKE '{prefix}%'"
            if ds.dialect == "mysql"
            else "table_schema NOT IN ('pg_catalog', 'information_schema')"
        )
        columns = ds.execute(
            "SELECT table_schema, table_name, column_name, data_type "
            f"FROM information_schema.columns WHERE {where} ORDER BY 1, 2, 3"
        )
        schemata = ds.execute(
            "SELECT schema_name FROM information_schema.schemata "
            f"WHERE schema_name LIKE '{prefix}%' ORDER BY 1"
        )
        return [tuple(row) for row in columns.rows + schemata.rows]
    finally:
        ds.close()


def test_tables_an_earlier_statement_creates_are_known(url, p, tmp_path, capsys):
    program = (
        f"CREATE TABLE {p}_t5 AS SELECT 1 AS x;\n"
        f"CREATE TABLE {p}_u5 AS SELECT * FROM {p}_t5;\n"
        f"ASSERT (SELECT count(*) FROM {p}_t5) = 1;\n"
    )
    assert checked(url, program) == []
    assert run_program(tmp_path, url, program, capsys)[0] == 0


def test_a_chain_of_tables_altered_on_the_way(url, p):
    program = (
        f"CREATE TABLE {p}_a AS SELECT 1 AS x, 'b' AS y;\n"
        f"CREATE TABLE {p}_b AS SELECT x, y FROM {p}_a;\n"
        f"CREATE TABLE {p}_c AS SELECT x AS v, y FROM {p}_b;\n"
        f"ALTER TABLE {p}_c ADD COLUMN w INTEGER;\n"
        f"ALTER TABLE {p}_c RENAME COLUMN y TO z;\n"
        f"SELECT v, w, z FROM {p}_c TO TRAIN xgboost.gbtree LABEL z INTO {p}_m;\n"
        f"SELECT v, y FROM {p}_c TO TRAIN xgboost.gbtree LABEL v INTO {p}_m2;\n"
        f"CREATE TABLE {p}_d AS SELECT vv FROM {p}_c;\n"
    )
    found = checked(url, program)
    assert [(line, column) for line, column, _ in found] == [(7, 1), (8, 1)]
    assert re.search(r"\by\b", found[0][2]) and "vv" in found[1][2]  # the database's words


def test_a_table_dropped_then_read(url, p):
    program = (
        f"CREATE TABLE {p}_e AS SELECT 1 AS x;\n"
        f"DROP TABLE {p}_e;\n"
        f"SELECT * FROM {p}_e TO TRAIN xgboost.gbtree LABEL x INTO {p}_m;\n"
    )
    [(line, column, message)] = checked(url, program)
    assert (line, column) == (3, 1) and f"{p}_e" in message


def test_a_schema_and_its_tables(url, p):
    program = (
        f"CREATE SCHEMA {p}_s;\n"
        f"CREATE TABLE {p}_s.t AS SELECT 1 AS x, 2 AS y;\n"
        f"SELECT x, y FROM {p}_s.t TO TRAIN xgboost.gbtree LABEL y INTO {p}_m;\n"
        f"SELECT x, yy FROM {p}_s.t TO TRAIN xgboost.gbtree LABEL x INTO {p}_m2;\n"
    )
    found = [(line, column) for line, column, _ in checked(url, program)]
    # MySQL creates a schema (a database) for good: the check does not, nor its tables.
    assert found == ([] if url.startswith("mysql") else [(4, 1)])


def test_label_and_column_in_another_case_than_the_table(url, p):
    ds = connect(url)
    table = ds.quote([f"{p}_cust"])
    ds.execute(f'CREATE TABLE {table} ({ds.quote(["SeniorCitizen"])} INTEGER, "x" INTEGER)'
               .replace('"x"', ds.quote(["Tenure"])))  # fmt: skip
    ds.close()
    program = (
        f"SELECT * FROM {p}_cust TO TRAIN xgboost.gbtree COLUMN tenure LABEL seniorcitizen "
        f"INTO {p}_m;\n"
        f"CREATE TABLE {p}_cust2 AS SELECT * FROM {p}_cust;\n"
        f"SELECT * FROM {p}_cust2 TO TRAIN xgboost.gbtree COLUMN TENURE LABEL SENIORCITIZEN "
        f"INTO {p}_m2;\n"
        f"SELECT * FROM {p}_cust2 TO EVALUATE {p}_m2 LABEL seniorCitizen INTO {p}_e;\n"
    )
    assert checked(url, program) == []


def test_after_a_statement_of_unknown_effects_nothing_is_judged(url, p):
    """A SET may change what names mean (a search path): what follows it cannot be known.
    A statement that changes no table (EXPLAIN, ANALYZE, GRANT...) leaves the check going."""
    program = (
        "EXPLAIN SELECT 1;\n"
        f"SELECT * FROM {p}_nowhere TO TRAIN xgboost.gbtree LABEL y INTO {p}_m;\n"
        "SET search_path = elsewhere;\n"
        f"SELECT * FROM {p}_nowhere TO TRAIN xgboost.gbtree LABEL y INTO {p}_m;\n"
    )
    assert [(line, column) for line, column, _ in checked(url, program)] == [(2, 1)]


def test_nothing_is_left_behind(url, p):
    ds = connect(url)
    old = ds.quote([f"{p}_old"])
    ds.execute(f"CREATE TABLE {old} (a INTEGER)")
    ds.execute(f"INSERT INTO {old} VALUES (1), (2)")
    ds.close()
    program = (
        f"CREATE SCHEMA {p}_s;\n"
        f"CREATE TABLE {p}_s.t AS SELECT 1 AS x;\n"
        f"CREATE TABLE {p}_n (a INTEGER, b INTEGER);\n"
        f"INSERT INTO {p}_n VALUES (1, 2);\n"
        f"CREATE VIEW {p}_v AS SELECT * FROM {p}_n;\n"
        f"ALTER TABLE {p}_old ADD COLUMN extra INTEGER;\n"
        f"DELETE FROM {p}_old;\n"
        f"DROP TABLE {p}_old;\n"
        f"SELECT * FROM {p}_n TO TRAIN xgboost.gbtree LABEL b INTO {p}_m;\n"
        f"SELECT * FROM {p}_n TO PREDICT {p}_pred.b USING {p}_m;\n"
    )
    before = catalog(url, p)
    ds = connect(url)
    try:
        assert errors_of(check_program(program, ds.dialect, ds)) == []
        # The connection goes on as it was (the web page's editor runs the program on it).
        with pytest.raises(Exception, match=f"{p}_n"):
            ds.execute(f"SELECT * FROM {ds.quote([f'{p}_n'])}")
    finally:
        ds.close()
    assert catalog(url, p) == before
    assert fetch_rows(url, f"SELECT a FROM {old} ORDER BY a") == [(1,), (2,)]


def test_files_are_checked_in_order_each_as_those_before_leave_the_database(url, p, tmp_path):
    """As ``sqlml run A B`` runs them: B reads what A creates and uses the model A trains."""
    first, second = tmp_path / "a" / "load.sql", tmp_path / "b" / "use.sql"
    first.parent.mkdir()
    second.parent.mkdir()
    first.write_text(
        f"CREATE TABLE {p}_rows AS SELECT 1.5 AS x, 'a' AS y;\n"
        f"SELECT x, y FROM {p}_rows TO TRAIN xgboost.gbtree LABEL y INTO {p}_m;\n"
    )
    second.write_text(f"SELECT x FROM {p}_rows TO PREDICT {p}_pred.y USING {p}_m;\n")
    assert main(["check", str(first), str(second), "--datasource", url]) == 0
    assert main(["check", str(second), "--datasource", url]) == 1


@pytest.mark.parametrize("kind", ["postgresql"])
def test_a_lock_another_session_holds_is_waited_for_a_moment_only(kind, tmp_path, unique_name):
    """The replay's ALTER gives up (PostgreSQL's lock_timeout): the table is then unknown,
    and the check goes on, reporting nothing false."""
    url = datasource_url(kind, tmp_path)
    holder = connect(url)
    table = f"{unique_name}_locked"
    holder.execute(f"CREATE TABLE {table} (a INTEGER)")
    try:
        with holder.transaction():
            holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            program = (
                f"ALTER TABLE {table} ADD COLUMN z INTEGER;\n"
                f"SELECT a, z FROM {table} TO TRAIN xgboost.gbtree LABEL z INTO {unique_name}_m;\n"
            )
            assert checked(url, program) == []
    finally:
        holder.execute(f"DROP TABLE {table}")
        holder.close()
