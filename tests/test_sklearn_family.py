"""The scikit-learn family: each estimator trains, predicts, evaluates and explains on every
database; its names, attributes and checks; its models stored in skops's format."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import import_or_skip

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError, ModelError
from sqlml.grammar import parse
from sqlml.models.sklearn.checks import skops_archive
from sqlml.models.store import ModelStore
from sqlml.semantics import analyze
from sqlml.semantics.estimators import find_estimator

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
FLAG = "CASE WHEN class = 'setosa' THEN 1 ELSE -1 END AS flag"


@pytest.fixture(autouse=True)
def _sklearn():
    import_or_skip("sklearn")
    import_or_skip("skops")


def run(url: str, program: str, capsys) -> str:
    status = main(["-e", program, "--datasource", url])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    return out + err


def rows(url: str, sql: str) -> list[tuple]:
    ds = connect(url)
    try:
        return ds.execute(sql).rows
    finally:
        ds.close()


def metric(url: str, table: str, name: str) -> float:
    ds = connect(url)
    try:
        result = ds.execute(f"SELECT * FROM {ds.quote([table])}")
    finally:
        ds.close()
    return float(result.rows[0][result.columns.index(name)])


def program(p: str) -> str:
    """Every estimator trained on iris_train, then predicting, evaluated and explained on
    iris_test (KMeans on all 150 flowers; the outlier detectors learn the setosas)."""
    both = " UNION ALL ".join(
        f"SELECT {MEASURES}, class FROM {t}" for t in ("iris_train", "iris_test")
    )
    regression = "SELECT sepal_length, sepal_width, petal_length, petal_width AS width FROM"
    classifiers = {
        "rf": "ensemble.RandomForestClassifier",
        "logit": "linear_model.LogisticRegression",
    }
    regressors = {"rfr": "ensemble.RandomForestRegressor", "ols": "linear_model.LinearRegression"}
    outliers = {"iso": "ensemble.IsolationForest", "svm": "svm.OneClassSVM"}
    settings = {
        "rf": "model.n_estimators = 30, model.max_depth = 5, train.seed = 1",
        "logit": "model.C = 10.0, model.max_iter = 500",
        "rfr": "model.n_estimators = 20, model.min_samples_leaf = 2",
        "ols": "model.fit_intercept = TRUE",
        "iso": "model.n_estimators = 50, model.contamination = 0.05",
        "svm": "model.nu = 0.05, model.gamma = 0.2",
    }
    parts = []
    for name, estimator in classifiers.items():
        parts += [
            f"SELECT {MEASURES}, class FROM iris_train TO TRAIN sklearn.{estimator} "
            f"WITH {settings[name]} LABEL class INTO {p}_{name};",
            f"SELECT id, {MEASURES} FROM iris_test "
            f"TO PREDICT {p}_{name}_out.class USING {p}_{name};",
            f"SELECT {MEASURES}, class FROM iris_test TO EVALUATE {p}_{name} LABEL class "
            f"INTO {p}_{name}_eval;",
        ]
    for name, estimator in regressors.items():
        parts += [
            f"{regression} iris_train TO TRAIN sklearn.{estimator} WITH {settings[name]} "
            f"LABEL width INTO {p}_{name};",
            f"SELECT id, sepal_length, sepal_width, petal_length FROM iris_test "
            f"TO PREDICT {p}_{name}_out.width USING {p}_{name};",
            f"{regression} iris_test TO EVALUATE {p}_{name} LABEL width INTO {p}_{name}_eval;",
        ]
    for name, estimator in outliers.items():
        parts += [
            f"SELECT {MEASURES} FROM iris_train WHERE class = 'setosa' "
            f"TO TRAIN sklearn.{estimator} WITH {settings[name]} INTO {p}_{name};",
            f"SELECT id, {MEASURES} FROM iris_test "
            f"TO PREDICT {p}_{name}_out.flag USING {p}_{name};",
            f"SELECT {MEASURES}, {FLAG} FROM iris_test TO EVALUATE {p}_{name} LABEL flag "
            f"INTO {p}_{name}_eval;",
        ]
    parts += [
        f"SELECT {MEASURES} FROM ({both}) AS t TO TRAIN sklearn.cluster.KMeans "
        f"WITH model.n_clusters = 3, model.n_init = 10 INTO {p}_km;",
        f"SELECT * FROM ({both}) AS t TO PREDICT {p}_km_out.cluster USING {p}_km;",
    ]
    for name in [*classifiers, *outliers, "km"]:
        parts.append(f"SELECT {MEASURES} FROM iris_test TO EXPLAIN {p}_{name} INTO {p}_{name}_x;")
    for name in regressors:
        parts.append(
            f"SELECT sepal_length, sepal_width, petal_length FROM iris_test "
            f"TO EXPLAIN {p}_{name} INTO {p}_{name}_x;"
        )
    return "\n".join(parts)


def test_each_estimator_trains_predicts_evaluates_and_explains(iris_url, unique_name, capsys):
    from sklearn.metrics import adjusted_rand_score

    p = unique_name
    run(iris_url, program(p), capsys)
    truth = dict(rows(iris_url, "SELECT id, class FROM iris_test"))
    for name in ("rf", "logit"):  # held-out flowers' species
        found = dict(rows(iris_url, f"SELECT id, class FROM {p}_{name}_out"))
        assert np.mean([found[i] == c for i, c in truth.items()]) >= 0.9, name
        assert metric(iris_url, f"{p}_{name}_eval", "accuracy") >= 0.9, name
    width = dict(rows(iris_url, "SELECT id, petal_width FROM iris_test"))
    for name in ("rfr", "ols"):
        found = dict(rows(iris_url, f"SELECT id, width FROM {p}_{name}_out"))
        assert np.mean([abs(found[i] - w) for i, w in width.items()]) < 0.25, name
        assert metric(iris_url, f"{p}_{name}_eval", "r2") >= 0.85, name
    for name in ("iso", "svm"):  # setosas are inliers (1), the others outliers (-1)
        found = dict(rows(iris_url, f"SELECT id, flag FROM {p}_{name}_out"))
        expected = {i: 1 if c == "setosa" else -1 for i, c in truth.items()}
        assert set(found.values()) <= {1, -1}
        assert np.mean([found[i] == e for i, e in expected.items()]) >= 0.9, name
        assert metric(iris_url, f"{p}_{name}_eval", "accuracy") >= 0.9, name
    clusters = rows(iris_url, f"SELECT class, cluster FROM {p}_km_out")
    assert len(clusters) == 150
    species, found = zip(*clusters, strict=True)
    assert adjusted_rand_score(species, found) >= 0.7
    ds = connect(iris_url)
    try:
        km = ModelStore(ds).load(f"{p}_km").metadata
    finally:
        ds.close()
    assert km["format"] == "skops" and km["family"] == "sklearn"
    assert km["metrics"]["silhouette"] > 0.5
    for name in ("rf", "logit", "iso", "svm", "km"):
        explained = rows(iris_url, f"SELECT feature, importance FROM {p}_{name}_x")
        assert {f for f, _ in explained} == set(MEASURES.split(", ")), name
        assert any(importance > 0 for _, importance in explained), name
    for name in ("rfr", "ols"):
        explained = dict(rows(iris_url, f"SELECT feature, importance FROM {p}_{name}_x"))
        assert max(explained, key=explained.get) == "petal_length", name
    ds = connect(iris_url)
    names = ["rf", "logit", "rfr", "ols", "iso", "svm", "km"]
    for name in names:
        for suffix in ("", "_out", "_eval", "_x"):
            ds.execute(f"DROP TABLE IF EXISTS {ds.quote([f'{p}_{name}{suffix}'])}")
    ds.close()
    for name in names:
        run(iris_url, f"DROP MODEL IF EXISTS {p}_{name};", capsys)


# Names, attributes and checks -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("sklearn.cluster.KMeans", "sklearn"),
        ("KMeans", "cluster"),  # sqlml's own k-means
        ("sklearn.svm.OneClassSVM", "sklearn"),
        ("sqlflow_models.OneClassSVM", "outlier"),  # SQLFlow's zoo name
        ("SKLEARN.ENSEMBLE.RANDOMFORESTCLASSIFIER", "sklearn"),
    ],
)
def test_the_import_paths_do_not_clash_with_sqlml_or_sqlflow_names(name, family):
    estimator = find_estimator(name)
    assert estimator is not None and estimator.family == family


def test_a_short_name_is_refused_with_the_import_path_as_hint():
    with pytest.raises(CheckError, match=r"unknown estimator sklearn\.KMeans") as raised:
        analyze(parse("SELECT * FROM t TO TRAIN sklearn.KMeans INTO m;"))
    assert "did you mean sklearn.cluster.KMeans?" in str(raised.value.hint)


def test_unknown_and_ill_typed_attributes_are_refused_with_hints():
    forest = "SELECT * FROM t TO TRAIN sklearn.ensemble.RandomForestClassifier"
    with pytest.raises(CheckError, match=r"model\.n_estimator") as raised:
        analyze(parse(f"{forest} WITH model.n_estimator = 5 LABEL y INTO m;"))
    assert "model.n_estimators" in str(raised.value.hint)
    with pytest.raises(CheckError, match="must be one of 'gini', 'entropy', 'log_loss'"):
        analyze(parse(f"{forest} WITH model.criterion = 'mse' LABEL y INTO m;"))
    with pytest.raises(CheckError, match="must be > 0"):
        analyze(parse("SELECT * FROM t TO TRAIN sklearn.svm.OneClassSVM WITH model.nu = 0 INTO m;"))


def test_label_is_refused_by_the_unsupervised_ones_and_needed_by_the_others():
    with pytest.raises(CheckError, match="learns without a LABEL"):
        analyze(parse("SELECT * FROM t TO TRAIN sklearn.ensemble.IsolationForest LABEL y INTO m;"))
    with pytest.raises(CheckError, match="needs a LABEL"):
        analyze(parse("SELECT * FROM t TO TRAIN sklearn.linear_model.LinearRegression INTO m;"))


def test_the_class_is_fixed_and_attributes_become_scikit_learn_parameters():
    (statement,) = analyze(
        parse(
            "SELECT * FROM t TO TRAIN sklearn.ensemble.IsolationForest "
            "WITH model.n_estimators = 7, train.seed = 3 INTO m;"
        )
    )
    from sqlml.models.sklearn.estimators import parameters

    assert statement.attributes["model.class"] == "sklearn.ensemble.IsolationForest"
    found = parameters(statement.attributes)
    assert found["n_estimators"] == 7 and found["random_state"] == 3
    assert "contamination" not in found  # scikit-learn's default, 'auto'
    assert parameters({"model.max_features": "all"}) == {"max_features": None}


def test_checking_a_program_imports_no_scikit_learn(tmp_path):
    sql = tmp_path / "p.sql"
    sql.write_text(
        "SELECT 1 AS x TO TRAIN sklearn.cluster.KMeans WITH model.n_clusters = 1 INTO m;\n"
        "SELECT 1 AS x TO PREDICT p.c USING m;\n"
    )
    code = (
        "import sys\n"
        "from sqlml.cli import main\n"
        f"status = main(['check', {str(sql)!r}])\n"
        "print(sorted(m for m in ('sklearn', 'skops') if m in sys.modules), status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.splitlines()[-1] == "[] 0", done.stdout + done.stderr


def test_without_the_extra_training_names_it(monkeypatch):
    from sqlml.models import family

    monkeypatch.delitem(sys.modules, "sqlml.models.sklearn.model", raising=False)
    monkeypatch.setitem(sys.modules, "skops", None)
    with pytest.raises(ModelError, match="need skops, which is not installed") as raised:
        family("sklearn").trainer()
    assert raised.value.hint == "pip install 'sqlml[sklearn]'"


# Training and storage --------------------------------------------------------------------------


@pytest.fixture
def blobs(duckdb_url):
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(0, 0.3, 30), rng.normal(5, 0.3, 30)])
    y = rng.normal(0, 0.3, 60)
    ds = connect(duckdb_url)
    ds.write_table(["blobs"], {"x": x, "y": y, "k": np.repeat([0, 1], 30)}, replace=True)
    ds.close()
    return duckdb_url


def test_a_null_feature_is_imputed_and_a_base_model_refused(blobs, capsys):
    run(
        blobs,
        "SELECT x, y FROM blobs TO TRAIN sklearn.cluster.KMeans WITH model.n_clusters = 2 INTO km;",
        capsys,
    )
    run(
        blobs,
        "SELECT 5.1 AS x, NULL AS y UNION ALL SELECT -0.2, 0.1 TO PREDICT p.c USING km;",
        capsys,
    )
    found = [c for (c,) in rows(blobs, "SELECT c FROM p")]
    assert len(set(found)) == 2
    status = main(
        ["-e", "SELECT x, y FROM blobs TO TRAIN sklearn.cluster.KMeans USING km INTO again;",
         "--datasource", blobs]
    )  # fmt: skip
    assert status == 1
    assert "trains anew" in capsys.readouterr().err


def test_the_model_is_a_skops_archive_that_exports_as_stored(blobs, capsys, tmp_path):
    import skops.io

    run(
        blobs,
        "SELECT x, y, k FROM blobs "
        "TO TRAIN sklearn.linear_model.LogisticRegression LABEL k INTO lr;",
        capsys,
    )
    ds = connect(blobs)
    stored = ModelStore(ds).load("lr")
    ds.close()
    assert not stored.data.startswith(b"\x80")  # no pickle
    with zipfile.ZipFile(io.BytesIO(stored.data)) as archive:
        schema = json.loads(archive.read("schema.json"))
    assert schema["__class__"] == "Pipeline"
    file = tmp_path / "lr.skops"
    assert main(["export", "lr", str(file), "--datasource", blobs]) == 0
    assert file.read_bytes() == stored.data
    reviewed = skops.io.get_untrusted_types(file=file)
    assert set(reviewed) <= {"numpy.dtype"}
    pipeline = skops.io.load(file, trusted=reviewed)
    assert pipeline.predict(np.array([[5.0, 0.0], [0.0, 0.0]])).tolist() == [1, 0]


def _archive(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _node(module: str, name: str, loader: str = "ObjectNode", **more) -> dict:
    return {"__module__": module, "__class__": name, "__loader__": loader, **more}


PIPELINE = _node("sklearn.pipeline", "Pipeline", content={})


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"\x80\x04pickle", "not a skops archive"),
        (_archive({"x.py": b""}), "holds 'x.py'"),
        (_archive({"schema.json": b"{}" * 99}, zipfile.ZIP_DEFLATED), "compressed"),
        (_archive({"1.npy": b""}), "has no schema.json"),
        (_archive({"schema.json": b"[" * 100 + b"]" * 100}), "nests more than"),
        (_archive({"schema.json": json.dumps(_node("os", "system")).encode()}), "names os.system"),
        (
            _archive(
                {"schema.json": json.dumps(_node("builtins", "eval", "FunctionNode")).encode()}
            ),
            "names builtins.eval",
        ),
        (
            _archive({"schema.json": json.dumps(_node("builtins", "dict", "ReduceNode")).encode()}),
            "loads builtins.dict with ReduceNode",
        ),
        (
            _archive(
                {
                    "schema.json": json.dumps(
                        _node("numpy", "ndarray", "NdArrayNode", type="numpy", file="9.npy")
                    ).encode()
                }
            ),
            "an array it does not hold",
        ),
        (
            _archive({"schema.json": json.dumps(_node("builtins", "dict", "DictNode")).encode()}),
            "does not hold a",
        ),
        (
            _archive(
                {
                    "schema.json": json.dumps(
                        {**PIPELINE, "content": _node("sklearn.svm._classes", "OneClassSVM")}
                    ).encode()
                }
            ),
            "holds sklearn.svm._classes.OneClassSVM, not the sklearn.cluster.KMeans",
        ),
    ],
)
def test_an_archive_is_checked_before_skops_reads_it(data, why):
    with pytest.raises(ModelError, match="the stored scikit-learn model is not loaded") as raised:
        skops_archive(data, "sklearn.cluster.KMeans")
    assert why in raised.value.message


def _tree(left: list[int], right: list[int], feature: list[int]) -> SimpleNamespace:
    state = SimpleNamespace(
        node_count=len(left),
        children_left=np.array(left),
        children_right=np.array(right),
        feature=np.array(feature),
        value=np.zeros((len(left), 1, 1)),
    )
    return SimpleNamespace(tree_=state, n_features_in_=2)


def test_a_forest_tree_linking_nodes_or_features_it_lacks_is_refused():
    from sqlml.models.sklearn.model import _check_tree

    _check_tree(_tree([1, -1, -1], [2, -1, -1], [1, -2, -2]))
    for broken in (
        _tree([1, -1, -1], [5, -1, -1], [1, -2, -2]),  # a child beyond the nodes
        _tree([0, -1, -1], [2, -1, -1], [1, -2, -2]),  # a loop to the root
        _tree([1, -1, -1], [2, -1, -1], [2, -2, -2]),  # a third feature of two
        _tree([1, -1, -1], [2, -1, -1], [-2, -2, -2]),  # a split on no feature
        _tree([1, 2, -1, -1], [2, 1, -1, -1], [1, 0, -2, -2]),  # a link back: a loop
        _tree([1, -1, -1], [-1, -1, -1], [1, -2, -2]),  # a left child only
        _tree([1, -1, -1], [1, -1, -1], [1, -2, -2]),  # one child linked twice
        _tree([], [], []),  # no nodes: the state of a tree replaced by {}
    ):
        with pytest.raises(ModelError, match="links nodes or features it does not have"):
            _check_tree(broken)
