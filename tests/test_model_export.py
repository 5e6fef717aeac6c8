"""sqlml export: a stored model in its library's own format, its metadata beside it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xgboost

from sqlml.cli import main
from sqlml.datasources import connect

MEASURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
CLASSES = ["setosa", "versicolor", "virginica"]


def run(url: str, program: str, capsys) -> str:
    status = main(["-e", program, "--datasource", url, "--format", "csv"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def export(*args: str, capsys) -> tuple[int, str, str]:
    status = main(["export", *args])
    out, err = capsys.readouterr()
    return status, out, err


def probabilities(url: str, model: str, table: str, capsys) -> tuple[np.ndarray, np.ndarray]:
    """The iris_test measures and sqlml's class probabilities for them, by id."""
    run(
        url,
        f"SELECT * FROM iris_test TO PREDICT {table}.class "
        f"WITH predict.extra_outputs = 'probabilities' USING {model};",
        capsys,
    )
    ds = connect(url)
    try:
        rows = ds.execute(
            f"SELECT {', '.join(MEASURES)}, {', '.join(f'class_{c}' for c in CLASSES)} "
            f"FROM {table} ORDER BY id"
        ).rows
        ds.execute(f"DROP TABLE {table}")
    finally:
        ds.close()
    values = np.array(rows, dtype=np.float64)
    return values[:, :4], values[:, 4:]


@pytest.fixture
def xgboost_model(iris_url, unique_name, capsys):
    model = f"{unique_name}_m"
    run(
        iris_url,
        f"SELECT {', '.join(MEASURES)}, class FROM iris_train TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = 15, max_depth = 3 LABEL class INTO {model};",
        capsys,
    )
    yield iris_url, model
    main(["-e", f"DROP MODEL IF EXISTS {model};", "--datasource", iris_url])


@pytest.mark.parametrize("extension", [".json", ".ubj"])
def test_xgboost_export_scores_like_sqlml(xgboost_model, unique_name, tmp_path, extension, capsys):
    url, model = xgboost_model
    file = tmp_path / f"iris{extension}"
    status, out, err = export(model, str(file), "--datasource", url, capsys=capsys)
    assert status == 0, err
    assert f"exported model {model} version 1 to {file}" in out
    booster = xgboost.Booster(model_file=str(file))
    if extension == ".json":
        assert json.loads(file.read_text())["learner"]["objective"]["name"] == "multi:softprob"
    else:
        assert file.read_bytes()[:1] == b"{"  # UBJSON opens an object, then binary
        assert b"learner" in file.read_bytes()[:64]
    measures, expected = probabilities(url, model, f"{unique_name}_p", capsys)
    scores = booster.predict(xgboost.DMatrix(measures.astype(np.float32)))
    np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-6)

    metadata = json.loads(Path(f"{file}.sqlml.json").read_text())
    assert metadata["model"] == model and metadata["version"] == 1
    assert metadata["file"] == file.name
    assert metadata["estimator"] == "xgboost.gbtree"
    assert [f["column"] for f in metadata["features"]] == MEASURES
    assert metadata["labels"] == {"classes": CLASSES, "kind": "O", "task": "classifier"}
    assert 0.8 <= metadata["metrics"]["validation_accuracy"] <= 1
    assert "TO TRAIN xgboost.gbtree" in metadata["statement"]
    text = Path(f"{file}.sqlml.json").read_text()
    assert url not in text and "127.0.0.1" not in text and "datasource" not in text


def test_tree_explainer_is_xgboost_own_shap(xgboost_model, tmp_path, capsys):
    """TO EXPLAIN's importance is the mean |SHAP contribution| XGBoost computes, summed over
    the classes, as the exported booster reproduces."""
    url, model = xgboost_model
    file = tmp_path / "m.json"
    assert export(model, str(file), "--datasource", url, capsys=capsys)[0] == 0
    out = run(url, f"SELECT * FROM iris_test TO EXPLAIN {model};", capsys)
    explained = {
        name: float(value) for name, value in (line.split(",") for line in out.splitlines()[1:])
    }
    ds = connect(url)
    rows = ds.execute(f"SELECT {', '.join(MEASURES)} FROM iris_test").rows
    ds.close()
    x = xgboost.DMatrix(np.array(rows, dtype=np.float32))
    contributions = xgboost.Booster(model_file=str(file)).predict(x, pred_contribs=True)
    importance = np.abs(contributions[..., :-1]).mean(axis=0).sum(axis=0)
    np.testing.assert_allclose([explained[m] for m in MEASURES], importance, rtol=1e-5)


def test_export_a_chosen_version(iris_duckdb_url, tmp_path, capsys):
    train = (
        "SELECT sepal_length, class FROM iris_train TO TRAIN xgboost.gbtree "
        "WITH train.num_boost_round = {rounds} LABEL class INTO m;"
    )
    run(iris_duckdb_url, train.format(rounds=2) + train.format(rounds=4), capsys)
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    assert (
        export("m", str(old), "--datasource", iris_duckdb_url, "--version", "1", capsys=capsys)[0]
        == 0
    )
    assert export("m", str(new), "--datasource", iris_duckdb_url, capsys=capsys)[0] == 0
    assert xgboost.Booster(model_file=str(old)).num_boosted_rounds() == 2
    assert xgboost.Booster(model_file=str(new)).num_boosted_rounds() == 4
    assert json.loads(Path(f"{new}.sqlml.json").read_text())["version"] == 2
    status, _, err = export(
        "m", str(old), "--datasource", iris_duckdb_url, "--version", "9", capsys=capsys
    )
    assert status == 1
    assert "error: model m has no version 9" in err and "hint: its stored versions are 1, 2" in err


def test_export_errors(iris_duckdb_url, tmp_path, capsys):
    run(
        iris_duckdb_url,
        "SELECT sepal_length, class FROM iris_train TO TRAIN xgboost.gbtree "
        "WITH train.num_boost_round = 2 LABEL class INTO m;",
        capsys,
    )
    status, _, err = export(
        "nope", str(tmp_path / "a.json"), "--datasource", iris_duckdb_url, capsys=capsys
    )
    assert status == 1
    assert "sqlml: error: model nope does not exist" in err
    assert "hint: train it first" in err

    status, _, err = export(
        "m", str(tmp_path / "a.keras"), "--datasource", iris_duckdb_url, capsys=capsys
    )
    assert status == 1
    assert "model m (xgboost.gbtree) exports to .json or .ubj files, not a.keras" in err
    assert "hint: name the file e.g. a.json" in err

    missing = tmp_path / "no" / "such" / "a.json"
    status, _, err = export("m", str(missing), "--datasource", iris_duckdb_url, capsys=capsys)
    assert status == 1
    assert f"error: cannot write {missing}: No such file or directory" in err
    assert "hint: name a file in an existing folder you can write to" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["test.duckdb"]  # nothing left behind


@pytest.mark.keras
def test_keras_export_loads_in_safe_mode(iris_duckdb_url, tmp_path, capsys):
    keras = pytest.importorskip("keras")
    run(
        iris_duckdb_url,
        f"SELECT {', '.join(MEASURES)}, class FROM iris_train TO TRAIN DNNClassifier "
        "WITH model.hidden_units = [8], train.epoch = 5 LABEL class INTO k;",
        capsys,
    )
    file = tmp_path / "k.keras"
    status, _, err = export("k", str(file), "--datasource", iris_duckdb_url, capsys=capsys)
    assert status == 0, err
    loaded = keras.saving.load_model(file, safe_mode=True, compile=False)
    measures, expected = probabilities(iris_duckdb_url, "k", "p", capsys)
    scores = loaded.predict({"numbers": measures.astype(np.float32)}, verbose=0)
    np.testing.assert_allclose(scores, expected, rtol=1e-4, atol=1e-6)
    metadata = json.loads(Path(f"{file}.sqlml.json").read_text())
    assert metadata["estimator"] == "DNNClassifier" and metadata["family"] == "keras"
    status, _, err = export(
        "k", str(tmp_path / "k.json"), "--datasource", iris_duckdb_url, capsys=capsys
    )
    assert status == 1 and "exports to .keras files, not k.json" in err
