"""SQLFlow's metric names (scikit-learn's and Keras's) in validation.metrics: their values
against hand computations, reported as written, checked at `sqlml check`; XGBoost's
eval_metric checked at its value."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pytest

from sqlml.checking import check_program
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.grammar import parse
from sqlml.metric_values import classifier_metrics, regressor_metrics
from sqlml.models.store import ModelStore
from sqlml.semantics import analyze

# A binary classifier's rows: truth and the probability of class 1 (predicted: p1 > 0.5).
TRUTH = np.array([0, 1, 1, 0, 1, 0])
P1 = np.array([0.2, 0.7, 0.4, 0.6, 0.9, 0.1])  # predicts 0, 1, 0, 1, 1, 0


def binary(names: list[str]) -> dict[str, float]:
    return classifier_metrics(TRUTH, np.column_stack([1 - P1, P1]), names)


def test_scikit_learn_classifier_names_are_computed_as_scikit_learn_does():
    metrics = binary(
        [
            "accuracy_score",
            "precision_score",
            "recall_score",
            "f1_score",
            "balanced_accuracy_score",
            "zero_one_loss",
            "hamming_loss",
            "brier_score_loss",
            "cohen_kappa_score",
            "hinge_loss",
            "roc_auc_score",
            "average_precision_score",
            "log_loss",
        ]
    )
    # class 1: predicted in rows 1, 3, 4 (right in 1 and 4), true in rows 1, 2, 4 (found 1, 4)
    precision, recall = 2 / 3, 2 / 3
    observed, expected = 4 / 6, 0.5 * 0.5 + 0.5 * 0.5  # both predict and hold half 1s
    assert metrics == pytest.approx(
        {
            "accuracy_score": 4 / 6,
            "precision_score": precision,
            "recall_score": recall,
            "f1_score": 2 * precision * recall / (precision + recall),
            "balanced_accuracy_score": (2 / 3 + 2 / 3) / 2,
            "zero_one_loss": 2 / 6,
            "hamming_loss": 2 / 6,
            "brier_score_loss": float(np.mean((P1 - TRUTH) ** 2)),
            "cohen_kappa_score": (observed - expected) / (1 - expected),
            "hinge_loss": float(np.mean(np.maximum(0, 1 - np.where(TRUTH, 1, -1) * (2 * P1 - 1)))),
            "roc_auc_score": 8 / 9,  # 8 of the 9 (positive, negative) pairs ordered right
            # by decreasing score, the positives come 1st, 2nd and 4th
            "average_precision_score": (1 / 1 + 2 / 2 + 3 / 4) / 3,
            "log_loss": -math.log(0.8 * 0.7 * 0.4 * 0.4 * 0.9 * 0.9) / 6,
        }
    )


def test_keras_classifier_names_are_reported_as_written():
    metrics = binary(
        [
            "TruePositives",
            "TrueNegatives",
            "FalsePositives",
            "FalseNegatives",
            "BinaryAccuracy",
            "CategoricalAccuracy",
            "TopKCategoricalAccuracy",
            "AUC",
        ]
    )
    assert metrics == pytest.approx(
        {
            "TruePositives": 2,
            "TrueNegatives": 2,
            "FalsePositives": 1,
            "FalseNegatives": 1,
            "BinaryAccuracy": 4 / 6,
            "CategoricalAccuracy": 4 / 6,
            "TopKCategoricalAccuracy": 1.0,  # k = 5 of 2 classes
            "auc": 8 / 9,  # AUC is sqlml's own name
        }
    )


def test_top_k_and_binary_accuracy_with_more_classes():
    truth = np.array([0, 1, 2, 2, 3, 4, 5])
    probabilities = np.full((7, 6), 0.1) + np.eye(6)[[0, 1, 1, 2, 5, 4, 0]] * 0.4
    probabilities[4, 3] = 0.0  # row 4's class is the least probable: outside the top 5
    metrics = classifier_metrics(
        truth, probabilities, ["TopKCategoricalAccuracy", "BinaryAccuracy", "TruePositives"]
    )
    onehot = np.eye(6)[truth]
    assert metrics == pytest.approx(
        {
            "TopKCategoricalAccuracy": 6 / 7,
            "BinaryAccuracy": float(np.mean((probabilities > 0.5) == (onehot == 1))),
        }
    )  # the binary counts are left out: three classes or more have no positive class


def test_regressor_names():
    truth = np.array([1.0, 2.0, 4.0, 8.0])
    predicted = np.array([1.5, 2.0, 3.0, 9.0])
    error = predicted - truth
    names = [
        "mean_absolute_error",
        "MeanSquaredError",
        "RootMeanSquaredError",
        "MeanAbsolutePercentageError",
        "r2_score",
        "explained_variance_score",
        "median_absolute_error",
        "mean_squared_log_error",
        "MAE",
    ]
    mse = float(np.mean(error**2))
    assert regressor_metrics(truth, predicted, names) == pytest.approx(
        {
            "mean_absolute_error": 0.625,
            "MeanSquaredError": mse,
            "RootMeanSquaredError": mse**0.5,
            "MeanAbsolutePercentageError": 100 * float(np.mean(np.abs(error) / truth)),
            "r2_score": 1 - mse / float(np.var(truth)),
            "explained_variance_score": 1 - float(np.var(error)) / float(np.var(truth)),
            "median_absolute_error": 0.75,
            "mean_squared_log_error": float(np.mean((np.log1p(predicted) - np.log1p(truth)) ** 2)),
            "mae": 0.625,  # sqlml's own name, whatever its case
        }
    )


@pytest.fixture
def database(tmp_path):
    """A DuckDB file with separable rows: y is 1 exactly when x > 20; r = 2x + 1."""
    path = tmp_path / "rows.duckdb"
    with duckdb.connect(str(path)) as connection:
        for table, rows in (("train", "range(60)"), ("test", "range(1, 60, 3)")):
            connection.execute(
                f"CREATE TABLE {table} AS SELECT i::DOUBLE AS x, (i % 7)::DOUBLE AS z, "
                f"CASE WHEN i > 20 THEN 1 ELSE 0 END AS y, i * 2.0 + 1 AS r FROM {rows} t(i)"
            )
    return f"duckdb:///{path}"


def run(url: str, program: str, capsys) -> tuple[int, str, str]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    return status, out, err


def test_to_train_records_the_chosen_metrics(database, capsys):
    program = (
        "SELECT x, z, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        "train.num_boost_round = 20, "
        "validation.select = 'SELECT x, z, y FROM test', "
        "validation.metrics = 'accuracy_score,f1_score,TruePositives,FalseNegatives' "
        "LABEL y INTO m;"
        "DESCRIBE MODEL m;"
    )
    status, out, err = run(database, program, capsys)
    assert status == 0, err
    positives = len([i for i in range(1, 60, 3) if i > 20])
    ds = connect(database)
    try:
        metrics = ModelStore(ds).load("m").metadata["metrics"]
    finally:
        ds.close()
    assert metrics["validation_accuracy_score"] == 1.0
    assert metrics["validation_f1_score"] == 1.0
    assert metrics["validation_TruePositives"] == positives
    assert metrics["validation_FalseNegatives"] == 0
    assert metrics["validation_accuracy"] == 1.0  # the task's own metrics stay
    assert "validation_TruePositives" in out and "validation_TruePositives" in err


def test_to_evaluate_writes_the_metrics_under_the_names_written(database, capsys):
    program = (
        "SELECT x, r FROM train TO TRAIN xgboost.gbtree WITH train.num_boost_round = 30 "
        "LABEL r INTO reg;"
        "SELECT x FROM test TO PREDICT predicted.r USING reg;"
        "SELECT x, r FROM test TO EVALUATE reg WITH validation.metrics = "
        "'MeanSquaredError,mean_absolute_error,r2_score,RMSE' LABEL r INTO evaluated;"
    )
    status, _, err = run(database, program, capsys)
    assert status == 0, err
    ds = connect(database)
    try:
        evaluated = ds.execute("SELECT * FROM evaluated")
        predicted = ds.execute("SELECT t.r, p.r FROM test t JOIN predicted p ON t.x = p.x")
    finally:
        ds.close()
    assert evaluated.columns == ["MeanSquaredError", "mean_absolute_error", "r2_score", "rmse"]
    truth, guess = np.array(predicted.rows, dtype=np.float64).T
    mse = float(np.mean((guess - truth) ** 2))
    values = dict(zip(evaluated.columns, evaluated.rows[0], strict=True))
    assert values == pytest.approx(
        {
            "MeanSquaredError": mse,
            "mean_absolute_error": float(np.mean(np.abs(guess - truth))),
            "r2_score": 1 - mse / float(np.var(truth)),
            "rmse": mse**0.5,
        },
        rel=1e-5,
    )


def test_to_evaluate_of_a_keras_classifier(database, capsys):
    program = (
        "SELECT x, y FROM train TO TRAIN DNNClassifier WITH model.n_classes = 2, "
        "model.hidden_units = [8], train.epoch = 3, "
        "validation.metrics = 'CategoricalAccuracy,AUC' LABEL y INTO dnn;"
        "SELECT x, y FROM test TO EVALUATE dnn WITH validation.metrics = "
        "'CategoricalAccuracy,Accuracy,TruePositives' LABEL y INTO evaluated;"
        "SELECT * FROM evaluated;"
    )
    status, out, err = run(database, program, capsys)
    assert status == 0, err
    header, row = out.strip().splitlines()[-2:]
    assert header == "CategoricalAccuracy,accuracy,TruePositives"
    categorical, accuracy, true_positives = map(float, row.split(","))
    assert categorical == accuracy and 0 <= true_positives <= 13


def errors(program: str, url: str | None = None) -> list[str]:
    ds = connect(url) if url else None
    try:
        found = check_program(program, "duckdb", ds)
        return [f"{e.line}:{e.column} {e.message} | {e.hint}" for e in found]
    finally:
        if ds is not None:
            ds.close()


def test_check_refuses_metrics_that_do_not_fit_the_model(database):
    found = errors(
        "SELECT x, r FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror'\n"
        "LABEL r INTO reg;\n"
        "SELECT x, r FROM test TO EVALUATE reg\n"
        "  WITH validation.metrics = 'accuracy_score' LABEL r INTO e;\n"
        "SELECT x, y FROM train TO TRAIN DNNClassifier WITH\n"
        "  validation.metrics = 'MeanSquaredError' LABEL y INTO c;\n",
        database,
    )
    assert len(found) == 2
    assert found[0].startswith(
        "4:8 validation.metrics: accuracy_score measures a classifier; reg is a regressor"
    )
    assert found[1].startswith(
        "6:3 validation.metrics: MeanSquaredError measures a regressor; c (DNNClassifier) is a "
        "classifier | remove it; the metrics of a classifier are accuracy,"
    )


def test_unknown_metric_names_are_named_as_written():
    (found,) = errors(
        "SELECT x, y FROM t TO EVALUATE m WITH validation.metrics = 'CategoricalAcuracy' "
        "LABEL y INTO e;"
    )
    assert found == (
        "1:39 unknown metric CategoricalAcuracy in validation.metrics | "
        "did you mean CategoricalAccuracy?"
    )
    (found,) = errors(
        "SELECT x, y FROM t TO EVALUATE m WITH validation.metrics = 'accuracy,MeanSquaredError' "
        "LABEL y INTO e;"
    )
    assert found.startswith(
        "1:39 validation.metrics: MeanSquaredError measures a regressor but accuracy a classifier"
    )


def test_eval_metric_is_checked_at_its_value():
    (found,) = errors(
        "SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH\n"
        "  objective = 'binary:logistic',\n"
        "  eval_metric = 'acuracy' LABEL y INTO m;"
    )
    assert found.startswith(
        "3:17 eval_metric acuracy is not one of XGBoost's metrics | did you mean auc?"
    )
    assert (
        errors(
            "SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH eval_metric = 'error@0.7' "
            "LABEL y INTO m;"
            "SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH eval_metric = 'ndcg@5-' "
            "LABEL y INTO n;"
        )
        == []
    )


def test_eval_metric_must_measure_the_objective():
    found = errors(
        "SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic',\n"
        "  eval_metric = mlogloss LABEL y INTO m;\n"
        "SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH objective = 'multi:softprob',\n"
        "  num_class = 3, eval_metric = 'rmse' LABEL y INTO n;\n"
        "SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH objective = 'multi:softmax',\n"
        "  num_class = 3, eval_metric = 'auc' LABEL y INTO o;\n"
    )
    assert [error.split(" |")[0] for error in found] == [
        "2:17 eval_metric mlogloss measures a multi:* objective; this objective is not one",
        "4:32 eval_metric rmse does not measure a multi:* objective's class probabilities",
    ]


@pytest.mark.parametrize(
    ("kind", "given", "kept"),
    [
        ("TO TRAIN DNNClassifier WITH", "AUC,CategoricalAccuracy,auc", "AUC,CategoricalAccuracy"),
        ("TO TRAIN DNNClassifier WITH", "Accuracy,Precision,Recall", "Accuracy,Precision,Recall"),
        ("TO EVALUATE m WITH", "accuracy,Accuracy,ROC_AUC_score", "accuracy,ROC_AUC_score"),
    ],
)
def test_the_statement_keeps_the_metric_names_as_written(kind, given, kept):
    (statement,) = analyze(
        parse(f"SELECT x, y FROM t {kind} validation.metrics = '{given}' LABEL y INTO e;")
    )
    assert statement.attributes["validation.metrics"] == kept


def test_a_metric_that_does_not_fit_the_labels_is_named_as_written(database, capsys):
    # xgboost.gbtree without an objective learns what its labels are: only training can tell
    status, _, err = run(
        database,
        "SELECT x, r FROM train TO TRAIN xgboost.gbtree WITH train.num_boost_round = 2, "
        "validation.metrics = 'AUC' LABEL r INTO reg;",
        capsys,
    )
    assert status == 1
    assert "validation.metrics of reg: AUC measures a classifier, not a regressor" in err


def test_keras_names_of_sqlmls_own_metrics_keep_their_columns(database, capsys):
    """Accuracy, Precision, Recall and AUC are reported under sqlml's names (as Keras itself
    names them): programs reading an evaluation's auc column keep working, and the databases
    that ignore a column name's case (SQLFlow's) find AUC there too."""
    program = (
        "SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        "train.num_boost_round = 10 LABEL y INTO cls;"
        "SELECT x, y FROM test TO EVALUATE cls WITH validation.metrics = "
        "'Accuracy,AUC,Precision,Recall,accuracy_score' LABEL y INTO evaluated;"
        "SELECT AUC, auc, Accuracy FROM evaluated;"
    )
    status, out, err = run(database, program, capsys)
    assert status == 0, err
    header, row = out.strip().splitlines()[-2:]
    assert header.lower() == "auc,auc,accuracy"
    assert [float(v) for v in row.split(",")] == [1.0, 1.0, 1.0]
    ds = connect(database)
    try:
        columns = ds.execute("SELECT * FROM evaluated").columns
    finally:
        ds.close()
    assert columns == ["accuracy", "auc", "precision", "recall", "accuracy_score"]
