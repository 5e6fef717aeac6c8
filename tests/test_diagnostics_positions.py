"""Where sqlml check reports what it finds (issue 15, item 7): errors that need the database at
the name they are about; sqlglot's internals out of messages; a misspelled statement keyword;
hints for a section's word read as a name."""

from __future__ import annotations

import duckdb
import pytest

from sqlml.checking import check_program
from sqlml.datasources import connect


@pytest.fixture
def datasource(tmp_path):
    path = tmp_path / "d.duckdb"
    with duckdb.connect(str(path)) as connection:
        connection.execute("CREATE TABLE t (a FLOAT, b FLOAT, c INTEGER)")
        connection.execute("CREATE TABLE v (a FLOAT)")
    source = connect(f"duckdb:///{path}")
    yield source
    source.close()


def found(text: str, dialect: str = "duckdb", source=None) -> list[tuple[int, int, str]]:
    return [(e.line, e.column, e.message) for e in check_program(text, dialect, source)]


def test_a_label_not_selected_is_reported_at_the_label(datasource):
    text = "SELECT a, b FROM t\nTO TRAIN DNNClassifier\nLABEL c\nINTO m;"
    assert found(text, source=datasource) == [(3, 7, "column c is not in the result of the SELECT")]


def test_an_unknown_feature_column_is_reported_at_its_name(datasource):
    text = "SELECT * FROM t\nTO TRAIN DNNClassifier\nCOLUMN a, NUMERIC(zz, 1)\nLABEL c\nINTO m;"
    assert found(text, source=datasource) == [
        (3, 19, "feature column zz is not in the result of the SELECT")
    ]


def test_an_unknown_model_is_reported_at_its_name(datasource):
    text = "SELECT * FROM t\nTO PREDICT p.c\n  USING nowhere.model;"
    ((line, column, message),) = found(text, source=datasource)
    assert (line, column) == (3, 9)
    assert message.startswith("model nowhere.model does not exist in duckdb:///")


def test_a_validation_select_the_database_refuses_is_reported_at_the_attribute(datasource):
    text = (
        "SELECT * FROM t TO TRAIN DNNClassifier\n"
        "WITH model.n_classes = 2,\n   validation.select = 'SELECT zz FROM v'\nLABEL c INTO m;"
    )
    ((line, column, message),) = found(text, source=datasource)
    assert (line, column) == (3, 4) and 'column "zz" not found' in message


def test_a_statement_before_an_extended_clause_must_be_a_query():
    assert found("   DROP TABLE TO PREDICT t.c USING m;") == [
        (1, 4, "the SELECT before TO PREDICT must be a single SELECT, not DROP")
    ]


def test_syntax_errors_hold_no_sqlglot_internals():
    ((line, column, message),) = found("SELECT * FROM (;")
    assert (line, column) == (1, 15)
    assert message == (
        "SQL syntax error near '(': Expected table name but got the end of the statement"
    )


@pytest.mark.parametrize("dialect", ["duckdb", "mysql", "postgres"])
def test_a_misspelled_statement_keyword_is_caught(dialect):
    errors = check_program("SELECT 1;\n  selec 1;", dialect)
    assert [(e.line, e.column, e.message, e.hint) for e in errors] == [
        (2, 3, "unknown statement keyword selec", "did you mean SELECT?")
    ]


@pytest.mark.parametrize("dialect", ["duckdb", "mysql", "postgres"])
@pytest.mark.parametrize(
    "statement",
    [
        "LOAD DATA INFILE 'x.csv' INTO TABLE t",
        "VACUUM",
        "PRAGMA table_info('t')",
        "CALL f()",
        "INSTALL httpfs",
        "DETACH db",
        "SHOW TABLES",
        "EXPLAIN SELECT 1",
        "FROM t",
        "flush tables",
        "UNLISTEN channel",
        "UNINSTALL PLUGIN x",
    ],
)
def test_statements_sqlglot_does_not_know_still_pass(dialect, statement):
    assert found(statement + ";", dialect) == []


def test_a_comma_before_label_gets_a_hint():
    text = "SELECT * FROM t TO TRAIN DNNClassifier\nWITH model.n_classes = 2,\nLABEL c\nINTO m;"
    (error,) = check_program(text, "duckdb")
    assert (error.line, error.column) == (3, 1)
    assert error.hint == "LABEL (line 3, column 1) was read as a name: remove the ',' before it"


def test_an_attribute_without_a_value_gets_a_hint():
    (error,) = check_program("SELECT 1 TO TRAIN DNNClassifier WITH a =\nLABEL c INTO m;", "duckdb")
    assert error.hint == (
        "LABEL (line 2, column 1) was read as the value of a: write the value after '='"
    )


def test_train_without_an_estimator_gets_a_hint():
    (error,) = check_program("SELECT 1 TO TRAIN WITH a = 1 LABEL c INTO m;", "duckdb")
    assert error.hint == (
        "WITH (line 1, column 19) was read as the estimator: write the estimator before it "
        '(a name that is the word WITH is written quoted: "WITH")'
    )


def test_show_train_after_a_select_is_reported_at_show():
    assert found("SELECT * FROM t\n  SHOW TRAIN m;") == [
        (2, 3, "SHOW TRAIN is a statement of its own")
    ]


def test_an_unclosed_quote_is_reported_at_the_quote_not_where_the_parser_stopped():
    text = (
        "SELECT * FROM t TO TRAIN DNNClassifier\n"
        'WITH validation.select = "SELECT * FROM v\n'
        'LABEL c INTO m;\nSELECT 1;\nSELECT "a" FROM t;\n'
    )
    (error,) = check_program(text, "duckdb")
    assert (error.line, error.column) == (2, 26)
    assert error.message == (
        "this quoted text runs over the end of a statement (a ';' and a line break): "
        'is its closing " missing?'
    )
    assert error.hint.startswith("close it where it ends; the parser stopped later, at line 5,")


def test_an_unclosed_string_in_sql_is_reported_at_its_quote():
    text = "SELECT 'abc FROM t;\nSELECT 1;\nSELECT 'x' FROM t;\n"
    assert [(e.line, e.column) for e in check_program(text, "duckdb")] == [(1, 8)]


def test_a_string_holding_a_statement_end_is_fine_when_nothing_fails():
    text = "SELECT 'a;\nb' AS x;\nSELECT 1;\n"
    assert check_program(text, "duckdb") == []
