"""TO PREDICT's extra outputs as SQLFlow names them (``predict.extra_outputs``): each a column
the model's family offers, beside the prediction; and KMeans's ``excluded_columns``, selected
columns left out of the features. Every database."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import datasource_url, import_or_skip, iris_columns, load_iris

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models import family
from sqlml.models.store import ModelStore

MEASURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def run(url: str, program: str, capsys) -> tuple[int, str]:
    status = main(["-e", program, "--datasource", url])
    out, err = capsys.readouterr()
    return status, out + err


def read(url: str, sql: str) -> tuple[list[str], list[tuple]]:
    ds = connect(url)
    try:
        result = ds.execute(sql)
        return [name.lower() for name in result.columns], result.rows
    finally:
        ds.close()


def stored_document(url: str, model: str) -> dict:
    ds = connect(url)
    try:
        return json.loads(ModelStore(ds).load(model).data)
    finally:
        ds.close()


def density_minus_threshold(document: dict, x: np.ndarray) -> np.ndarray:
    """The one-class model's decision function, computed here from its stored document."""
    z = (x - np.array(document["mean"])) / np.array(document["scale"])
    landmarks = np.array(document["landmarks"])
    distances = ((z[:, None, :] - landmarks[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-document["gamma"] * distances).mean(axis=1) - document["threshold"]


def test_one_class_svm_writes_its_score(iris_url, unique_name, capsys):
    """SQLFlow's e2e case: OneClassSVM, TO PREDICT <table>.label WITH
    predict.extra_outputs = "score": the features, the label, then the score, positive for
    the inliers (1) and negative for the outliers (-1)."""
    model, table = f"{unique_name}_m", f"{unique_name}_p"
    columns = ", ".join(MEASURES)
    program = (
        f"SELECT {columns} FROM iris_train TO TRAIN sqlflow_models.OneClassSVM\n"
        f'WITH model.kernel = "rbf", model.nu = 0.2 INTO {model};\n'
        f"SELECT id, {columns} FROM iris_train TO PREDICT {table}.label\n"
        f'WITH predict.extra_outputs = "score" USING {model};'
    )
    status, said = run(iris_url, program, capsys)
    try:
        assert status == 0, said
        names, rows = read(iris_url, f"SELECT * FROM {table} ORDER BY id")
        document = stored_document(iris_url, model)
    finally:
        run(iris_url, f"DROP TABLE IF EXISTS {table}; DROP MODEL IF EXISTS {model};", capsys)
    assert names == ["id", *MEASURES, "label", "score"]
    labels = np.array([int(row[5]) for row in rows])
    scores = np.array([float(row[6]) for row in rows])
    x = np.array([row[1:5] for row in rows], dtype=np.float64)
    # the model computes on the features as float32
    np.testing.assert_allclose(scores, density_minus_threshold(document, x), rtol=1e-5, atol=1e-6)
    assert ((scores > 0) == (labels == 1)).all()
    assert (labels == -1).sum() == 24  # the training rows below the 0.2 quantile: 0.2 x 120


def test_probabilities_and_score_together(iris_url, unique_name, capsys):
    model, table = f"{unique_name}_m", f"{unique_name}_p"
    columns = ", ".join(MEASURES)
    program = (
        f"SELECT {columns} FROM iris_train TO TRAIN sqlflow_models.OneClassSVM INTO {model};\n"
        f"SELECT id, {columns} FROM iris_test TO PREDICT {table}.outlier\n"
        f"WITH predict.extra_outputs = 'score, Probabilities' USING {model};"
    )
    status, said = run(iris_url, program, capsys)
    try:
        assert status == 0, said
        names, rows = read(iris_url, f"SELECT * FROM {table} ORDER BY id")
        document = stored_document(iris_url, model)
    finally:
        run(iris_url, f"DROP TABLE IF EXISTS {table}; DROP MODEL IF EXISTS {model};", capsys)
    assert names == ["id", *MEASURES, "outlier", "score", "outlier_prob_0", "outlier_prob_1"]
    values = np.array([row[5:] for row in rows], dtype=np.float64)
    outlier, score, p_outlier, p_inlier = values.T
    np.testing.assert_allclose(p_outlier + p_inlier, 1, atol=1e-9)
    # the inlier's odds are the density over the threshold
    np.testing.assert_allclose(score, document["threshold"] * (p_inlier / p_outlier - 1), rtol=1e-6)
    assert ((score > 0) == (outlier == 1)).all()


def test_scikit_learns_one_class_svm_writes_its_decision_function(iris_url, unique_name, capsys):
    svm = import_or_skip("sklearn.svm")
    import_or_skip("skops")
    model, table = f"{unique_name}_m", f"{unique_name}_p"
    columns = ", ".join(MEASURES)
    program = (
        f"SELECT {columns} FROM iris_train TO TRAIN sklearn.svm.OneClassSVM\n"
        f"WITH model.nu = 0.1 INTO {model};\n"
        f"SELECT id, {columns} FROM iris_test TO PREDICT {table}.inlier\n"
        f"WITH predict.extra_outputs = 'score' USING {model};"
    )
    status, said = run(iris_url, program, capsys)
    try:
        assert status == 0, said
        names, rows = read(iris_url, f"SELECT * FROM {table} ORDER BY id")
    finally:
        run(iris_url, f"DROP TABLE IF EXISTS {table}; DROP MODEL IF EXISTS {model};", capsys)
    assert names == ["id", *MEASURES, "inlier", "score"]
    iris = iris_columns()
    held_out = iris["id"] % 5 == 0
    x = np.column_stack([iris[name] for name in MEASURES])
    expected = svm.OneClassSVM(nu=0.1).fit(x[~held_out]).decision_function(x[held_out])
    scores = np.array([float(row[6]) for row in rows])
    np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-7)
    inlier = np.array([int(row[5]) for row in rows])
    assert ((scores > 0) == (inlier == 1)).all() and (inlier == -1).any()


def test_an_extra_output_the_model_does_not_offer_is_an_error_at_the_attribute(
    iris_url, unique_name, capsys
):
    model = f"{unique_name}_m"
    status, said = run(
        iris_url,
        f"SELECT * FROM iris_train TO TRAIN KMeans WITH center_count = 3, "
        f"excluded_columns = 'id,class' INTO {model};\n"
        f"SELECT * FROM iris_test TO PREDICT {unique_name}_p.cluster\n"
        f"  WITH predict.extra_outputs = score USING {model};",
        capsys,
    )
    run(iris_url, f"DROP MODEL IF EXISTS {model};", capsys)
    assert status == 1
    assert (
        f"<-e>:3:8: error: {model} (KMeans) offers no extra output score; it offers "
        "probabilities\n  hint: probabilities: a column per class, <result>_<class> (or "
        "<result>_prob_<i>), holding its probability"
    ) in said


def test_an_extra_output_no_model_offers_is_an_error_before_running(duckdb_url, capsys):
    status, said = run(
        duckdb_url,
        "SELECT 1 AS x TO PREDICT p.y WITH predict.extra_outputs = 'score, logits' USING m;",
        capsys,
    )
    assert status == 1
    assert "<-e>:1:35: error: unknown extra output logits in predict.extra_outputs" in said
    assert "hint: the extra outputs models offer are probabilities, score" in said


@pytest.mark.parametrize(
    ("predict", "message"),
    [
        (
            "SELECT {columns}, 0 AS score FROM iris_test TO PREDICT {table}.label",
            "the SELECT already returns score, which the extra outputs (predict.extra_outputs) "
            "would replace",
        ),
        (
            "SELECT {columns} FROM iris_test TO PREDICT {table}.score",
            "the extra output score would replace the result",
        ),
    ],
)
def test_a_score_column_that_would_replace_another_is_refused(
    predict, message, duckdb_url, unique_name, capsys
):
    ds = connect(duckdb_url)
    load_iris(ds)
    ds.close()
    model, table, columns = f"{unique_name}_m", f"{unique_name}_p", ", ".join(MEASURES)
    status, said = run(
        duckdb_url,
        f"SELECT {columns} FROM iris_train TO TRAIN sqlflow_models.OneClassSVM INTO {model};\n"
        + predict.format(columns=columns, table=table)
        + f" WITH predict.extra_outputs = score USING {model};",
        capsys,
    )
    assert status == 1 and message in said, said
    assert table not in {row[0] for row in read(duckdb_url, "SHOW TABLES")[1]}


# KMeans's excluded_columns ------------------------------------------------------------------


def test_excluded_columns_are_left_out_of_the_features(iris_url, unique_name, capsys):
    """SQLFlow's e2e case of KMeans on PAI: SELECT * with excluded_columns: the same model
    as one trained on the other columns alone."""
    p = unique_name
    program = (
        f"SELECT * FROM iris_train TO TRAIN kmeans\n"
        f'WITH center_count = 3, excluded_columns = "id,class" INTO {p}_excluded;\n'
        f"SELECT {', '.join(MEASURES)} FROM iris_train TO TRAIN KMeans\n"
        f"WITH model.n_clusters = 3 INTO {p}_listed;\n"
        f"SELECT * FROM iris_test TO PREDICT {p}_a.cluster_index USING {p}_excluded;\n"
        f"SELECT * FROM iris_test TO PREDICT {p}_b.cluster_index USING {p}_listed;\n"
    )
    status, said = run(iris_url, program, capsys)
    try:
        assert status == 0, said
        excluded = read(iris_url, f"SELECT id, cluster_index FROM {p}_a ORDER BY id")[1]
        listed = read(iris_url, f"SELECT id, cluster_index FROM {p}_b ORDER BY id")[1]
        ds = connect(iris_url)
        try:
            metadata = ModelStore(ds).load(f"{p}_excluded").metadata
        finally:
            ds.close()
    finally:
        run(
            iris_url,
            f"DROP TABLE IF EXISTS {p}_a; DROP TABLE IF EXISTS {p}_b; "
            f"DROP MODEL IF EXISTS {p}_excluded; DROP MODEL IF EXISTS {p}_listed;",
            capsys,
        )
    assert [feature["column"] for feature in metadata["features"]] == MEASURES
    assert "warning" not in said, said
    assert len(excluded) == 30 and excluded == listed
    # the clusters found are the species, but for a few versicolor and virginica flowers
    species = iris_columns()["class"][iris_columns()["id"] % 5 == 0]
    clusters = np.array([int(row[1]) for row in excluded])
    agree = sum(np.bincount(clusters[species == s]).max() for s in set(species))
    assert agree >= 24, agree


@pytest.mark.parametrize(
    ("train", "message"),
    [
        (
            "SELECT * FROM iris_train TO TRAIN KMeans WITH excluded_columns = 'class, kind' "
            "INTO m;",
            "model.excluded_columns names kind, which the SELECT does not return",
        ),
        (
            "SELECT * FROM iris_train TO TRAIN KMeans WITH excluded_columns = 'id, class' "
            "COLUMN id, sepal_length INTO m;",
            "id is both in model.excluded_columns and a feature that COLUMN names",
        ),
    ],
)
def test_excluded_columns_that_do_not_fit_are_refused(train, message, tmp_path, capsys):
    url = datasource_url("duckdb", tmp_path)
    ds = connect(url)
    load_iris(ds)
    ds.close()
    status, said = run(url, train, capsys)
    assert status == 1 and f"<-e>:1:1: error: {message}" in said, said


@pytest.mark.parametrize(
    ("family_name", "estimator", "task", "offered"),
    [
        ("sklearn", "sklearn.svm.OneClassSVM", "classifier", ["probabilities", "score"]),
        ("sklearn", "sklearn.ensemble.IsolationForest", "classifier", ["probabilities", "score"]),
        ("sklearn", "sklearn.cluster.KMeans", "classifier", ["probabilities"]),
        ("sklearn", "sklearn.ensemble.RandomForestClassifier", "classifier", ["probabilities"]),
        ("sklearn", "sklearn.linear_model.LinearRegression", "regressor", []),
        ("outlier", "sqlflow_models.OneClassSVM", "classifier", ["probabilities", "score"]),
        ("cluster", "KMeans", "classifier", ["probabilities"]),
        ("keras", "DNNClassifier", "classifier", ["probabilities"]),
        ("keras", "DNNRegressor", "regressor", []),
        ("xgboost", "XGBClassifier", "classifier", ["probabilities"]),
    ],
)
def test_each_family_declares_the_extra_outputs_of_its_models(
    family_name, estimator, task, offered
):
    metadata = {"labels": {"task": task}, "params": {"estimator": estimator}}
    assert list(family(family_name).extra_outputs(metadata)) == offered
