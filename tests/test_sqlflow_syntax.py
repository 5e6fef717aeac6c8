"""SQLFlow's syntax that sqlml reads (issue 15, item 6): backslash-escaped quotes, model zoo
images in TO TRAIN and USING, kept in the IR, the step's image on Argo, noted locally."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from sqlml.backends.argo.codegen import to_argo_yaml
from sqlml.backends.interface import Program
from sqlml.backends.local.backend import _note_images
from sqlml.checking import check_program
from sqlml.errors import CheckError, ParseError
from sqlml.grammar import parse
from sqlml.grammar.recovery import statement_ends
from sqlml.semantics import analyze

TRAIN = "SELECT * FROM t\nTO TRAIN {estimator}\nWITH model.n_classes = 3\nLABEL c\n{using}INTO m;"


def train(estimator: str = "DNNClassifier", using: str = "") -> str:
    return TRAIN.format(estimator=estimator, using=f"USING {using}\n" if using else "")


def test_an_escaped_double_quote_stays_inside_a_double_quoted_value():
    text = (
        "SELECT * FROM t TO TRAIN DNNClassifier WITH model.n_classes = 3, validation.select = "
        '"SELECT concat(a, \\",\\", b) AS c FROM v" LABEL c INTO m;'
    )
    (statement,) = parse(text).statements
    assert statement.attributes[1].value == 'SELECT concat(a, ",", b) AS c FROM v'


def test_an_escaped_single_quote_stays_inside_a_single_quoted_value():
    text = "SELECT * FROM t TO TRAIN DNNClassifier WITH a = 'it\\'s' LABEL c INTO m;"
    (statement,) = parse(text).statements
    assert statement.attributes[0].value == "it's"


def test_a_value_of_one_escaped_quote_ends_where_it_should():
    text = 'SELECT * FROM t TO EXPLAIN m WITH a = "\\"", b = 1'
    (statement,) = parse(text + "; SELECT 1;").statements[:1]
    assert [a.value for a in statement.attributes] == ['"', 1]
    assert statement.text == text


def test_a_quoted_name_keeps_sql_rules_for_backslashes():
    (statement,) = parse('SELECT * FROM t TO TRAIN DNNClassifier LABEL c INTO "a\\";').statements
    assert statement.into.parts == ("a\\",)


def test_a_value_may_be_in_parentheses():
    text = "SELECT * FROM t TO EXPLAIN m WITH a = (0.5), b = (('x')), c = -1"
    (statement,) = parse(text + ";").statements
    assert [a.value for a in statement.attributes] == [0.5, "x", -1]
    assert statement.text == text  # the closing parenthesis ends the statement


def test_other_backslashes_in_a_double_quoted_value_are_kept():
    (statement,) = parse(
        'SELECT 1 TO TRAIN DNNClassifier WITH a = "x\\\\y\\n" LABEL c INTO m;'
    ).statements
    assert statement.attributes[0].value == "x\\\\y\\n"


def test_a_model_zoo_image_before_the_estimator_is_kept_apart():
    (statement,) = parse(train("registry:5000/sqlflow/models:v1/xgboost.gbtree")).statements
    assert statement.image == "registry:5000/sqlflow/models:v1"
    assert statement.estimator.parts == ("xgboost", "gbtree")
    assert (statement.estimator.pos.line, statement.estimator.pos.column) == (2, 42)


def test_a_comment_right_after_the_estimator_is_still_a_comment():
    (statement,) = parse(train("DNNClassifier/* the canned one */")).statements
    assert statement.image is None and str(statement.estimator) == "DNNClassifier"


def test_using_a_model_zoo_model_is_its_image_not_a_stored_model():
    (statement,) = parse(train(using="models.sqlflow.org/an_analyst/my_first_model")).statements
    assert statement.using is None
    assert statement.base_image == "models.sqlflow.org/an_analyst/my_first_model"


def test_the_image_is_in_the_ir_and_absent_from_the_json_of_statements_without_one():
    with_image, without = analyze(
        parse(train("sqlflow/sqlflow:latest/DNNClassifier", "registry:5000/model:v1") + train()),
        "duckdb",
    )
    assert (with_image.image, with_image.base_image) == (
        "sqlflow/sqlflow:latest",
        "registry:5000/model:v1",
    )
    assert with_image.estimator == "DNNClassifier" and with_image.base_model is None
    data = json.loads(with_image.to_json())
    assert (data["image"], data["base_image"]) == (
        "sqlflow/sqlflow:latest",
        "registry:5000/model:v1",
    )
    assert "image" not in json.loads(without.to_json())
    assert "base_image" not in without.to_dict()


def test_an_unknown_estimator_after_an_image_is_reported_at_the_estimator():
    with pytest.raises(CheckError) as caught:
        analyze(parse(train("sqlflow/sqlflow:latest/NoSuchEstimator")), "duckdb")
    assert (caught.value.line, caught.value.column) == (2, 33)
    assert caught.value.message == "unknown estimator NoSuchEstimator"


def test_explain_does_not_take_a_model_zoo_name():
    with pytest.raises(ParseError) as caught:
        parse("SELECT * FROM t TO EXPLAIN m USING a/b;")
    assert (caught.value.line, caught.value.column) == (1, 37)


def test_the_image_is_the_step_image_on_argo():
    statements = analyze(
        parse(
            train("sqlflow/sqlflow:latest/DNNClassifier")
            + "SELECT * FROM t TO PREDICT p.c USING n;"
        ),
        "duckdb",
    )
    text = to_argo_yaml(statements, "zoo")
    assert "image: sqlflow/sqlflow:latest" in text
    assert "template: predict\n" in text  # the other statements keep the shared template
    assert text.count("image: docker.io/library/sqlml:") == 1


def test_a_local_run_notes_the_images_it_ignores_in_one_line_each(capsys):
    statements = analyze(
        parse(train("sqlflow/sqlflow:latest/DNNClassifier", "registry:5000/model:v1")), "duckdb"
    )
    _note_images(Program(statements, "zoo", "zoo.sql", "duckdb", Path(".")))
    assert capsys.readouterr().err.splitlines() == [
        "zoo.sql:1:1: note: the model zoo image sqlflow/sqlflow:latest is ignored in a "
        "local run, which trains sqlml's DNNClassifier",
        "zoo.sql:1:1: note: USING registry:5000/model:v1: a local run does not fetch a "
        "model zoo's model and trains anew",
    ]


def test_a_prediction_of_a_model_trained_from_an_image_runs_in_that_image_on_argo():
    program = (
        train("sqlflow/sqlflow:latest/DNNClassifier")
        + "SELECT * FROM t TO PREDICT p.c USING m;"
        + train()
        + "SELECT * FROM t TO PREDICT q.c USING m;"
    )
    text = to_argo_yaml(analyze(parse(program), "duckdb"), "zoo")
    tasks = re.findall(r"name: (s\d-\S+)\n\s+template: (\S+)", text)
    image = "image-" + hashlib.sha256(b"sqlflow/sqlflow:latest").hexdigest()[:10]
    assert tasks == [
        ("s1-train-m", f"train-{image}"),
        ("s2-predict-p-c", f"predict-{image}"),
        ("s3-train-m", "train"),  # trained anew without an image: its predictions neither
        ("s4-predict-q-c", "predict"),
    ]


# A double-quoted argument of a feature column: SQLFlow's lexer reads "\"" as a string holding a
# quote; read as a quoted name it would end at the second quote and leave the third open.
DELIMITED = (
    "SELECT c3, c4, class FROM t\n"
    "TO TRAIN DNNClassifier\n"
    "WITH model.n_classes = 2\n"
    "COLUMN {column}\n"
    "LABEL class\n"
    "INTO m;\n"
)


def _features(text: str) -> list[dict]:
    (statement,) = analyze(parse(text), "duckdb")
    return statement.to_dict()["features"]


@pytest.mark.parametrize(
    ("column", "delimiter"),
    [
        ('CATEGORY_ID(c4, 16, "\\"")', '"'),  # syntax.sql's case, as SQLFlow's lexer test has it
        ('CATEGORY_ID(c4, 16, "\\"" )', '"'),
        ('CATEGORY_ID(c4, 16, "a\\"")', 'a"'),  # the escaped quote last before the closing one
        ('CATEGORY_ID(c4, 16, "\\"\\"")', '""'),
        ('DENSE(c3, 4, "\\"", float)', '"'),  # followed by another argument
        ('CATEGORY_ID(c4, 16, /* a \' and a " */ "\\"")', '"'),
    ],
)
def test_a_double_quoted_delimiter_reads_backslash_escapes_as_sqlflow_does(column, delimiter):
    (feature,) = _features(DELIMITED.format(column=column))
    assert feature["params"]["delimiter"] == delimiter


@pytest.mark.parametrize(
    ("argument", "read"),
    [
        ('"\\"', ("\\",)),  # a quoted name in SQL's quoting: the backslash is its character
        ('"a""b"', ('a"b',)),
        ('"x"', ("x",)),
    ],
)
def test_a_double_quoted_argument_that_is_a_quoted_name_in_sql_stays_one(argument, read):
    (statement,) = parse(f"SELECT * FROM t TO TRAIN D COLUMN F({argument}, 1) INTO m;").statements
    (call,) = statement.columns[0].columns
    assert call.args[0].parts == read


def test_the_statement_after_an_escaped_quote_in_a_feature_column_checks_in_its_own_place():
    text = DELIMITED.format(column='CATEGORY_ID(c4, 16, "\\"")') + (
        "SELECT \"a\"\"b\", 'it''s' FROM t\nTO PREDICT results.out\nUSING m;\n"
        "SELECT 1 FROM t\nTO TRAIN DNNClassifier\nLABEL class INTO;\n"
        'SELECT "x" FROM t;\n'
        "SELECT 2 TO PREDICT;\n"
    )
    errors = check_program(text, "duckdb")
    assert [(e.line, e.column) for e in errors] == [(12, 17), (14, 20)]
    assert errors[0].message.startswith("unexpected ';'")
    ends, unclosed = statement_ends(text)
    assert [text[: end + 1].count("\n") + 1 for end in ends] == [6, 9, 12, 13, 14]
    assert not unclosed


def test_an_unclosed_double_quoted_argument_is_reported_at_its_quote():
    text = DELIMITED.format(column='CATEGORY_ID(c4, 16, ")') + "SELECT 1;\n"
    with pytest.raises(ParseError) as caught:
        parse(text)
    assert (caught.value.line, caught.value.column) == (4, 28)
    assert "never closed" in caught.value.message
    errors = check_program(text, "duckdb")
    assert [(e.line, e.column) for e in errors] == [(4, 28)]
    assert statement_ends(text) == ([], True)


def test_a_double_quoted_argument_running_over_statements_is_reported_at_its_quote():
    text = DELIMITED.format(column='CATEGORY_ID(c4, 16, "|)') + 'SELECT "a" FROM t;\n'
    with pytest.raises(ParseError) as caught:
        parse(text)
    assert (caught.value.line, caught.value.column) == (4, 28)
    assert 'closing " missing' in caught.value.message


@pytest.mark.parametrize(
    ("text", "complete"),
    [
        ('SELECT 1 TO TRAIN D COLUMN F(c, "\\"") INTO m;', True),
        ('SELECT 1 TO TRAIN D COLUMN F(c, "\\";") INTO m', False),
        ('SELECT 1 TO TRAIN D WITH a = "\\";" INTO m;', True),
        ('SELECT "\\";', True),  # SQL's quoting before TO: the backslash is a character
        ('ALTER TABLE t RENAME TO train; SELECT "\\";', True),
        ('SELECT 1 TO TRAIN D INTO "a\\";', True),  # a quoted name, SQL's quoting
    ],
)
def test_statements_end_where_the_parser_ends_them(text, complete):
    ends, unclosed = statement_ends(text)
    assert (bool(ends) and not unclosed and text.rstrip().endswith(";")) is complete
    if complete:
        assert len(parse(text).statements) == len(ends)
