"""A backend installed with pip: ``tests/plugins/sqlml_toy_backend`` declares its backend in
the entry point group ``sqlml.backends`` and is found by ``sqlml`` in a new process, in a
fresh environment: it compiles a program to a listing of its plan, runs it by recording its
steps, reports its status and logs, and ``sqlml ui`` lists its run and draws its page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from plugin_env import PLUGINS, PluginEnv

from sqlml.backends import backends

pytest.importorskip("starlette")
pytest.importorskip("networkx")

PROGRAM = """
CREATE TABLE a AS SELECT 1 AS x;
CREATE TABLE b AS SELECT x + 1 AS y FROM a;
SELECT * FROM b;
"""
STEPS = ["s1-create", "s2-create", "s3-select"]
LISTING = "s1-create after -\ns2-create after s1-create\ns3-select after s2-create\n"
# What the page's server answers, asked in the new environment's process as the UI tests
# ask it (Starlette's TestClient over the application sqlml ui serves).
PAGES = """
import json, sys
from pathlib import Path
from starlette.testclient import TestClient
from sqlml.ui.server import Settings, create_app

folder, run = Path(sys.argv[1]), sys.argv[2]
ui = TestClient(create_app(Settings(f"duckdb:///{folder / 'db.duckdb'}", folder / "runs", folder)))
answers = {}
for path in ["/runs", f"/runs/{run}", f"/runs/{run}/state", f"/runs/{run}/steps/s2-create",
             f"/runs/{run}/steps/s2-create/log", f"/runs/{run}/steps/nope/log"]:
    answer = ui.get(path)
    answers[path] = [answer.status_code, answer.text]
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> PluginEnv:
    return PluginEnv.create(tmp_path_factory.mktemp("env"), PLUGINS / "sqlml_toy_backend")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "prog.sql").write_text(PROGRAM)
    return tmp_path


def _sqlml(env: PluginEnv, folder: Path, *args: str):
    variables = {
        "SQLML_RUN_DIR": str(folder / "runs"),
        "SQLML_DATASOURCE": f"duckdb:///{folder / 'db.duckdb'}",
    }
    return env.sqlml(*args, cwd=folder, env=variables)


def _run(env: PluginEnv, folder: Path) -> str:
    ran = _sqlml(env, folder, "run", "prog.sql", "--backend", "toy")
    assert ran.returncode == 0, ran.stderr
    found = re.search(r"^sqlml: run (toy-[\w-]+): recorded by the toy backend$", ran.stderr, re.M)
    assert found, ran.stderr
    return found.group(1)


def test_it_is_not_installed_here():
    assert "toy" not in backends()


def test_compile_lists_the_plan(env, folder):
    compiled = _sqlml(env, folder, "compile", "prog.sql", "--target", "toy")
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stdout == LISTING


def test_run_status_and_logs(env, folder):
    run = _run(env, folder)
    status = _sqlml(env, folder, "status", run, "--backend", "toy", "--format", "csv")
    assert status.returncode == 0, status.stderr
    assert status.stderr == f"run {run}: succeeded\n"
    lines = status.stdout.splitlines()
    assert lines[0] == "step,state,started,finished,message"
    assert [line.split(",")[:2] for line in lines[1:]] == [[s, "succeeded"] for s in STEPS]
    logs = _sqlml(env, folder, "logs", run, "--backend", "toy")
    assert logs.returncode == 0, logs.stderr
    assert "--- s2-create\nexecuted s2-create: CREATE TABLE b AS SELECT x + 1 AS y FROM a\n" in (
        logs.stdout
    )
    one = _sqlml(env, folder, "logs", run, "--backend", "toy", "--step", "s1-create")
    assert one.stdout == "--- s1-create\nexecuted s1-create: CREATE TABLE a AS SELECT 1 AS x\n"


def test_its_own_option_and_an_unknown_run(env, folder):
    loud = _sqlml(env, folder, "run", "prog.sql", "--backend", "toy", "--shout")
    assert loud.returncode == 0, loud.stderr
    missing = _sqlml(env, folder, "status", "toy-none", "--backend", "toy")
    assert missing.returncode == 1
    assert "error: the toy backend has no run toy-none" in missing.stderr


def test_the_ui_lists_its_run_and_draws_its_page(env, folder):
    run = _run(env, folder)
    asked = env.run("-c", PAGES, str(folder), run, cwd=folder)
    assert asked.returncode == 0, asked.stderr
    answers = json.loads(asked.stdout)
    status, listed = answers["/runs"]
    assert status == 200
    assert f'data-run="{run}" data-state="succeeded" data-backend="toy"' in listed
    assert '<span class="backend" title="recorded by the toy backend">Toy</span>' in listed
    status, page = answers[f"/runs/{run}"]
    assert status == 200
    drawn = re.findall(r'<g class="node" data-step="([^"]+)" data-state="([^"]+)"', page)
    assert drawn == [(step, "succeeded") for step in STEPS]
    status, state = answers[f"/runs/{run}/state"]
    assert status == 200
    assert json.loads(state)["state"] == "succeeded"
    assert set(json.loads(state)["steps"]) == set(STEPS)
    status, details = answers[f"/runs/{run}/steps/s2-create"]
    assert status == 200
    assert json.loads(details)["statement"].startswith("CREATE TABLE b")
    assert json.loads(details)["after"] == ["s1-create"]
    assert answers[f"/runs/{run}/steps/s2-create/log"] == [
        200,
        "executed s2-create: CREATE TABLE b AS SELECT x + 1 AS y FROM a\n",
    ]
    assert answers[f"/runs/{run}/steps/nope/log"] == [404, "there is no such step in this run\n"]
