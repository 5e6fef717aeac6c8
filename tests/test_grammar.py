"""The grammar, as a table of programs and what they parse to (or where they fail)."""

from __future__ import annotations

import pytest

from sqlml.errors import ParseError
from sqlml.grammar import ast, parse
from sqlml.statements.train.syntax import TrainNode


def kinds(text: str) -> list[str]:
    return [type(s).__name__ for s in parse(text).statements]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SELECT 1;", ["SqlNode"]),
        ("SELECT 1", ["SqlNode"]),
        ("", []),
        (";;", []),
        ("SELECT 1; SELECT 2;", ["SqlNode", "SqlNode"]),
        ("SELECT ';' AS semi;", ["SqlNode"]),
        ("SELECT 'a TO TRAIN b' AS s;", ["SqlNode"]),
        ('SELECT 1 AS "TO TRAIN x";', ["SqlNode"]),
        ("SELECT 1 AS `a;b`;", ["SqlNode"]),
        ("SELECT 1 -- TO TRAIN x; not a statement\n;", ["SqlNode"]),
        ("SELECT /* ; TO PREDICT */ 1;", ["SqlNode"]),
        ("SELECT 'it''s; fine';", ["SqlNode"]),
        ("SELECT 'it\\'s; fine';", ["SqlNode"]),
        ("SELECT x FROM t WHERE x SIMILAR TO 'a';", ["SqlNode"]),
        ("ALTER TABLE a RENAME TO b;", ["SqlNode"]),
        ("SELECT * FROM t TO TRAIN m LABEL y INTO n;", ["TrainNode"]),
        ("select * from t to train m label y into n;", ["TrainNode"]),
        ("SELECT * FROM t TO PREDICT p.y USING m;", ["PredictNode"]),
        (
            "SELECT 1; SELECT * FROM t TO PREDICT p.y USING m; SELECT 2",
            ["SqlNode", "PredictNode", "SqlNode"],
        ),
    ],
)
def test_statement_kinds(text, expected):
    assert kinds(text) == expected


def test_train_statement_fields():
    text = (
        "-- leading comment\n"
        "SELECT * FROM iris.train WHERE c <> 'x;y'\n"
        "TO TRAIN DNNClassifier\n"
        "WITH model.n_classes = 3, model.hidden_units = [10, 20], train.epoch = 10,\n"
        '     objective = "multi:softprob", opt = Adam, flag = TRUE, rate = -1.5e-3\n'
        "COLUMN sepal_length, `sepal width`, NUMERIC(petal_length, 3)\n"
        'LABEL "class"\n'
        "INTO sqlflow_models.my_dnn;"
    )
    (train,) = parse(text).statements
    assert isinstance(train, TrainNode)
    assert train.select == "SELECT * FROM iris.train WHERE c <> 'x;y'"
    assert train.text == text[text.index("SELECT") : -1]
    assert train.pos == ast.Position(2, 1, text.index("SELECT"))
    assert str(train.estimator) == "DNNClassifier"
    assert {a.name: a.value for a in train.attributes} == {
        "model.n_classes": 3,
        "model.hidden_units": (10, 20),
        "train.epoch": 10,
        "objective": "multi:softprob",
        "opt": "Adam",
        "flag": True,
        "rate": -1.5e-3,
    }
    assert train.attributes[4].pos.line == 5
    (clause,) = train.columns
    assert [str(c) for c in clause.columns[:2]] == ["sepal_length", "sepal width"]
    call = clause.columns[2]
    assert isinstance(call, ast.Call) and call.function == "NUMERIC"
    assert str(call.args[0]) == "petal_length" and call.args[1] == 3
    assert train.label.parts == ("class",)
    assert train.into.parts == ("sqlflow_models", "my_dnn")


def test_nested_column_expressions_and_for():
    text = (
        "SELECT * FROM t TO TRAIN WideAndDeep "
        "COLUMN CROSS([EMBEDDING(CATEGORY_ID(a, 100), 8), BUCKET(b, [1, 10])], 64) FOR deep "
        "COLUMN c FOR wide LABEL y INTO m;"
    )
    (train,) = parse(text).statements
    deep, wide = train.columns
    cross = deep.columns[0]
    assert cross.function == "CROSS" and cross.args[1] == 64
    embedding, bucket = cross.args[0]
    assert embedding.function == "EMBEDDING" and embedding.args[0].function == "CATEGORY_ID"
    assert bucket.args[1] == (1, 10)
    assert str(deep.target) == "deep" and str(wide.target) == "wide"


def test_predict_statement_fields():
    (predict,) = parse(
        "SELECT * FROM iris_test TO PREDICT db.iris_pred.class WITH predict.batch_size = 8 "
        "USING my_model;"
    ).statements
    assert predict.target.parts == ("db", "iris_pred", "class")
    assert predict.attributes[0].value == 8
    assert str(predict.using) == "my_model"


def test_keywords_are_names_where_a_name_is_expected():
    (train,) = parse("SELECT * FROM t TO TRAIN m LABEL label INTO into;").statements
    assert str(train.label) == "label" and str(train.into) == "into"


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("SELECT * FROM t TO TRAIN m LABEL y INTO;", 1, 40, "unexpected ';'"),
        ("SELECT 'abc", 1, 8, "string is never closed"),
        ('SELECT "abc', 1, 8, "quoted name is never closed"),
        ("SELECT 1 /* abc", 1, 10, "comment is never closed"),
        ("TO TRAIN m INTO n;", 1, 1, "'TO TRAIN' needs a SELECT"),
        ("SELECT 1;\n  to predict p.c using m;", 2, 3, "'to predict' needs a SELECT"),
        ("SELECT * FROM t TO TRAIN m WITH a = ; INTO n", 1, 37, "unexpected ';'"),
        ("SELECT * FROM t TO TRAIN m WITH a 1 INTO n;", 1, 35, "unexpected '1'"),
        ("SELECT * FROM t TO TRAIN m WITH = 1 INTO n;", 1, 33, "unexpected '='"),
        ("SELECT * FROM t TO TRAIN m WITH a = [1, 2 INTO n;", 1, 43, "unexpected 'INTO'"),
        ("SELECT * FROM t TO TRAIN m LABEL a b INTO n;", 1, 36, "unexpected 'b'"),
        ("SELECT * FROM t TO TRAIN m COLUMN INTO n;", 1, 35, "unexpected INTO"),
        ("SELECT * FROM t TO TRAIN m COLUMN f( LABEL y INTO n;", 1, 38, "unexpected LABEL"),
        ("SELECT * FROM t\nTO PREDICT p.c USING", 2, 21, "ends too early"),
        ("SELECT * FROM t TO PREDICT p.c INTO m;", 1, 32, "unexpected 'INTO'"),
        ("SELECT * FROM t TO TRAIN m LABEL y INTO n m2;", 1, 43, "unexpected 'm2'"),
        ("SELECT * FROM t TO TRAIN LABEL y INTO n;", 1, 26, "unexpected LABEL"),
        ("SELECT 1;\n\nSELECT * FROM t TO TRAIN m\n  WITH x = 'a\n", 4, 12, "never closed"),
    ],
)
def test_malformed_programs_report_line_and_column(text, line, column, words):
    with pytest.raises(ParseError) as caught:
        parse(text)
    error = caught.value
    assert (error.line, error.column) == (line, column), error.render()
    assert words in error.message


def test_error_names_what_was_expected():
    with pytest.raises(ParseError) as caught:
        parse("SELECT * FROM t TO TRAIN m LABEL y;")
    assert "INTO" in caught.value.message
    assert caught.value.hint == "a TO TRAIN statement ends with INTO <model name>"
