"""Checking statements: estimators, attribute schemas, lowering to IR."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sqlml import ir
from sqlml.errors import CheckError
from sqlml.grammar import parse
from sqlml.semantics import analyze
from sqlml.semantics.reference import attributes_markdown

ROOT = Path(__file__).resolve().parent.parent


def check(text: str) -> list[ir.Statement]:
    return analyze(parse(text))


def train_with(attributes: str, estimator: str = "DNNClassifier") -> ir.TrainStatement:
    (statement,) = check(f"SELECT * FROM t TO TRAIN {estimator} WITH {attributes} LABEL y INTO m;")
    assert isinstance(statement, ir.TrainStatement)
    return statement


def test_defaults_are_filled_and_values_converted():
    attributes = train_with("model.hidden_units = [8], optimizer.learning_rate = 1").attributes
    assert attributes["model.hidden_units"] == [8]
    assert attributes["optimizer.learning_rate"] == 1.0
    assert attributes["train.epoch"] == 10
    assert "model.n_classes" not in attributes  # no default: inferred from the label


def test_estimator_names_are_case_insensitive_and_fix_the_booster():
    statement = train_with("eta = 0.1", estimator="XGBOOST.DART")
    assert statement.estimator == "xgboost.dart"
    assert statement.family == "xgboost"
    assert statement.attributes["booster"] == "dart"


@pytest.mark.parametrize(
    ("attributes", "estimator", "offset", "message", "hint"),
    [
        ("model.hiden_units = [3]", "DNNClassifier", 1,
         "DNNClassifier has no attribute model.hiden_units", "did you mean model.hidden_units?"),
        ("train.epochs = 3", "DNNClassifier", 1,
         "DNNClassifier has no attribute train.epochs", "did you mean train.epoch?"),
        ("max_dept = 3", "xgboost.gbtree", 1,
         "xgboost.gbtree has no attribute max_dept", "did you mean max_depth?"),
        ("train.epoch = 'ten'", "DNNClassifier", 1,
         "attribute train.epoch must be an integer (got 'ten')", "passes over the training data"),
        ("train.epoch = 0", "DNNClassifier", 1, "attribute train.epoch must be >= 1", None),
        ("model.hidden_units = 10", "DNNClassifier", 1,
         "attribute model.hidden_units must be a list of integers", None),
        ("model.hidden_units = [10, 0]", "DNNClassifier", 1,
         "attribute model.hidden_units must be >= 1", None),
        ("subsample = 0", "xgboost.gbtree", 1, "attribute subsample must be > 0", None),
        ("eta = 1.5", "xgboost.gbtree", 1, "attribute eta must be <= 1", None),
        ("objective = 'multi:softmaxx'", "xgboost.gbtree", 1,
         "attribute objective must be one of", None),
        ("model.activation = relu, model.activation = tanh", "DNNClassifier", 26,
         "attribute model.activation is given twice", None),
        ("one_drop = 2", "xgboost.dart", 1, "attribute one_drop must be TRUE or FALSE", None),
    ],
)  # fmt: skip
def test_attribute_errors_point_at_the_attribute(attributes, estimator, offset, message, hint):
    """``offset``: where the faulty attribute starts in ``attributes`` (1-based)."""
    with pytest.raises(CheckError) as caught:
        train_with(attributes, estimator)
    error = caught.value
    start = len(f"SELECT * FROM t TO TRAIN {estimator} WITH ")
    assert (error.line, error.column) == (1, start + offset)
    assert error.message.startswith(message)
    if hint:
        assert error.hint == hint


def test_a_boolean_attribute_takes_1_and_0_as_xgboost_does():
    # Issue 15: SQLFlow passes XGBoost's ints (one_drop = 0); other numbers stay refused above.
    assert train_with("one_drop = 0", "xgboost.dart").attributes["one_drop"] is False
    assert train_with("one_drop = 1", "xgboost.dart").attributes["one_drop"] is True
    with pytest.raises(CheckError, match="one_drop must be TRUE or FALSE"):
        train_with("one_drop = 1.0", "xgboost.dart")


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("SELECT * FROM t TO TRAIN DNNClasifier LABEL y INTO m;", 26,
         "unknown estimator DNNClasifier"),
        ("SELECT * FROM t TO TRAIN DNNClassifier INTO m;", 45,
         "TO TRAIN DNNClassifier needs a LABEL"),
        ("SELECT * FROM t TO TRAIN DNNClassifier LABEL a.b INTO m;", 46,
         "LABEL column takes a column name, not a.b"),
        ("SELECT * FROM t TO TRAIN DNNClassifier COLUMN a, a LABEL y INTO m;", 50,
         "column a is listed twice"),
        ("SELECT * FROM t TO PREDICT r.c WITH predict.batch = 1 USING m;", 37,
         "TO PREDICT has no attribute predict.batch"),
        ("SELECT * FROM t TO EVALUATE m WITH validation.metrics = 'acc' LABEL y INTO e;", 36,
         "unknown metric acc"),
        ("SELECT * FROM t TO EXPLAIN m USING ShapExplainer;", 36,
         "unknown explainer ShapExplainer"),
    ],
)  # fmt: skip
def test_statement_errors(text, column, message):
    with pytest.raises(CheckError) as caught:
        check(text)
    assert (caught.value.line, caught.value.column) == (1, column)
    assert caught.value.message.startswith(message)


def test_step_ids_are_stable_and_unique():
    statements = check(
        "CREATE TABLE a (x INT);\n"
        "SELECT * FROM a TO TRAIN xgboost.gbtree LABEL x INTO my.Model;\n"
        "SELECT * FROM a TO PREDICT out.x USING my.Model;\n"
        "SHOW MODELS; DROP MODEL IF EXISTS my.Model;"
    )
    assert [s.id for s in statements] == [
        "s1-create",
        "s2-train-my-model",
        "s3-predict-out-x",
        "s4-show-models",
        "s5-drop-model",
    ]


def test_ir_round_trips_through_json():
    for statement in check(
        "SELECT * FROM t TO TRAIN DNNClassifier WITH model.hidden_units = [4] LABEL y INTO m;"
        "SELECT * FROM t TO PREDICT p.y USING m; SELECT * FROM t TO EXPLAIN m INTO x;"
        "SELECT * FROM t TO EVALUATE m LABEL y INTO e; DESCRIBE MODEL m; SELECT 1;"
    ):
        assert ir.from_dict(statement.to_dict()) == statement


def test_attribute_reference_is_up_to_date():
    documented = (ROOT / "docs" / "attributes.md").read_text()
    assert documented == attributes_markdown(), (
        "regenerate it: python -m sqlml.semantics.reference > docs/attributes.md"
    )


SEARCH = "xgboost.gbtree WITH max_depth = CHOICE(2, 3)"


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("SELECT x FROM t1 TO PREDICT sqlml_model_versions.y USING m1;", 29,
         "TO PREDICT would write sqlml_model_versions, one of the tables sqlml keeps"),
        ("SELECT x FROM t1 TO PREDICT Main.SQLML_Model_Chunks.y USING m1;", 29,
         "TO PREDICT would write Main.SQLML_Model_Chunks, one of the tables"),
        ('SELECT x FROM t1 TO EVALUATE m LABEL y INTO "sqlml_runs";', 45,
         "TO EVALUATE would write sqlml_runs, one of the tables"),
        ("SELECT x FROM t1 TO EXPLAIN m INTO db.sqlml_run_steps;", 36,
         "TO EXPLAIN would write db.sqlml_run_steps, one of the tables"),
        ("SELECT x FROM t1 TO PREDICT p__sqlml_new_1.y USING m1;", 29,
         "TO PREDICT would write p__sqlml_new_1, a name sqlml keeps for its staging tables"),
        (f"SELECT * FROM t TO TRAIN {SEARCH}, search.trials_table = 'SQLML_RUNS' LABEL y INTO m;",
         72, "the hyperparameter search would write SQLML_RUNS, one of the tables"),
        (f"SELECT * FROM t TO TRAIN {SEARCH} LABEL y INTO x__SQLML_y;", 84,
         "the hyperparameter search would write x__SQLML_y_trials, a name sqlml keeps"),
    ],
)  # fmt: skip
def test_outputs_into_sqlmls_own_tables_are_refused(text, column, message):
    # output.replace does not help: sqlml never writes its own tables.
    replace = text.replace(" USING", " WITH output.replace = true USING", 1)
    for program in (text, replace) if "PREDICT" in text else (text,):
        with pytest.raises(CheckError) as caught:
            check(program)
        assert (caught.value.line, caught.value.column) == (1, column)
        assert caught.value.message.startswith(message), caught.value.message
        assert caught.value.hint


def test_output_replace_is_false_unless_given_and_round_trips():
    given = " WITH output.replace = TRUE"
    statements = check(
        "SELECT * FROM t TO PREDICT p.y USING m;"
        f"SELECT * FROM t TO PREDICT p.y{given} USING m;"
        "SELECT * FROM t TO EVALUATE m LABEL y INTO e;"
        f"SELECT * FROM t TO EVALUATE m{given} LABEL y INTO e;"
        "SELECT * FROM t TO EXPLAIN m INTO x;"
        f"SELECT * FROM t TO EXPLAIN m{given} INTO x;"
        "SELECT * FROM t TO EXPLAIN m;"
        f"SELECT * FROM t TO TRAIN {SEARCH} LABEL y INTO m;"
        f"SELECT * FROM t TO TRAIN {SEARCH}, output.replace = true LABEL y INTO m;"
    )
    assert [s.attributes["output.replace"] for s in statements[:7]] == [False, True] * 3 + [False]
    searches = statements[7:]
    assert all(isinstance(s, ir.SearchStatement) for s in searches)
    assert [s.search["replace_table"] for s in searches] == [False, True]
    assert all("output.replace" not in s.attributes for s in searches)
    for statement in statements:
        assert ir.from_dict(json.loads(statement.to_json())) == statement


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        ("SELECT * FROM t TO TRAIN xgboost.gbtree WITH output.replace = true LABEL y INTO m;", 46,
         "TO TRAIN writes no table: output.replace is for the trials table"),
        ("SELECT * FROM t TO EXPLAIN m WITH output.replace = true;", 35,
         "TO EXPLAIN without INTO writes no table"),
        ("SELECT * FROM t TO PREDICT p.y WITH output.replace = 1 USING m;", 37,
         "attribute output.replace must be TRUE or FALSE"),
    ],
)  # fmt: skip
def test_output_replace_where_no_table_is_replaced(text, column, message):
    with pytest.raises(CheckError) as caught:
        check(text)
    assert (caught.value.line, caught.value.column) == (1, column)
    assert caught.value.message.startswith(message), caught.value.message


@pytest.mark.parametrize(
    ("text", "column", "table"),
    [
        ("SELECT * FROM t TO PREDICT t.y USING m;", 28, "t"),
        ("SELECT * FROM main.T TO PREDICT t.y USING m;", 33, "t"),
        ("SELECT a.x FROM s AS a JOIN db.Out AS o ON a.x = o.x TO PREDICT out.y USING m;",
         65, "out"),
        ("SELECT * FROM t WHERE x IN (SELECT x FROM e) TO EVALUATE m LABEL y INTO e;", 73, "e"),
        ("WITH w AS (SELECT * FROM x) SELECT * FROM w TO EXPLAIN m INTO X;", 63, "X"),
        (f"SELECT * FROM m_trials TO TRAIN {SEARCH} LABEL y INTO m;", 91, "m_trials"),
        (f"SELECT * FROM t TO TRAIN {SEARCH}, validation.select = 'SELECT * FROM tt', "
         "search.trials_table = TT LABEL y INTO m;", 112, "TT"),
    ],
)  # fmt: skip
def test_a_statement_may_replace_the_table_it_reads_only_with_output_replace(text, column, table):
    with pytest.raises(CheckError) as caught:
        check(text)
    assert (caught.value.line, caught.value.column) == (1, column)
    assert caught.value.message.endswith(
        f"would write {table}, a table the statement reads: the output would replace the rows "
        "it reads"
    ), caught.value.message
    assert caught.value.hint == (
        f"write to another table, or add WITH output.replace = true to replace {table}"
    )
    if "TO TRAIN" in text:
        replaced = text.replace(" LABEL", ", output.replace = true LABEL")
    else:
        replaced = re.sub(r" (USING|LABEL|INTO)", r" WITH output.replace = true \1", text, count=1)
    check(replaced)  # the user asked for it


def test_a_common_table_expression_named_like_the_output_is_not_the_output():
    check("WITH p AS (SELECT * FROM t) SELECT * FROM p TO PREDICT p.y USING m;")


@pytest.mark.parametrize("dialect", ["duckdb", "postgres"])
@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d", "a DELETE"),
        ("WITH d AS (UPDATE t SET y = 1 RETURNING *) SELECT * FROM d", "an UPDATE"),
        ("WITH d AS (INSERT INTO t VALUES (1, 2) RETURNING *) SELECT * FROM d", "an INSERT"),
        ("SELECT * INTO copy FROM t", "a SELECT ... INTO"),
    ],
)
def test_the_queries_of_extended_statements_may_not_change_data(query, word, dialect):
    with pytest.raises(CheckError) as caught:
        analyze(parse(f"SELECT 1;\n  {query} TO PREDICT p.y USING m;"), dialect)
    assert (caught.value.line, caught.value.column) == (2, 3)
    assert (
        caught.value.message
        == f"the SELECT before TO PREDICT may only read data, but it holds {word}"
    )
    validation = f'SELECT * FROM t TO TRAIN xgboost.gbtree WITH validation.select = "{query}" '
    with pytest.raises(CheckError) as caught:
        analyze(parse(validation + "LABEL y INTO m;"), dialect)
    assert (caught.value.line, caught.value.column) == (1, 67)
    assert caught.value.message == f"this query may only read data, but it holds {word}"
    if not query.startswith("SELECT * INTO"):
        analyze(parse(f"{query};"), dialect)  # a plain query goes to the database as written
