"""Stored XGBoost models whose trees were tampered with are refused before XGBoost reads them.

XGBoost follows a tree's links without bounds checks: a child out of range or negative, a
node linking to itself, a split on a huge feature index, a parent out of range crashed sqlml
with a segfault (exit 139, no message) in TO PREDICT, TO EVALUATE, TO EXPLAIN, TRAIN ...
USING and ``sqlml export``, and the web editor's server with it; a split on feature 3 of a
two-feature model predicted silently, reading memory past the row. Each is now one error
naming the model and its version (exit 1, no traceback), with nothing written.

The commands run in child processes, so a crash fails the test instead of killing pytest.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import xgboost as xgb

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fuzz"))
from model_mutants import ubjson  # noqa: E402

REFUSED = "cannot be used: its stored model is damaged or was altered ("
HINT = "hint: train the model again; if you did not store it, check who can write the models"


def _tree(document: dict, index: int = 0) -> dict:
    return document["learner"]["gradient_booster"]["model"]["trees"][index]


def _inner(tree: dict) -> int:
    """A split node of ``tree`` other than the root."""
    return next(n for n, left in enumerate(tree["left_children"]) if n and left != -1)


def _set(key: str, node, value) -> callable:
    def change(document: dict) -> None:
        tree = _tree(document)
        at = node(tree) if callable(node) else node
        tree[key][at] = value(tree, at) if callable(value) else value

    return change


# The tamperings of issue 30, each with the words of its refusal.
TAMPERINGS = {
    "child_out_of_range": (_set("left_children", 0, 1_000_000), "node 0: its children are"),
    "child_negative": (_set("left_children", 0, -5), "node 0: its children are not nodes"),
    "root_links_to_itself": (_set("left_children", 0, 0), "node 0: it links to itself"),
    "node_links_to_itself": (_set("right_children", _inner, lambda t, n: n), "it links to itself"),
    "loop_to_the_root": (_set("left_children", _inner, 0), "it links to the root"),
    "huge_split_index": (_set("split_indices", 0, 2**31 - 2), "feature index 2147483646"),
    "parent_out_of_range": (_set("parents", 1, 1_000_000), "node 1: its parent is not a node"),
    "wrong_parent": (_set("parents", 1, lambda t, n: _inner(t)), "its parent is not the node"),
    "split_on_feature_3_of_2": (_set("split_indices", 0, 3), "splits on feature index 3, but"),
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[str, dict[str, str]]:
    """A DuckDB database with table d (x1, x2, a label y of three classes), the model
    ``good`` trained on it and each tampering of it planted under its name (in XGBoost's
    JSON; the first also in UBJSON, as sqlml stores models): (url, name -> reason)."""
    folder = tmp_path_factory.mktemp("tampered")
    url = f"duckdb:///{folder / 'models.duckdb'}"
    program = (
        "CREATE TABLE d AS SELECT i AS x1, (i * 7) % 11 AS x2, chr((97 + i % 3)::INTEGER) AS y "
        "FROM range(40) t(i);"
        "SELECT x1, x2, y FROM d TO TRAIN xgboost.gbtree WITH train.num_boost_round = 2 "
        "LABEL y INTO good;"
    )
    assert main(["-e", program, "--datasource", url]) == 0
    ds = connect(url)
    store = ModelStore(ds)
    good = store.load("good")
    booster = xgb.Booster()
    booster.load_model(bytearray(good.data))
    original = json.loads(bytes(booster.save_raw("json")))
    reasons = {}
    for name, (change, reason) in TAMPERINGS.items():
        document = json.loads(json.dumps(original))
        change(document)
        store.save(name, good.metadata, json.dumps(document).encode())
        reasons[name] = reason
        if name == "child_out_of_range":
            store.save(f"{name}_ubj", good.metadata, ubjson(document))
            reasons[f"{name}_ubj"] = reason
    ds.close()
    return url, reasons


def sqlml(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sqlml", *args], capture_output=True, text=True, timeout=600
    )


def assert_refused(done: subprocess.CompletedProcess, model: str, reason: str, times: int):
    output = done.stdout + done.stderr
    assert done.returncode == 1, f"exit status {done.returncode}:\n{output}"  # -11: a segfault
    assert output.count(f"model {model} version 1 {REFUSED}") == times, output
    assert output.count(reason) == times and output.count(HINT) == times, output
    assert "Traceback" not in output, output


@pytest.mark.parametrize("tampering", [*TAMPERINGS, "child_out_of_range_ubj"])
def test_a_tampered_tree_is_refused_on_every_path(planted, tampering, tmp_path):
    url, reasons = planted
    statements = (
        f"SELECT x1, x2 FROM d TO PREDICT p.y USING {tampering};"
        f"SELECT x1, x2, y FROM d TO EVALUATE {tampering} LABEL y INTO e;"
        f"SELECT x1, x2 FROM d TO EXPLAIN {tampering} INTO x;"
        f"SELECT x1, x2, y FROM d TO TRAIN xgboost.gbtree LABEL y USING {tampering} INTO t;"
    )
    assert_refused(sqlml("-e", statements, "--datasource", url), tampering, reasons[tampering], 4)
    exported = tmp_path / "m.json"
    done = sqlml("export", tampering, str(exported), "--datasource", url)
    assert_refused(done, tampering, reasons[tampering], 1)
    assert not list(tmp_path.iterdir())
    ds = connect(url)
    assert not any(ds.table_exists([table]) for table in ("p", "e", "x"))
    assert ModelStore(ds).list_versions("t") == []
    assert ModelStore(ds).load("good").version == 1  # the data is intact
    ds.close()


def test_the_web_editor_refuses_a_tampered_tree_and_keeps_serving(planted, tmp_path):
    """The editor runs statements in its own process: a crash there killed the server."""
    pytest.importorskip("starlette")
    url, reasons = planted
    script = textwrap.dedent(
        f"""
        import json, pathlib
        from starlette.testclient import TestClient
        from sqlml.ui.server import Settings, create_app
        folder = pathlib.Path({str(tmp_path)!r})
        with TestClient(create_app(Settings({url!r}, folder / "runs", folder)),
                        base_url="http://127.0.0.1:8765") as client:
            for sql in ("SELECT x1, x2 FROM d TO PREDICT p.y USING root_links_to_itself;",
                        "SELECT 41 + 1 AS answer;"):
                print(json.dumps(client.post("/editor/run", json={{"sql": sql}}).json()))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    refused, answered = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    assert not refused["ok"] and REFUSED in refused["html"], refused
    assert reasons["root_links_to_itself"] in refused["html"]
    assert answered["ok"] and "<td>42</td>" in answered["html"]


def test_every_model_xgboost_writes_for_sqlml_still_loads(tmp_path):
    """Binary, multi-class, regression, ranking, dart, linear, random forests and trees with
    pruned (deleted) nodes pass the checks and predict."""
    url = f"duckdb:///{tmp_path / 'models.duckdb'}"
    trainings = {
        "binary": "xgboost.gbtree WITH objective = 'binary:logistic', train.num_boost_round = 2 "
        "LABEL b",
        "multi": "xgboost.gbtree WITH train.num_boost_round = 2 LABEL y",
        "regression": "XGBRegressor WITH n_estimators = 2 LABEL r",
        "ranking": "XGBRanker WITH n_estimators = 2, train.group_column = 'b' LABEL q",
        "dart": "xgboost.dart WITH train.num_boost_round = 3 LABEL y",
        "linear": "xgboost.gblinear WITH train.num_boost_round = 2 LABEL y",
        "forest": "XGBRFClassifier WITH n_estimators = 3 LABEL y",
        "pruned": "xgboost.gbtree WITH train.num_boost_round = 3, tree_method = 'exact', "
        "gamma = 0.5, max_depth = 4 LABEL r",
    }
    program = (
        "CREATE TABLE d AS SELECT i AS x1, (i * 7) % 11 AS x2, chr((97 + i % 3)::INTEGER) AS y, "
        "i % 2 AS b, i * 0.5 AS r, i % 5 AS q FROM range(40) t(i);"
        + "".join(
            f"SELECT * FROM d TO TRAIN {how} INTO {name};"
            f"SELECT * FROM d TO PREDICT p_{name}.out USING {name};"
            for name, how in trainings.items()
        )
    )
    assert main(["-e", program, "--datasource", url]) == 0
    ds = connect(url)
    pruned = xgb.Booster()
    pruned.load_model(bytearray(ModelStore(ds).load("pruned").data))
    trees = json.loads(bytes(pruned.save_raw("json")))["learner"]["gradient_booster"]["model"]
    assert any(int(t["tree_param"]["num_deleted"]) for t in trees["trees"])  # pruning deleted
    for name in trainings:
        assert ds.execute(f"SELECT COUNT(*) FROM p_{name}").rows[0][0] == 40
    ds.close()
