"""Checking statements: estimators, attribute schemas, lowering to IR."""

from __future__ import annotations

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
        ("one_drop = 1", "xgboost.dart", 1, "attribute one_drop must be TRUE or FALSE", None),
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
        ("SELECT * FROM t TO PREDICT result USING m;", 28,
         "TO PREDICT needs <table>.<result column>"),
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
