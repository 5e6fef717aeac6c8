"""TO EVALUATE ... WITH evaluate.plot: ROC and PR curves, a confusion matrix, or predicted
against actual values, saved as a PNG."""

from __future__ import annotations

import numpy as np
import pytest

from sqlml.cli import main
from sqlml.runtime import evaluate_plot
from sqlml.runtime.evaluate_plot import confusion_matrix, pr_curve, roc_curve
from tests.test_explain_plot import png_size

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"


def run(program: str, url: str, capsys) -> tuple[int, str, str]:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    return status, out, err


def test_multiclass_confusion_matrix_counts_the_predictions(
    iris_duckdb_url, tmp_path, monkeypatch, capsys
):
    drawn = []
    draw = evaluate_plot._matrix
    monkeypatch.setattr(
        evaluate_plot, "_matrix", lambda *args: drawn.append(args[2:]) or draw(*args)
    )
    plot = tmp_path / "confusion.png"
    program = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
        "WITH train.num_boost_round = 10 LABEL class INTO m;"
        "SELECT * FROM iris_test TO PREDICT p.class USING m;"
        f"SELECT * FROM iris_test TO EVALUATE m WITH evaluate.plot = '{plot}' LABEL class INTO e;"
        "SELECT t.class, p.class, count(*) FROM iris_test t JOIN p USING (id) "
        "GROUP BY ALL ORDER BY ALL;"
    )
    status, out, err = run(program, iris_duckdb_url, capsys)
    assert status == 0, err
    assert f"plot saved to {plot}" in err
    ((counts, classes),) = drawn
    assert classes == ["setosa", "versicolor", "virginica"]
    expected = np.zeros((3, 3), dtype=np.int64)
    for line in out.splitlines()[1:]:
        true, predicted, count = line.split(",")
        expected[classes.index(true), classes.index(predicted)] = int(count)
    assert expected.sum() == 30 and np.trace(expected) >= 27
    assert (counts == expected).all()
    assert png_size(plot) == (650, 550)  # 4 + 0.5 per class inches high, 1 more wide


def test_binary_roc_and_pr_curves_side_by_side(duckdb_url, tmp_path, capsys):
    program = (
        "CREATE TABLE d AS SELECT i % 10 AS x, (i * 7919) % 13 AS noise, "
        "CASE WHEN i % 10 < 5 THEN 1 ELSE 0 END AS y FROM range(400) t(i);"
        "SELECT * FROM d TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        "train.num_boost_round = 5 LABEL y INTO b;"
        "SELECT * FROM d TO EVALUATE b WITH evaluate.plot = 'roc.png' LABEL y INTO e;"
    )
    (tmp_path / "program").mkdir()
    file = tmp_path / "program" / "binary.sql"
    file.write_text(program, encoding="utf-8")
    assert main(["run", str(file), "--datasource", duckdb_url]) == 0, capsys.readouterr().err
    assert png_size(tmp_path / "program" / "roc.png") == (1100, 450)  # beside the program


def test_regressor_scatter(duckdb_url, tmp_path, capsys):
    program = (
        "CREATE TABLE r AS SELECT i % 17 AS x, 2.0 * (i % 17) + (i % 3) AS y FROM range(300) t(i);"
        "SELECT * FROM r TO TRAIN xgboost.gbtree WITH train.num_boost_round = 10 LABEL y INTO r;"
        f"SELECT * FROM r TO EVALUATE r WITH evaluate.plot = '{tmp_path / 'r.png'}' "
        "LABEL y INTO e;"
    )
    status, _, err = run(program, duckdb_url, capsys)
    assert status == 0, err
    assert png_size(tmp_path / "r.png") == (600, 500)


def test_the_plot_must_be_a_png(duckdb_url, capsys):
    status, _, err = run(
        "SELECT 1 AS x, 1 AS y TO EVALUATE m WITH evaluate.plot = 'e.svg' LABEL y INTO e;",
        duckdb_url,
        capsys,
    )
    assert status == 1
    assert "evaluate.plot must name a .png file, not 'e.svg'" in err
    assert "hint: e.g. evaluate.plot = 'e.png'" in err


def test_confusion_matrix_rows_are_true_classes():
    truth = np.array([0, 0, 1, 2, 2, 2])
    predicted = np.array([0, 1, 1, 2, 0, 2])
    assert confusion_matrix(truth, predicted, 3).tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 2]]


def test_roc_and_pr_curves_step_through_tied_scores():
    positive = np.array([True, False, True, False, True])
    scores = np.array([0.9, 0.8, 0.8, 0.3, 0.1])
    false_rate, true_rate = roc_curve(positive, scores)
    assert false_rate.tolist() == [0, 0, 0.5, 1, 1]
    assert true_rate.tolist() == pytest.approx([0, 1 / 3, 2 / 3, 2 / 3, 1])
    recall, precision = pr_curve(positive, scores)
    assert recall.tolist() == pytest.approx([1 / 3, 2 / 3, 2 / 3, 1])
    assert precision.tolist() == pytest.approx([1, 2 / 3, 0.5, 0.6])


@pytest.fixture
def titles(monkeypatch) -> list[list[str]]:
    """The titles of each figure drawn, its axes' titles in order (no PNG is written)."""
    drawn: list[list[str]] = []
    monkeypatch.setattr(
        evaluate_plot,
        "write_png",
        lambda figure, *_: drawn.append([axes.get_title() for axes in figure.axes]),
    )
    return drawn


def test_binary_titles_name_the_model_its_auc_and_average_precision(titles, tmp_path):
    truth = np.array([1, 0, 1, 0, 1, 0])
    positive = np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1])
    scores = np.c_[1 - positive, positive]
    evaluate_plot.save_evaluation_plot(
        tmp_path / "p.png", "classifier", truth, scores, ["n", "y"], "churn"
    )
    # AUC: 6 of the 9 positive-negative pairs ranked right; AP: (1 + 2/3 + 3/5) / 3
    assert titles == [["churn: ROC, AUC 0.667", "churn: precision-recall, AP 0.756"]]


def test_multiclass_title_names_the_model_and_its_accuracy(titles, tmp_path):
    truth = np.array([0, 1, 2, 2])
    scores = np.eye(3)[[0, 1, 2, 0]]
    evaluate_plot.save_evaluation_plot(
        tmp_path / "p.png", "classifier", truth, scores, list("abc"), "iris_xgboost"
    )
    assert titles[0][0] == "iris_xgboost: confusion matrix, accuracy 0.750"


def test_regressor_title_names_the_model_its_r2_and_rmse(titles, tmp_path):
    actual = np.array([1.0, 2.0, 3.0, 4.0])
    evaluate_plot.save_evaluation_plot(
        tmp_path / "p.png", "regressor", actual, actual + np.array([1, -1, 1, -1]), [], "prices"
    )
    # R² = 1 - mse / variance = 1 - 1 / 1.25
    assert titles == [["prices: predicted vs actual, R² 0.200, RMSE 1"]]
    evaluate_plot.save_evaluation_plot(tmp_path / "p.png", "regressor", np.ones(3), np.zeros(3), [])
    assert titles[1] == ["predicted vs actual, RMSE 1"]  # constant values: no R²; no model
