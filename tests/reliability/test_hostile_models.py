"""Hostile models planted in the models tables: each is refused with a ModelError before the
library reads it, and does no harm (no crash, no memory blow-up, no file written).

1. XGBoost: a tampered number of features (4,000,000,000: 23 GB when predicting), classes or
   objective that do not match the metadata, documents nested 200,000 levels deep (XGBoost's
   parser recurses: a segfault), malformed UBJSON, models larger than sqlml loads.
2. Keras: a zip bomb, a header that lies about a member's size, unknown, duplicate or
   traversing members, a truncated or corrupted archive, a configuration nested too deep,
   Lambda layers in disguise, weights that inflate or link elsewhere; sqlml's own models and
   user builders of built-in layers still load.
3. `sqlml export` checks as loading does, and writes nothing for a refused model.
4. Damaged metadata (not JSON, keys missing): SHOW MODELS still lists every model; using the
   damaged one names it, its version and what to do, on every database.

The cases that crashed or exhausted memory run ``sqlml`` in a child process under a 2 GiB
address-space limit: the test sees its exit status, not a dead pytest.
"""

from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import time
import tracemalloc
import zipfile

import numpy as np
import pytest
import xgboost as xgb
from conftest import KINDS, datasource_url

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import ModelError
from sqlml.models import store as model_store
from sqlml.models.keras.checks import foreign, keras_archive
from sqlml.models.store import ModelStore
from sqlml.models.xgboost.checks import xgboost_document
from sqlml.statements.model_admin.handler import UNREADABLE

DEEP = 200_000
HINT = "hint: train the model again; if you did not store it, check who can write the models"


def sqlml(capfd, *args: str) -> tuple[int, str]:
    status = main(list(args))
    out, err = capfd.readouterr()
    return status, out + err


def child(*args: str) -> subprocess.CompletedProcess:
    """``sqlml *args`` in a child process limited to 2 GiB of address space."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [sys.executable, "-m", "sqlml", *args],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=600,  # a deadlock guard
    )


def assert_refused(status: int, output: str, *parts: str) -> None:
    assert status == 1, output
    for part in parts:
        assert part in output, output
    assert "hint: " in output and "Traceback" not in output, output


@pytest.fixture
def good(tmp_path, capfd):
    """A DuckDB database with table d (x1, x2, a label y of three classes) and the model
    ``good`` (multi:softprob) trained on it: (url, its stored model)."""
    url = f"duckdb:///{tmp_path / 'models.duckdb'}"
    program = (
        "CREATE TABLE d AS SELECT i AS x1, i % 7 AS x2, chr((97 + i % 3)::INTEGER) AS y "
        "FROM range(30) t(i);"
        "SELECT x1, x2, y FROM d TO TRAIN xgboost.gbtree WITH train.num_boost_round = 2 "
        "LABEL y INTO good;"
    )
    status, output = sqlml(capfd, "-e", program, "--datasource", url)
    assert status == 0, output
    ds = connect(url)
    stored = ModelStore(ds).load("good")
    ds.close()
    return url, stored


def plant(url: str, name: str, metadata: dict, data: bytes) -> None:
    ds = connect(url)
    ModelStore(ds).save(name, metadata, data)
    ds.close()


def as_json(data: bytes) -> dict:
    booster = xgb.Booster()
    booster.load_model(bytearray(data))
    return json.loads(bytes(booster.save_raw("json")))


# 1. XGBoost -----------------------------------------------------------------------------------


def test_a_tampered_number_of_features_is_refused_before_predicting(good, capfd, tmp_path):
    url, stored = good
    document = as_json(stored.data)
    document["learner"]["learner_model_param"]["num_feature"] = "4000000000"
    plant(url, "wide", stored.metadata, json.dumps(document).encode())
    refused = "it takes 4,000,000,000 features, but its feature columns make at most 2"
    for args in (
        ("-e", "SELECT x1, x2 FROM d TO PREDICT p.y USING wide;"),
        ("-e", "SELECT x1, x2 FROM d TO EXPLAIN wide;"),
        ("export", "wide", str(tmp_path / "wide.json")),
    ):
        done = child(*args, "--datasource", url)
        assert_refused(done.returncode, done.stdout + done.stderr, refused, HINT)
    for statement in (
        "SELECT x1, x2, y FROM d TO EVALUATE wide LABEL y INTO e;",
        "SELECT x1, x2, y FROM d TO TRAIN xgboost.gbtree LABEL y USING wide INTO wider;",
    ):
        assert_refused(*sqlml(capfd, "-e", statement, "--datasource", url), "takes 4,000,000,000")
    assert not (tmp_path / "wide.json").exists()
    ds = connect(url)
    assert not ds.table_exists(["p"]) and not ds.table_exists(["e"])
    ds.close()


def test_a_booster_that_does_not_match_its_metadata_is_refused(good, capfd):
    url, stored = good
    params = stored.metadata["params"]
    plant(url, "classes", {**stored.metadata, "params": {**params, "num_class": 5}}, stored.data)
    other = {**params, "objective": "multi:softmax"}
    plant(url, "objective", {**stored.metadata, "params": other}, stored.data)
    for model, wrong in (("classes", "num_class 3, not 5"), ("objective", "objective")):
        statement = f"SELECT x1, x2 FROM d TO PREDICT p.y USING {model};"
        status, output = sqlml(capfd, "-e", statement, "--datasource", url)
        assert_refused(status, output, "does not match its metadata: it has", wrong)


def _deep_json() -> bytes:
    return b'{"learner":' + b"[" * DEEP + b"]" * DEEP + b"}"


def _deep_ubjson() -> bytes:
    key = b"L" + (7).to_bytes(8, "big") + b"learner"
    return b"{" + key + b"[" * DEEP + b"]" * DEEP + b"}"


def test_deeply_nested_documents_are_refused_without_a_crash(good, tmp_path):
    url, stored = good
    plant(url, "deep_json", stored.metadata, _deep_json())
    plant(url, "deep_ubj", stored.metadata, _deep_ubjson())
    for model in ("deep_json", "deep_ubj"):
        for args in (
            ("-e", f"SELECT x1, x2 FROM d TO PREDICT p.y USING {model};"),
            ("export", model, str(tmp_path / f"{model}.ubj")),
        ):
            done = child(*args, "--datasource", url)  # XGBoost's own parser would segfault
            output = done.stdout + done.stderr
            assert_refused(done.returncode, output, "nests more than 32 levels deep", HINT)
        assert not (tmp_path / f"{model}.ubj").exists()


def test_the_document_scan_accepts_real_models_quickly_and_refuses_malformed_ones():
    rng = np.random.default_rng(0)
    x, y = rng.random((2000, 20)), rng.integers(0, 3, 2000)
    params = {"objective": "multi:softprob", "num_class": 3, "max_depth": 8}
    booster = xgb.train(params, xgb.DMatrix(x, label=y), 100)
    for raw_format in ("ubj", "json"):
        data = bytes(booster.save_raw(raw_format))
        start = time.process_time()  # this process's: other processes' load left out
        xgboost_document(data)
        assert time.process_time() - start < 1.0, (raw_format, len(data))
    ubj = bytes(booster.save_raw("ubj"))
    cut = ubj[: len(ubj) // 2]
    typed = b"{" + b"L" + (1).to_bytes(8, "big") + b"a" + b"[$d#L" + (1 << 60).to_bytes(8, "big")
    for data, reason in (
        (cut, "malformed or cut short"),
        (ubj + b"Z", "bytes after the model"),
        (typed + b"}", "malformed or cut short"),  # a typed array longer than the document
        (b"{ }", "not in XGBoost's JSON or UBJSON format"),
        (b"\x80\x04pickle", "not in XGBoost's JSON or UBJSON format"),
    ):
        with pytest.raises(ModelError, match=reason):
            xgboost_document(data)


def test_models_larger_than_the_limit_are_neither_saved_nor_loaded(good, monkeypatch):
    url, stored = good
    ds = connect(url)
    store = ModelStore(ds)
    monkeypatch.setattr(model_store, "MAX_MODEL_BYTES", 100)
    with pytest.raises(ModelError, match="more than sqlml stores"):
        store.save("big", stored.metadata, b"x" * 101)
    monkeypatch.undo()
    ds.execute("UPDATE sqlml_model_versions SET size = 1099511627776 WHERE name = 'good'")
    with pytest.raises(ModelError, match="declares 1099511627776 bytes"):
        store.load("good")
    ds.close()


# 2. Keras -------------------------------------------------------------------------------------

CONFIG = {
    "module": "keras",
    "class_name": "Sequential",
    "config": {"name": "s", "layers": []},
    "registered_name": None,
}


def _archive(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return data.getvalue()


def _members(**extra: bytes) -> dict[str, bytes]:
    return {
        "config.json": json.dumps(CONFIG).encode(),
        "metadata.json": b'{"keras_version": "3.0.0"}',
        "model.weights.h5": b"not read here",
        **extra,
    }


def _bomb() -> bytes:
    """A .keras archive whose weights are 50 MB of zeros deflated to about 50 KB."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in _members().items():
            if name != "model.weights.h5":
                archive.writestr(name, content)
        with archive.open("model.weights.h5", "w") as member:
            for _ in range(50):
                member.write(bytes(1 << 20))
    return data.getvalue()


def _declare_size(data: bytes, name: str, size: int) -> bytes:
    """``data`` with the uncompressed size of member ``name`` changed in its local header
    and its central directory entry: a header that lies."""
    patched, encoded = bytearray(data), name.encode()
    for signature, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        at = patched.find(signature)
        while patched[at + name_at : at + name_at + len(encoded)] != encoded:
            at = patched.find(signature, at + 1)
        patched[at + size_at : at + size_at + 4] = size.to_bytes(4, "little")
    return bytes(patched)


def test_keras_archives_are_checked_before_keras_reads_them():
    tracemalloc.start()
    with pytest.raises(ModelError, match=r"compressed 52,428,800 to .* \(a zip bomb\?\)"):
        keras_archive(_bomb())
    assert tracemalloc.get_traced_memory()[1] < 20 << 20  # nothing was decompressed
    tracemalloc.stop()

    deflated = _archive(_members(**{"model.weights.h5": bytes(5 << 20)}), zipfile.ZIP_DEFLATED)
    with pytest.raises(ModelError, match="a zip bomb"):
        keras_archive(deflated)
    lying = _declare_size(deflated, "model.weights.h5", 4096)  # 4 KB declared, 5 MB inside
    with pytest.raises(ModelError, match="damaged or cut-short"):
        keras_archive(lying)

    good = _archive(_members())
    assert zipfile.ZipFile(io.BytesIO(keras_archive(good))).namelist() == list(_members())
    corrupted = bytearray(good)
    corrupted[good.index(b"not read here")] ^= 1  # a stored member's byte: a CRC mismatch
    with pytest.warns(UserWarning, match="Duplicate name"):
        data = io.BytesIO()
        with zipfile.ZipFile(data, "w") as archive:
            for name, content in [*_members().items(), ("config.json", b"{}")]:
                archive.writestr(name, content)
        duplicate = data.getvalue()
    cases = [
        (good[:-100], "damaged or cut-short"),
        (bytes(corrupted), "damaged or cut-short"),
        (good[: good.rindex(b"PK\x05\x06")], "damaged or cut-short"),  # no directory end
        (duplicate, "holds 'config.json' twice"),
        (_archive(_members(**{"evil.py": b"import os"})), "holds 'evil.py'"),
        (_archive(_members(**{"assets/../../x": b"x"})), "holds 'assets/../../x'"),
        (_archive({"metadata.json": b"{}"}), "it has no config.json"),
        (_archive(_members(**{"config.json": b"[" * DEEP + b"]" * DEEP})), "more than 64 levels"),
        (_archive(_members(**{"config.json": b"{not json"})), "config.json is not JSON"),
        (_archive({"config.json": json.dumps(CONFIG).encode()}), "it has no metadata.json"),
    ]  # fmt: skip
    for data, reason in cases:
        with pytest.raises(ModelError, match=reason.replace("(", r"\(").replace(")", r"\)")):
            keras_archive(data)


def _lambda_variants() -> list[dict]:
    code = {"class_name": "__lambda__", "config": {"code": "eA=="}}
    return [
        {"module": "keras", "class_name": "layers.Lambda", "config": {}, "registered_name": None},
        {"module": "keras.layers", "class_name": "Lambda", "config": {"function": code}},
        {"module": "keras.layers", "class_name": "TFOpLambda", "config": {}},
        {"module": "keras.layers", "class_name": "lambda", "config": {}},
        {"module": "keras.layers", "class_name": "Dense", "registered_name": "Lambda"},
        {"module": "keras.layers", "class_name": "Dense", "config": {"activation": code}},
    ]


def _foreign_objects() -> list[tuple[dict, str]]:
    function = {"class_name": "function", "registered_name": "function"}
    return [
        ({"module": "keras.src.saving.serialization_lib", "class_name": "X"}, "X (from keras"),
        ({"module": "keras_hub.layers", "class_name": "Dense"}, "Dense (from keras_hub"),
        ({"module": "builtins", "class_name": "Dense"}, "Dense (from builtins)"),
        ({"module": None, "class_name": "Dense"}, "Dense (from user code)"),
        ({"module": "keras.layers", "class_name": "Dense", "registered_name": "my>Dense"}, "my>"),
        ({"module": "os", "config": "system", **function}, "system (from os)"),
        ({"module": "keras", "config": "os.system", **function}, "the function 'os.system'"),
        ({"module": "keras", "class_name": "__typespec__", "config": []}, "__typespec__"),
        ({"module": "keras", "class_name": ["Dense"]}, "the object"),
    ]


def test_the_configuration_allows_only_keras_own_objects():
    for layer in _lambda_variants():
        config = {**CONFIG, "config": {"name": "s", "layers": [layer]}}
        assert foreign(config) == "a Lambda", layer
    for layer, shown in _foreign_objects():
        found = foreign({**CONFIG, "config": {"layers": [layer]}})
        assert found is not None and shown in found, (layer, found)
    own = [
        {"module": "keras.layers", "class_name": "Dense", "config": {"units": 1}},
        {"module": "builtins", "class_name": "function", "config": "relu",
         "registered_name": "function"},
        {"module": "keras.src.models.functional", "class_name": "Functional",
         "registered_name": "Functional"},
        {"class_name": "__keras_tensor__", "config": {"shape": [None, 4]}},
    ]  # fmt: skip
    assert foreign({**CONFIG, "config": {"layers": own}}) is None


def test_keras_weights_that_inflate_or_link_elsewhere_are_refused(tmp_path):
    h5py = pytest.importorskip("h5py")
    from sqlml.models.keras.model.network import _check_weights

    def weights(build) -> bytes:
        path = tmp_path / "w.h5"
        with h5py.File(path, "w") as file:
            build(file)
        return path.read_bytes()

    plain = weights(lambda f: f.create_dataset("layers/dense/vars/0", data=np.ones((4, 3))))
    _check_weights(plain)
    inflating = weights(
        lambda f: f.create_dataset("v", shape=(50_000_000,), dtype="f4", compression="gzip")
    )
    (tmp_path / "secret.h5").write_bytes(plain)
    linked = weights(lambda f: f.__setitem__("v", h5py.ExternalLink(str(tmp_path / "s.h5"), "/")))
    for data, reason in ((inflating, "holds 200,000,000 bytes in"), (linked, "v is a link")):
        with pytest.raises(ModelError, match=reason):
            _check_weights(data)


@pytest.mark.keras
def test_planted_keras_models_are_refused_and_own_models_still_load(capfd, tmp_path):
    """Keras cases together (TensorFlow is imported once): models planted as Keras models are
    refused at TO PREDICT; a model whose layers are nested models (a user builder) loads."""
    pytest.importorskip("keras")
    url = f"duckdb:///{tmp_path / 'models.duckdb'}"
    program = (
        "CREATE TABLE d AS SELECT i AS x, i % 2 AS y FROM range(20) t(i);"
        "SELECT x, y FROM d TO TRAIN user_models.build_keras_model "
        "WITH model.n_classes = 2, train.epoch = 1 LABEL y INTO nested;"
        "SELECT x FROM d TO PREDICT p.y USING nested;"
    )
    status, output = sqlml(capfd, "-e", program, "--datasource", url)
    assert status == 0, output
    ds = connect(url)
    metadata = ModelStore(ds).load("nested").metadata
    ds.close()
    disguised = {**CONFIG, "config": {"name": "s", "layers": [_lambda_variants()[0]]}}
    planted = {
        "bomb": (_bomb(), "(a zip bomb?)"),
        "disguised": (
            _archive(_members(**{"config.json": json.dumps(disguised).encode()})),
            "its configuration names a Lambda, which could run code",
        ),
        "cut": (_archive(_members())[:-50], "damaged or cut-short"),
    }
    for name, (data, reason) in planted.items():
        plant(url, name, metadata, data)
        statement = f"SELECT x FROM d TO PREDICT p.y USING {name};"
        status, output = sqlml(capfd, "-e", statement, "--datasource", url)
        assert_refused(status, output, "the stored Keras model is not loaded", reason, HINT)


# 3. Export ------------------------------------------------------------------------------------


def test_export_refuses_what_loading_refuses(good, capfd, tmp_path):
    """Keras archives are checked without TensorFlow; a refused model writes no file."""
    url, stored = good
    keras_metadata = {**stored.metadata, "family": "keras", "format": "keras-v3"}
    lambda_config = {**CONFIG, "config": {"layers": [_lambda_variants()[1]]}}
    planted = {
        "cut": (_archive(_members())[:-50], "damaged or cut-short"),
        "lambda": (
            _archive(_members(**{"config.json": json.dumps(lambda_config).encode()})),
            "names a Lambda",
        ),
    }
    for name, (data, reason) in planted.items():
        plant(url, name, keras_metadata, data)
        status, output = sqlml(
            capfd, "export", name, str(tmp_path / f"{name}.keras"), "--datasource", url
        )
        assert_refused(status, output, reason)
        assert not list(tmp_path.glob(f"*{name}*"))
    plant(url, "fine", keras_metadata, _archive(_members()))
    status, output = sqlml(
        capfd, "export", "fine", str(tmp_path / "fine.keras"), "--datasource", url
    )
    assert status == 0, output
    exported = zipfile.ZipFile(tmp_path / "fine.keras")
    assert exported.namelist() == list(_members()) and exported.testzip() is None


# 4. Damaged metadata --------------------------------------------------------------------------


@pytest.fixture(params=KINDS)
def damaged(request, tmp_path, unique_name):
    """A database of each kind with three models: ``<u>_ok``, ``<u>_text`` whose metadata is
    not JSON, ``<u>_nofamily`` whose metadata has no family. Yields (url, u)."""
    url = datasource_url(request.param, tmp_path)
    u = unique_name
    ds = connect(url)
    store = ModelStore(ds)
    metadata = {
        "estimator": "xgboost.gbtree",
        "label": "y",
        "rows": 1,
        "statement": "...",
        "trained_at": "2025-01-01T00:00:00+00:00",
    }
    store.save(f"{u}_ok", metadata, b"x")
    p = ds.param
    for name, text in ((f"{u}_text", '{"estimator": '), (f"{u}_nofamily", json.dumps(metadata))):
        ds.execute(
            f"INSERT INTO sqlml_model_versions (name, version, size, metadata) "
            f"VALUES ({p}, 1, 1, {p})",
            [name, text],
        )
        ds.execute(
            f"INSERT INTO sqlml_model_chunks (name, version, seq, chunk) VALUES ({p}, 1, 0, {p})",
            [name, b"x"],
        )
    ds.execute(f"CREATE TABLE {u}_d (x INTEGER, y INTEGER)")
    ds.execute(f"INSERT INTO {u}_d VALUES (1, 0), (2, 1)")
    ds.close()
    yield url, u
    ds = connect(url)
    for name in ("ok", "text", "nofamily"):
        ModelStore(ds).drop(f"{u}_{name}")
    ds.execute(f"DROP TABLE IF EXISTS {u}_d")
    ds.close()


def test_damaged_metadata_is_named_and_does_not_break_listing(damaged, capfd, tmp_path):
    url, u = damaged
    status, output = sqlml(capfd, "-e", "SHOW MODELS;", "--datasource", url, "--format", "json")
    assert status == 0, output
    start = output.index("[")
    rows = {row["model"]: row for row in json.loads(output[start : output.rindex("]") + 1])}
    assert rows[f"{u}_ok"]["estimator"] == "xgboost.gbtree"
    assert rows[f"{u}_nofamily"]["estimator"] == "xgboost.gbtree"  # listed: it has those keys
    assert rows[f"{u}_text"]["estimator"] == UNREADABLE and rows[f"{u}_text"]["version"] == 1
    assert f"the metadata of {u}_text (version 1) is unreadable" in output

    reasons = {"text": "it is not JSON", "nofamily": "it has no family"}
    for suffix, reason in reasons.items():
        model = f"{u}_{suffix}"
        for statement in (
            f"DESCRIBE MODEL {model};",
            f"SHOW TRAIN {model};",
            f"SELECT x FROM {u}_d TO PREDICT {u}_p.y USING {model};",
            f"SELECT x, y FROM {u}_d TO EVALUATE {model} LABEL y INTO {u}_e;",
            f"SELECT x FROM {u}_d TO EXPLAIN {model};",
            f"SELECT x, y FROM {u}_d TO TRAIN xgboost.gbtree LABEL y USING {model} INTO {u}_n;",
        ):
            status, output = sqlml(capfd, "-e", statement, "--datasource", url)
            assert_refused(
                status,
                output,
                f"model {model} version 1 cannot be used: its stored metadata is damaged "
                f"({reason})",
                "hint: train the model again; if no one changed it on purpose, check who can "
                "write the models tables",
            )
        status, output = sqlml(
            capfd, "export", model, str(tmp_path / "m.json"), "--datasource", url
        )
        assert_refused(status, output, f"model {model} version 1 cannot be used")
    status, output = sqlml(capfd, "-e", f"DROP MODEL {u}_text;", "--datasource", url)
    assert status == 0, output
