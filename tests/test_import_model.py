"""TO IMPORT: models trained elsewhere (ONNX made by skl2onnx, XGBoost's JSON and UBJSON,
LightGBM's text, skops) predict, through TO PREDICT and PREDICT(m) in a query, what their own
libraries predict for the same rows (probabilities within 1e-6, the same classes); ONNX on
every database. Files that would run code, are malformed or do not fit COLUMN and the SELECT
are refused with an error at the statement's file or COLUMN, with a hint, never a traceback.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import pickle
import re
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import assert_close, fetch_rows, import_or_skip, iris_columns, run_program

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import ModelError
from sqlml.models import family
from sqlml.models.lightgbm.checks import text_problem
from sqlml.models.store import ModelStore

MEASURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
COLUMNS = ", ".join(MEASURES)
CLASSES = ["setosa", "versicolor", "virginica"]

onnx = import_or_skip("onnx")
onnxruntime = import_or_skip("onnxruntime")
lightgbm = import_or_skip("lightgbm")
skl2onnx = import_or_skip("skl2onnx")
skops_io = import_or_skip("skops.io")
xgboost = import_or_skip("xgboost")


def iris(held_out: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ids, measures (float32, as sqlml reads them) and classes of iris_train (or
    iris_test: every fifth flower), by id."""
    columns = iris_columns()
    rows = (columns["id"] % 5 == 0) == held_out
    x = np.column_stack([columns[m][rows] for m in MEASURES]).astype(np.float32)
    return columns["id"][rows], x, columns["class"][rows]


@dataclass(frozen=True)
class Made:
    """A model file, and what its library predicts for iris_test's rows: the classes (as
    values of the label) and their probabilities."""

    file: Path
    classes: list[Any]
    probabilities: Callable[[np.ndarray], np.ndarray]


def _logistic() -> Any:
    from sklearn.linear_model import LogisticRegression

    _, x, y = iris(False)
    return LogisticRegression(max_iter=1000).fit(x.astype(np.float64), y)


def _ids(y: np.ndarray) -> np.ndarray:
    return np.searchsorted(CLASSES, y)


def make(kind: str, folder: Path) -> Made:
    """A model of ``kind`` trained here on iris_train, saved in ``folder``."""
    _, x, y = iris(False)
    if kind in ("onnx", "onnx_forest"):
        if kind == "onnx":  # ZipMap's maps of the classes' probabilities
            model, options = _logistic(), None
        else:  # a tensor of probabilities
            from sklearn.ensemble import RandomForestClassifier

            model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
            model.fit(x, y)
            options = {id(model): {"zipmap": False}}
        converted = skl2onnx.to_onnx(model, x[:1], options=options)
        file = folder / f"{kind}.onnx"
        file.write_bytes(converted.SerializeToString())
        session = onnxruntime.InferenceSession(str(file), providers=["CPUExecutionProvider"])

        def run_onnx(rows: np.ndarray) -> np.ndarray:
            found = session.run(None, {session.get_inputs()[0].name: rows})[1]
            if isinstance(found, list):
                return np.array([[row[c] for c in CLASSES] for row in found])
            return np.asarray(found)

        return Made(file, CLASSES, run_onnx)
    if kind in ("xgboost_json", "xgboost_ubj"):
        booster = xgboost.train(
            {"objective": "multi:softprob", "num_class": 3, "max_depth": 2, "verbosity": 0},
            xgboost.DMatrix(x, label=_ids(y)),
            num_boost_round=5,
        )
        file = folder / f"iris.{kind.split('_')[1]}"
        booster.save_model(str(file))
        return Made(file, [0, 1, 2], lambda rows: booster.predict(xgboost.DMatrix(rows)))
    if kind == "lightgbm":
        params = {"objective": "multiclass", "num_class": 3, "num_leaves": 4, "verbose": -1}
        booster = lightgbm.train(
            params, lightgbm.Dataset(x.astype(np.float64), _ids(y)), num_boost_round=3
        )
        file = folder / "iris.txt"
        booster.save_model(str(file))
        return Made(file, [0, 1, 2], lambda rows: booster.predict(rows.astype(np.float64)))
    assert kind == "skops"
    model = _logistic()
    file = folder / "iris.skops"
    skops_io.dump(model, file)
    return Made(file, CLASSES, lambda rows: model.predict_proba(rows.astype(np.float64)))


def imported(url: str, tmp_path: Path, made: Made, model: str, capsys, more: str = "") -> str:
    """TO IMPORT of ``made`` (named relative to the program's folder) into ``model``; its
    summary."""
    status, err = run_program(
        tmp_path,
        url,
        f"SELECT {COLUMNS}, class FROM iris_train TO IMPORT '{made.file.name}' {more}"
        f"COLUMN {COLUMNS} LABEL class INTO {model};",
        capsys,
    )
    assert status == 0, err
    return err


def check_predictions(url: str, tmp_path: Path, made: Made, model: str, capsys) -> None:
    """TO PREDICT's classes and probabilities, and PREDICT(m)'s classes, for iris_test's
    rows are the library's own."""
    table = f"{model}_p"
    names = [f"class_{c}" for c in made.classes]
    status, err = run_program(
        tmp_path,
        url,
        f"SELECT id, {COLUMNS} FROM iris_test TO PREDICT {table}.class "
        f"WITH predict.extra_outputs = 'probabilities' USING {model};",
        capsys,
    )
    assert status == 0, err
    ids, x, _ = iris(True)
    expected = made.probabilities(x)
    assert expected.shape == (len(ids), 3)
    wanted = [made.classes[i] for i in expected.argmax(axis=1)]
    rows = fetch_rows(url, f"SELECT id, class, {', '.join(names)} FROM {table} ORDER BY id")
    assert [r[0] for r in rows] == ids.tolist()
    assert [r[1] for r in rows] == wanted
    assert_close([r[2:] for r in rows], expected.tolist())
    called = fetch_rows_with_models(url, f"SELECT id, PREDICT({model}) AS p FROM iris_test")
    assert sorted(called) == list(zip(ids.tolist(), wanted, strict=True))
    main(["-e", f"DROP TABLE {table}; DROP MODEL {model};", "--datasource", url])


def fetch_rows_with_models(url: str, query: str) -> list[tuple]:
    """The rows of a query calling models (sqlml runs it): as CSV, parsed."""
    out = io.StringIO()

    with redirect_stdout(out):
        assert main(["-e", f"{query};", "--datasource", url, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(out.getvalue())))[1:]
    return [(int(i), int(p) if re.fullmatch(r"-?\d+", p) else p) for i, p in rows]


@pytest.mark.parametrize(
    "kind", ["onnx", "onnx_forest", "xgboost_json", "xgboost_ubj", "lightgbm", "skops"]
)
def test_an_imported_model_predicts_what_its_library_does(
    kind, iris_duckdb_url, unique_name, tmp_path, capsys
):
    made = make(kind, tmp_path)
    said = imported(iris_duckdb_url, tmp_path, made, unique_name, capsys)
    assert f"imported {unique_name} version 1" in said and "predicts 3 classes" in said
    assert "it scored the SELECT's first 120 rows" in said
    check_predictions(iris_duckdb_url, tmp_path, made, unique_name, capsys)


def test_an_imported_onnx_model_predicts_on_every_database(iris_url, unique_name, tmp_path, capsys):
    made = make("onnx", tmp_path)
    imported(iris_url, tmp_path, made, unique_name, capsys)
    check_predictions(iris_url, tmp_path, made, unique_name, capsys)


def test_imports_are_versioned_and_described_like_trained_models(
    iris_duckdb_url, unique_name, tmp_path, capsys
):
    made = make("xgboost_json", tmp_path)
    for _ in range(2):
        imported(iris_duckdb_url, tmp_path, made, unique_name, capsys, "WITH format = xgboost ")
    main(["-e", f"DESCRIBE MODEL {unique_name};", "--datasource", iris_duckdb_url])
    described = capsys.readouterr().out
    assert re.search(r"version\s+\|\s+2", described)
    assert re.search(r"estimator\s+\|\s+xgboost\.gbtree", described)
    assert re.search(r"classes\s+\|\s+\[0, 1, 2\]", described)
    digest = hashlib.sha256(made.file.read_bytes()).hexdigest()
    imported_row = json.dumps({"file": "iris.json", "format": "xgboost", "sha256": digest})
    assert re.search(rf"imported\s+\|\s+{re.escape(imported_row)}", described)
    ds = connect(iris_duckdb_url)
    try:
        stored = ModelStore(ds).load(unique_name)
    finally:
        ds.close()
    assert json.loads(json.dumps(stored.metadata))["label"] == "class"
    assert stored.metadata["lineage"]["program"].endswith("program.sql")
    assert stored.metadata["lineage"]["tables"] == {}
    status, err = run_program(
        tmp_path,
        iris_duckdb_url,
        f"SELECT {COLUMNS}, CASE class WHEN 'setosa' THEN 0 WHEN 'versicolor' THEN 1 ELSE 2 END "
        f"AS class FROM iris_test TO EVALUATE {unique_name} LABEL class INTO {unique_name}_e;",
        capsys,
    )
    assert status == 0, err
    (accuracy,) = fetch_rows(iris_duckdb_url, f"SELECT accuracy FROM {unique_name}_e")[0]
    _, x, y = iris(True)
    assert accuracy == pytest.approx(np.mean(made.probabilities(x).argmax(axis=1) == _ids(y)))


def test_an_xgboost_model_with_feature_names_must_be_named_by_column(
    iris_duckdb_url, unique_name, tmp_path, capsys
):
    _, x, y = iris(False)
    names = ["sl", "sw", "pl", "pw"]
    booster = xgboost.train(
        {"objective": "multi:softprob", "num_class": 3, "verbosity": 0},
        xgboost.DMatrix(x, label=_ids(y), feature_names=names),
        num_boost_round=2,
    )
    booster.save_model(str(tmp_path / "named.json"))
    text = (
        f"SELECT {COLUMNS} FROM iris_train TO IMPORT 'named.json' COLUMN {COLUMNS} "
        f"INTO {unique_name};"
    )
    status, err = run_program(tmp_path, iris_duckdb_url, text, capsys)
    assert status == 1
    at = text.index("COLUMN ") + len("COLUMN ") + 1
    assert f":1:{at}: error: COLUMN does not name the model's inputs: sepal_length (the " in err
    assert "hint: name them in the model's order: COLUMN sl, sw, pl, pw" in err
    renamed = (
        "SELECT sepal_length AS sl, sepal_width AS sw, petal_length AS pl, petal_width AS pw "
        f"FROM iris_train TO IMPORT 'named.json' COLUMN sl, sw, pl, pw INTO {unique_name};"
    )
    status, err = run_program(tmp_path, iris_duckdb_url, renamed, capsys)
    assert status == 0, err


def _refusal(tmp_path: Path, url: str, file: str, capsys, columns: str = COLUMNS) -> str:
    status, err = run_program(
        tmp_path,
        url,
        f"SELECT {COLUMNS} FROM iris_train\n  TO IMPORT '{file}' COLUMN {columns} INTO refused;",
        capsys,
    )
    assert status == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert "hint: " in err
    return err


def _external_data(folder: Path) -> str:
    from onnx import TensorProto, helper, numpy_helper
    from onnx.external_data_helper import convert_model_to_external_data

    weights = numpy_helper.from_array(np.ones((4, 1), np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])],
        "linear",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 1])],
        [weights],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    convert_model_to_external_data(model, location="weights.bin", size_threshold=0)
    onnx.save_model(model, str(folder / "external.onnx"))
    assert (folder / "weights.bin").exists()
    return "external.onnx"


def _custom_operator(folder: Path) -> str:
    from onnx import TensorProto, helper

    node = helper.make_node("Mystery", ["X"], ["Y"], domain="com.example")
    graph = helper.make_graph(
        [node],
        "custom",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 1])],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    (folder / "custom.onnx").write_bytes(
        helper.make_model(graph, opset_imports=opsets).SerializeToString()
    )
    return "custom.onnx"


def _pickle_as_skops(folder: Path) -> str:
    (folder / "pickled.skops").write_bytes(pickle.dumps(_logistic()))
    return "pickled.skops"


def _outside_allow_list(folder: Path) -> str:
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    _, x, y = iris(False)
    skops_io.dump(make_pipeline(StandardScaler(), _logistic()).fit(x, y), folder / "scaled.skops")
    return "scaled.skops"


def _xgboost_child(folder: Path) -> str:
    document = json.loads(make("xgboost_json", folder).file.read_text())
    tree = document["learner"]["gradient_booster"]["model"]["trees"][0]
    tree["left_children"][0] = 1000
    (folder / "child.json").write_text(json.dumps(document))
    return "child.json"


def _lightgbm_child(folder: Path) -> str:
    text = make("lightgbm", folder).file.read_text()
    tree = text.index("Tree=0")
    start = text.index("left_child=", tree) + len("left_child=")
    old = "-1" if text[start] == "-" else text[start]  # replaced in place: tree_sizes hold
    assert text[start : start + len(old)] == old and text[start + len(old)] == " "
    new = "-9" if old == "-1" else "9"
    (folder / "child.txt").write_text(text[:start] + new + text[start + len(old) :])
    return "child.txt"


@pytest.mark.parametrize(
    ("make_file", "said"),
    [
        (_pickle_as_skops, "pickled.skops is a Python pickle, which runs code as it loads"),
        (_outside_allow_list, "StandardScaler, which sqlml does not load"),
        (_external_data, "is kept in another file (external data), which sqlml does not read"),
        (_custom_operator, "domain 'com.example', which onnxruntime does not know"),
        (_xgboost_child, "tree 0, node 0: its children are not nodes of the tree"),
        (_lightgbm_child, "tree 0 links to a node or leaf it does not have"),
    ],
    ids=[
        "pickle",
        "skops-type",
        "onnx-external",
        "onnx-custom-op",
        "xgboost-child",
        "lightgbm-child",
    ],
)
def test_files_that_would_run_code_or_crash_are_refused(
    make_file, said, iris_duckdb_url, tmp_path, capsys
):
    err = _refusal(tmp_path, iris_duckdb_url, make_file(tmp_path), capsys)
    assert re.search(r"program\.sql:2:13: error: ", err), err
    assert said in err, err


@pytest.mark.parametrize("kind", ["onnx", "xgboost_json", "xgboost_ubj", "lightgbm", "skops"])
@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_damaged_files_are_refused(kind, damage, iris_duckdb_url, tmp_path, capsys):
    file = make(kind, tmp_path).file
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"\x07garbage" * 50)
    err = _refusal(tmp_path, iris_duckdb_url, file.name, capsys)
    assert re.search(r"program\.sql:2:13: error: the .* model file is not imported: ", err), err


def test_columns_must_fit_the_model_and_the_select(iris_duckdb_url, tmp_path, capsys):
    made = make("onnx", tmp_path)
    at = len(f"  TO IMPORT '{made.file.name}' COLUMN ") + 1
    err = _refusal(tmp_path, iris_duckdb_url, made.file.name, capsys, "sepal_length, sepal_width")
    assert f"program.sql:2:{at}: error: the model reads 4 inputs, but COLUMN names 2" in err
    err = _refusal(
        tmp_path, iris_duckdb_url, made.file.name, capsys, "sepal_length, sepal_width, x, y"
    )
    assert f"program.sql:2:{at}: error: COLUMN names x, y, which the SELECT does not return" in err


def test_the_format_is_told_by_the_content_or_named(iris_duckdb_url, tmp_path, capsys):
    made = make("lightgbm", tmp_path)
    made.file.rename(tmp_path / "model.bin")
    second = f"SELECT {COLUMNS} FROM iris_train TO IMPORT 'model.bin' WITH format = onnx "
    status, err = run_program(
        tmp_path,
        iris_duckdb_url,
        f"SELECT {COLUMNS} FROM iris_train TO IMPORT 'model.bin' COLUMN {COLUMNS} INTO m;\n"
        f"{second}COLUMN {COLUMNS} INTO n;",
        capsys,
    )
    assert "imported m version 1 (lightgbm) from model.bin (lightgbm)" in err
    at = second.index("'model.bin'") + 1
    assert status == 1 and f"program.sql:2:{at}: error: the ONNX model file is not imported" in err


def test_an_unknown_format_is_an_error_at_the_attribute(iris_duckdb_url, tmp_path, capsys):
    text = f"SELECT {COLUMNS} FROM iris_train TO IMPORT 'm.pkl' WITH format = pickle "
    status, err = run_program(tmp_path, iris_duckdb_url, f"{text}COLUMN {COLUMNS} INTO m;", capsys)
    assert status == 1
    at = text.index("format") + 1
    assert f":1:{at}: error: TO IMPORT reads no model files of format 'pickle'" in err
    assert "hint: the formats are " in err and "onnx" in err


def test_the_editor_without_file_access_refuses_to_import(iris_duckdb_url, tmp_path):
    from starlette.testclient import TestClient

    from sqlml.ui.server import create_app
    from sqlml.ui.settings import Settings

    made = make("onnx", tmp_path)
    program = f"SELECT {COLUMNS} FROM iris_train TO IMPORT '{made.file}' COLUMN {COLUMNS} INTO m;"
    for access in (False, True):
        settings = Settings(iris_duckdb_url, tmp_path / "runs", tmp_path, file_access=access)
        with TestClient(create_app(settings)) as ui:
            answer = ui.post("/editor/run", json={"sql": program}).json()
            page = ui.get("/models/m")
        shown = " ".join(re.sub(r"<[^>]+>", " ", answer["html"]).split())
        if access:
            assert answer["ok"] and "imported m version 1" in shown, shown
            assert page.status_code == 200 and "sepal_length" in page.text  # its page
        else:
            assert not answer["ok"] and "may not read this machine&#39;s files" in shown, shown


def _first_tree(text: str, key: str, value: str) -> str:
    """``text`` with ``key`` of its first tree of 4 leaves set to ``value``, its tree_sizes
    line left out (so that the trees' own checks, not the sizes', meet the change)."""
    text = re.sub(r"^tree_sizes=.*\n", "", text, flags=re.MULTILINE)
    start = re.search(r"^Tree=\d+\nnum_leaves=4\n", text, flags=re.MULTILINE).start()
    end = text.index("\n\n", start)
    tree = re.sub(rf"^{key}=.*$", f"{key}={value}", text[start:end], flags=re.MULTILINE)
    return text[:start] + tree + text[end:]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda t: _first_tree(t, "split_feature", "9 0 1"), "splits on feature index 9"),
        (lambda t: _first_tree(t, "left_child", "0 -1 -2"), "links to a node or leaf"),
        (lambda t: _first_tree(t, "left_child", "-2 -2 -3"), "links a node or leaf twice"),
        (lambda t: _first_tree(t, "right_child", "1 1 -4"), "links a node or leaf twice"),
        (lambda t: _first_tree(t, "num_leaves", "5"), "does not hold 5 finite leaf values"),
        (lambda t: _first_tree(t, "leaf_value", "1 2 nan 4"), "does not hold 4 finite leaf"),
        (lambda t: _first_tree(t, "decision_type", "1 2 2"), "has a categorical or malformed"),
        (lambda t: _first_tree(t, "num_cat", "1"), "has categorical splits"),
        (lambda t: _first_tree(t, "threshold", "1 2"), "does not hold an entry of each array"),
        (lambda t: t.replace("Tree=1\n", "Tree=7\n"), "its tree 1 is named 'Tree=7'"),
        (lambda t: _first_tree(t, "shrinkage", "1\nleaf_coeff=1"), "holds 'leaf_coeff', which"),
        (lambda t: t.replace("end of trees", "end of tree"), "it is cut short"),
        (lambda t: re.sub(r"tree_sizes=(\d+)", r"tree_sizes=9\1", t), "tree_sizes do not"),
        (lambda t: t.replace("max_feature_idx=3", "max_feature_idx=99"), "feature_names or"),
        (lambda t: t.replace(" num_class:3", " num_class:5"), "objective's num_class is not"),
        (lambda t: t.replace("num_tree_per_iteration=3", "num_tree_per_iteration=2"), "neither"),
    ],
)
def test_lightgbm_trees_are_checked_before_lightgbm_reads_them(change, said, tmp_path):
    params = {"objective": "multiclass", "num_class": 3, "num_leaves": 4, "verbose": -1}
    _, x, y = iris(False)
    text = lightgbm.train(
        {**params, "min_data_in_leaf": 5},
        lightgbm.Dataset(x.astype(np.float64), _ids(y)),
        num_boost_round=2,
    ).model_to_string()
    assert re.search(r"\nnum_leaves=4\n", text)  # a tree of 4 leaves, which the changes assume
    assert text_problem(text.encode()) is None
    assert text_problem(re.sub(r"^tree_sizes=.*\n", "", text, flags=re.MULTILINE).encode()) is None
    changed = change(text)
    assert changed != text
    found = text_problem(changed.encode())
    assert found is not None and said in found, found


def _linear_onnx(folder: Path, weights: np.ndarray) -> Path:
    """An ONNX regressor of one input a column, named as iris's measures: the rows' measures
    times ``weights``, plus 0.5."""
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [
            helper.make_node("Concat", MEASURES, ["X"], axis=1),
            helper.make_node("MatMul", ["X", "W"], ["XW"]),
            helper.make_node("Add", ["XW", "B"], ["Y"]),
        ],
        "linear",
        [helper.make_tensor_value_info(m, TensorProto.FLOAT, [None, 1]) for m in MEASURES],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 1])],
        [
            numpy_helper.from_array(weights.reshape(4, 1).astype(np.float32), "W"),
            numpy_helper.from_array(np.array([0.5], np.float32), "B"),
        ],
    )
    file = folder / "linear.onnx"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    file.write_bytes(model.SerializeToString())
    return file


@pytest.mark.parametrize("kind", ["onnx", "skops"])
def test_an_imported_regressor_predicts_what_its_library_does(
    kind, iris_duckdb_url, unique_name, tmp_path, capsys
):
    _, x, _ = iris(False)
    ids, test_x, _ = iris(True)
    if kind == "onnx":
        file = _linear_onnx(tmp_path, np.array([0.25, -0.5, 1.0, 2.0]))
        session = onnxruntime.InferenceSession(str(file), providers=["CPUExecutionProvider"])
        feed = {m: test_x[:, i : i + 1] for i, m in enumerate(MEASURES)}
        expected = session.run(None, feed)[0][:, 0]
    else:
        from sklearn.ensemble import RandomForestRegressor

        model = RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0)
        model.fit(x[:, :3].astype(np.float64), x[:, 3])
        file = tmp_path / "forest.skops"
        skops_io.dump(model, file)
        expected = model.predict(test_x[:, :3].astype(np.float64))
    columns = COLUMNS if kind == "onnx" else ", ".join(MEASURES[:3])
    status, err = run_program(
        tmp_path,
        iris_duckdb_url,
        f"SELECT * FROM iris_train TO IMPORT '{file.name}' COLUMN {columns} "
        f"LABEL petal_width INTO {unique_name};\n"
        f"SELECT * FROM iris_test TO PREDICT {unique_name}_p.petal_width USING {unique_name};",
        capsys,
    )
    assert status == 0, err
    assert "predicts values" in err
    rows = fetch_rows(iris_duckdb_url, f"SELECT id, petal_width FROM {unique_name}_p ORDER BY id")
    assert [r[0] for r in rows] == ids.tolist()
    assert_close([r[1] for r in rows], expected.tolist())


def test_an_onnx_model_of_named_inputs_must_be_named_by_column(iris_duckdb_url, tmp_path, capsys):
    file = _linear_onnx(tmp_path, np.ones(4))
    shuffled = ", ".join(reversed(MEASURES))
    err = _refusal(tmp_path, iris_duckdb_url, file.name, capsys, shuffled)
    assert (
        "error: COLUMN does not name the model's inputs: petal_width (the model's input 1 " in err
    )
    assert f"hint: name them in the model's order: COLUMN {COLUMNS} " in err


@pytest.mark.parametrize(
    ("family_name", "library", "said"),
    [
        ("onnx", "onnxruntime", "ONNX models need onnxruntime, which is not installed"),
        ("onnx", "onnx", "ONNX models need onnx, which is not installed"),
        ("lightgbm", "lightgbm", "LightGBM models need lightgbm, which is not installed"),
    ],
)
def test_without_the_import_extra_the_error_names_it(family_name, library, said, monkeypatch):
    for module in ("model", "checks"):
        monkeypatch.delitem(sys.modules, f"sqlml.models.{family_name}.{module}", raising=False)
    monkeypatch.setitem(sys.modules, library, None)
    with pytest.raises(ModelError, match=said) as raised:
        family(family_name).trainer()
    assert raised.value.hint == "pip install 'sqlml[import]'"


def test_a_program_that_imports_loads_no_model_library_to_be_checked(tmp_path):
    program = tmp_path / "import.sql"
    program.write_text(
        f"SELECT {COLUMNS} FROM t TO IMPORT 'm.onnx' COLUMN {COLUMNS} LABEL class INTO m;\n"
        "SELECT * FROM t TO PREDICT p.class USING m;\n"
    )
    libraries = ("onnx", "onnxruntime", "lightgbm", "skl2onnx", "onnxmltools", "xgboost")
    code = (
        "import sys\n"
        "from sqlml.cli import main\n"
        f"status = main(['check', {str(program)!r}])\n"
        f"print(sorted(m for m in {libraries!r} if m in sys.modules), status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.splitlines()[-1] == "[] 0", done.stdout + done.stderr
