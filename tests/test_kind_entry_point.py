"""A statement kind installed with pip: the package ``tests/plugins/sqlml_count_kind`` declares
``<select> TO COUNT USING <column> INTO <table>`` (its grammar fragment, AST node, IR class,
analysis and handler) through an entry point of the group ``sqlml.statements``. Installed
into a fresh environment, the ``sqlml`` command, a new process, checks and runs a program
holding it and compiles it to an Argo Workflow, whose step's entry point (``python -m
sqlml.runtime.step``, a pod's) runs it as any kind's."""

from __future__ import annotations

import json

import pytest
import yaml
from plugin_env import PLUGINS, PluginEnv

from sqlml.datasources import connect

PROGRAM = """CREATE TABLE t AS SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 'a')) AS v(x, y);
SELECT * FROM t WHERE x > 0 TO COUNT USING y INTO y_counts;
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> PluginEnv:
    return PluginEnv.create(tmp_path_factory.mktemp("env"), PLUGINS / "sqlml_count_kind")


def test_an_installed_kind_is_checked_and_run(env, tmp_path):
    (tmp_path / "count.sql").write_text(PROGRAM)
    url = f"duckdb:///{tmp_path / 'count.db'}"
    checked = env.sqlml("check", "count.sql", "--datasource", url, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    ran = env.sqlml("run", "count.sql", "--datasource", url, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "counted 2 values of y into y_counts" in ran.stderr
    ds = connect(url)
    try:
        assert ds.execute("SELECT value, n FROM y_counts ORDER BY value").rows == [
            ("a", 2),
            ("b", 1),
        ]
    finally:
        ds.close()


def test_its_errors_come_from_its_declaration(env, tmp_path):
    (tmp_path / "bad.sql").write_text("SELECT * FROM t TO COUNT USING y;\n")
    checked = env.sqlml("check", "bad.sql", cwd=tmp_path)
    assert checked.returncode == 1
    assert "a TO COUNT statement ends with USING <column> INTO <table>" in checked.stderr
    assert "Traceback" not in checked.stderr


def test_an_installed_kind_compiles_to_an_argo_step(env, tmp_path):
    (tmp_path / "count.sql").write_text(PROGRAM)
    compiled = env.sqlml("compile", "count.sql", "--target", "argo", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    workflow = yaml.safe_load(compiled.stdout)
    templates = {template["name"]: template for template in workflow["spec"]["templates"]}
    tasks = templates[workflow["spec"]["entrypoint"]]["dag"]["tasks"]
    (task,) = [task for task in tasks if task["name"].startswith("s2-count")]
    (parameter,) = task["arguments"]["parameters"]
    statement = json.loads(parameter["value"])
    assert (statement["kind"], statement["counted"], statement["table"]) == (
        "count",
        "y",
        ["y_counts"],
    )
    container = templates[task["template"]]["container"]
    assert container["command"] == ["python", "-m", "sqlml.runtime.step"]
    assert container["args"] == ["{{inputs.parameters.ir}}"]
    # The pod's entry point, a new process, finds the kind through its entry point too.
    url = f"duckdb:///{tmp_path / 'pod.db'}"
    ds = connect(url)
    try:
        ds.execute("CREATE TABLE t AS SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(x, y)")
    finally:
        ds.close()
    pod = env.run(
        "-m", "sqlml.runtime.step", parameter["value"], cwd=tmp_path, env={"SQLML_DATASOURCE": url}
    )
    assert pod.returncode == 0, pod.stderr
    ds = connect(url)
    try:
        assert ds.execute("SELECT value, n FROM y_counts ORDER BY value").rows == [
            ("a", 1),
            ("b", 1),
        ]
    finally:
        ds.close()
