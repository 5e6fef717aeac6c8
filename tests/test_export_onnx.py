"""sqlml export --format onnx: a model sqlml trained (scikit-learn through skl2onnx, XGBoost
through onnxmltools) or imported (LightGBM through onnxmltools, ONNX as it is), run by
onnxruntime, predicts what TO PREDICT does for the same rows; a family without a converter
is an error naming those with one."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_close, fetch_rows, import_or_skip, run_program
from test_import_model import COLUMNS, iris, make

from sqlml.cli import main

onnxruntime = import_or_skip("onnxruntime")
import_or_skip("skl2onnx")
import_or_skip("onnxmltools")


def export(url: str, model: str, file, capsys) -> tuple[int, str, str]:
    status = main(["export", model, str(file), "--format", "onnx", "--datasource", url])
    out, err = capsys.readouterr()
    return status, out, err


def predicted(url: str, tmp_path, model: str, classes: list, capsys) -> list[tuple]:
    """TO PREDICT's class and probabilities of iris_test's rows, by id."""
    names = ", ".join(f"class_{c}" for c in classes)
    status, err = run_program(
        tmp_path,
        url,
        f"SELECT id, {COLUMNS} FROM iris_test TO PREDICT {model}_p.class "
        f"WITH predict.extra_outputs = 'probabilities' USING {model};",
        capsys,
    )
    assert status == 0, err
    return fetch_rows(url, f"SELECT class, {names} FROM {model}_p ORDER BY id")


def onnx_scores(file) -> tuple[np.ndarray, np.ndarray]:
    session = onnxruntime.InferenceSession(str(file), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input"]
    label, probabilities = session.run(["label", "probabilities"], {"input": iris(True)[1]})
    return np.asarray(label), np.asarray(probabilities)


@pytest.mark.parametrize(
    ("estimator", "classes", "labels"),
    [
        (
            "sklearn.ensemble.RandomForestClassifier WITH model.n_estimators = 5, "
            "model.max_depth = 3",
            ["setosa", "versicolor", "virginica"],
            "values",
        ),
        (
            "sklearn.linear_model.LogisticRegression",
            ["setosa", "versicolor", "virginica"],
            "values",
        ),
        (
            "xgboost.gbtree WITH train.num_boost_round = 5",
            ["setosa", "versicolor", "virginica"],
            "ids",
        ),
    ],
    ids=["random-forest", "logistic", "xgboost"],
)
def test_a_trained_model_exported_to_onnx_predicts_as_sqlml(
    estimator, classes, labels, iris_duckdb_url, unique_name, tmp_path, capsys
):
    status, err = run_program(
        tmp_path,
        iris_duckdb_url,
        f"SELECT {COLUMNS}, class FROM iris_train TO TRAIN {estimator} LABEL class "
        f"INTO {unique_name};",
        capsys,
    )
    assert status == 0, err
    file = tmp_path / "model.onnx"
    status, out, err = export(iris_duckdb_url, unique_name, file, capsys)
    assert status == 0, err
    assert f"exported model {unique_name} version 1 as ONNX to {file}" in out
    label, probabilities = onnx_scores(file)
    rows = predicted(iris_duckdb_url, tmp_path, unique_name, classes, capsys)
    assert_close([r[1:] for r in rows], probabilities.tolist(), 1e-6)
    found = label.tolist() if labels == "values" else [classes[i] for i in label]
    assert found == [r[0] for r in rows]


def test_an_imported_model_exports_to_onnx(iris_duckdb_url, tmp_path, capsys):
    made = make("lightgbm", tmp_path)
    onnx_made = make("onnx", tmp_path)
    status, err = run_program(
        tmp_path,
        iris_duckdb_url,
        f"SELECT {COLUMNS} FROM iris_train TO IMPORT '{made.file.name}' COLUMN {COLUMNS} "
        "LABEL class INTO lgb;\n"
        f"SELECT {COLUMNS} FROM iris_train TO IMPORT '{onnx_made.file.name}' COLUMN {COLUMNS} "
        "LABEL class INTO lr;",
        capsys,
    )
    assert status == 0, err
    status, _, err = export(iris_duckdb_url, "lgb", tmp_path / "lgb.onnx", capsys)
    assert status == 0, err
    label, probabilities = onnx_scores(tmp_path / "lgb.onnx")
    expected = made.probabilities(iris(True)[1])
    assert_close(probabilities.tolist(), expected.tolist(), 1e-6)
    assert label.tolist() == expected.argmax(axis=1).tolist()
    status, _, err = export(iris_duckdb_url, "lr", tmp_path / "lr.onnx", capsys)
    assert status == 0, err
    assert (tmp_path / "lr.onnx").read_bytes() == onnx_made.file.read_bytes()


def test_a_family_without_a_converter_is_an_error_naming_those_with_one(
    iris_duckdb_url, tmp_path, capsys
):
    status, err = run_program(
        tmp_path,
        iris_duckdb_url,
        f"SELECT {COLUMNS} FROM iris_train TO TRAIN KMeans WITH model.n_clusters = 3 "
        f"COLUMN {COLUMNS} INTO clusters;",
        capsys,
    )
    assert status == 0, err
    status, _, err = export(iris_duckdb_url, "clusters", tmp_path / "c.onnx", capsys)
    assert status == 1 and not (tmp_path / "c.onnx").exists()
    assert "error: model clusters (KMeans, cluster) cannot be converted to ONNX" in err
    assert (
        "hint: ONNX exports are of XGBoost, sklearn, LightGBM, ONNX models; export this one in "
        "its library's format (.json: sqlml export MODEL FILE)" in err
    )
    status, _, err = export(iris_duckdb_url, "clusters", tmp_path / "c.txt", capsys)
    assert status == 1 and "sqlml export --format onnx writes .onnx files, not c.txt" in err
