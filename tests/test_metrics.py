"""TO EVALUATE's metrics against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.metric_values import auc, classifier_metrics, ranker_metrics, regressor_metrics
from sqlml.metrics import CLASSIFIER_METRICS, REGRESSOR_METRICS


def test_the_metric_sets():
    assert CLASSIFIER_METRICS == ("accuracy", "precision", "recall", "f1", "auc", "log_loss")
    assert REGRESSOR_METRICS == ("mae", "mse", "rmse", "r2")


def test_binary_classifier():
    truth = np.array([0, 1, 1, 0, 1])
    p1 = np.array([0.2, 0.7, 0.4, 0.6, 0.9])  # predicts 0, 1, 0, 1, 1
    metrics = classifier_metrics(truth, np.column_stack([1 - p1, p1]))
    # precision: class 0 right in 1 of its 2 predictions, class 1 in 2 of 3; recall likewise
    assert metrics == pytest.approx(
        {
            "accuracy": 3 / 5,
            "precision": (1 / 2 + 2 / 3) / 2,
            "recall": (1 / 2 + 2 / 3) / 2,
            "f1": (1 / 2 + 2 / 3) / 2,  # each class's precision equals its recall
            "auc": 5 / 6,  # 5 of the 6 (positive, negative) pairs ordered right
            "log_loss": -(math.log(0.8 * 0.7 * 0.4 * 0.4 * 0.9)) / 5,
        }
    )


def test_multiclass_classifier():
    truth = np.array([0, 1, 2, 2])
    probabilities = np.array(
        [[0.7, 0.2, 0.1], [0.3, 0.4, 0.3], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]
    )  # predicts 0, 1, 1, 2
    metrics = classifier_metrics(truth, probabilities)
    assert metrics == pytest.approx(
        {
            "accuracy": 3 / 4,
            "precision": (1 + 1 / 2 + 1) / 3,
            "recall": (1 + 1 + 1 / 2) / 3,
            "f1": (1 + 2 / 3 + 2 / 3) / 3,
            # one-vs-rest: class 0 perfect, class 1 2 of 3 pairs, class 2 3.5 of 4 (a tie)
            "auc": (1 + 2 / 3 + 3.5 / 4) / 3,
            "log_loss": -math.log(0.7 * 0.4 * 0.3 * 0.8) / 4,
        }
    )


def test_chosen_metrics_keep_their_order():
    truth = np.array([0, 1])
    probabilities = np.array([[0.9, 0.1], [0.2, 0.8]])
    assert list(classifier_metrics(truth, probabilities, ["auc", "accuracy"])) == [
        "auc",
        "accuracy",
    ]
    assert regressor_metrics(np.array([1.0]), np.array([2.0]), ["rmse"]) == {"rmse": 1.0}


def test_auc_edge_cases():
    assert auc(np.array([0.5, 0.5]), np.array([True, False])) == 0.5  # a tie counts half
    assert math.isnan(auc(np.array([0.1, 0.2]), np.array([True, True])))
    # a class with no rows is left out of the one-vs-rest mean
    probabilities = np.array([[0.8, 0.1, 0.1], [0.3, 0.6, 0.1]])
    assert classifier_metrics(np.array([0, 1]), probabilities, ["auc"]) == {"auc": 1.0}


def test_log_loss_of_a_certain_mistake_is_finite():
    metrics = classifier_metrics(np.array([1]), np.array([[1.0, 0.0]]), ["log_loss"])
    assert metrics["log_loss"] == pytest.approx(-math.log(1e-15))


def test_regressor():
    truth = np.array([1.0, 2.0, 3.0, 4.0])
    predicted = np.array([1.5, 2.0, 2.0, 5.0])  # errors 0.5, 0, -1, 1
    assert regressor_metrics(truth, predicted) == pytest.approx(
        {"mae": 2.5 / 4, "mse": 2.25 / 4, "rmse": 0.75, "r2": 1 - (2.25 / 4) / 1.25}
    )
    assert math.isnan(regressor_metrics(np.ones(3), np.zeros(3))["r2"])  # no variance


def test_ndcg_by_hand():
    truth = np.array([2, 0, 1, 0, 0])
    scores = np.array([0.3, 0.9, 0.1, 0.5, 0.2])
    groups = np.array([1, 1, 1, 2, 2])  # query 2 has no relevant row: left out
    ideal = 3 + 1 / math.log2(3)  # gains 3, 1, 0
    found = 3 / math.log2(3) + 1 / 2  # order by score: relevance 0, 2, 1
    assert ranker_metrics(truth, scores, groups) == pytest.approx({"ndcg": found / ideal})


def test_evaluate_regressor_matches_its_predictions(duckdb_url, capsys):
    """TO EVALUATE's table holds MAE, MSE, RMSE and R2 of what TO PREDICT writes."""
    program = """
        CREATE TABLE d AS SELECT i AS x, (i * 37) % 11 AS z, i * 0.5 + (i * 37) % 11 AS y
          FROM range(200) t(i);
        SELECT x, z, y FROM d WHERE x < 150 TO TRAIN xgboost.gbtree
          WITH objective = 'reg:squarederror', train.num_boost_round = 20 LABEL y INTO r;
        SELECT x, z, y FROM d WHERE x >= 150 TO PREDICT p.y USING r;
        SELECT x, z, y FROM d WHERE x >= 150 TO EVALUATE r LABEL y INTO e;
    """
    assert main(["-e", program, "--datasource", duckdb_url]) == 0, capsys.readouterr().err
    ds = connect(duckdb_url)
    pairs = ds.execute("SELECT d.y, p.y FROM d JOIN p ON d.x = p.x ORDER BY d.x").rows
    evaluated = ds.execute("SELECT * FROM e")
    ds.close()
    truth, predicted = np.array(pairs, dtype=np.float64).T
    assert evaluated.columns == ["mae", "mse", "rmse", "r2"]
    error = predicted - truth
    mse = float(np.mean(error**2))
    expected = [
        float(np.mean(np.abs(error))),
        mse,
        math.sqrt(mse),
        1 - mse / float(np.var(truth)),
    ]
    assert list(evaluated.rows[0]) == pytest.approx(expected, rel=1e-6)
