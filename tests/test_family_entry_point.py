"""A model family installed with pip (``tests/plugins/sqlml_constant_family``: an entry
point of ``sqlml.families``) works through the ``sqlml`` command in a new process, as sqlml's
own do: TO TRAIN, TO PREDICT, TO EXPLAIN with its own explainer, ``sqlml export``, and
``sqlml compile --target argo`` with its own Kubeflow job."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from plugin_env import PLUGINS, PluginEnv

from sqlml.datasources import connect

X = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
Y = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
SHRINK = 0.5

PROGRAM = f"""
SELECT x, y FROM points TO TRAIN ConstantRegressor
WITH model.shrink = {SHRINK}, validation.split = 0 LABEL y INTO mean_model;
SELECT x FROM points TO PREDICT predicted.y USING mean_model;
SELECT x, y FROM points TO EXPLAIN mean_model USING ConstantExplainer INTO explained;
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> PluginEnv:
    where = tmp_path_factory.mktemp("constant_env")
    return PluginEnv.create(where, PLUGINS / "sqlml_constant_family")


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"duckdb:///{tmp_path / 'points.duckdb'}"
    ds = connect(url)
    ds.write_table(["points"], {"x": X, "y": Y}, replace=True)
    ds.close()
    return url


def _rows(url: str, sql: str) -> list[tuple]:
    ds = connect(url)
    try:
        return [tuple(row) for row in ds.execute(sql).rows]
    finally:
        ds.close()


def test_an_installed_family_trains_predicts_explains_and_exports(env, url, tmp_path):
    (tmp_path / "prog.sql").write_text(PROGRAM)
    ran = env.sqlml("run", "prog.sql", "--datasource", url, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    mean = Y.mean() * (1 - SHRINK)
    predicted = _rows(url, "SELECT x, y FROM predicted ORDER BY x")
    assert [x for x, _ in predicted] == list(X)
    assert [y for _, y in predicted] == pytest.approx([mean] * len(X))
    # ConstantExplainer, the family's own: one importance a feature, its second measure a
    # column.
    assert _rows(url, "SELECT feature, importance, rows FROM explained") == [("x", 0.0, 6.0)]

    file = tmp_path / "mean.json"
    exported = env.sqlml("export", "mean_model", str(file), "--datasource", url, cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert json.loads(file.read_text()) == {"mean": pytest.approx(mean)}
    metadata = json.loads(Path(f"{file}.sqlml.json").read_text())
    assert (metadata["family"], metadata["estimator"]) == ("constant", "ConstantRegressor")
    # The family's own metrics, recorded with the model.
    assert metadata["metrics"]["train_rows"] == len(Y)
    assert metadata["metrics"]["train_mean"] == pytest.approx(mean)


def test_an_installed_family_refuses_an_explainer_it_does_not_offer(env, url, tmp_path):
    (tmp_path / "prog.sql").write_text(PROGRAM.split(";")[0] + ";")
    assert env.sqlml("run", "prog.sql", "--datasource", url, cwd=tmp_path).returncode == 0
    program = "SELECT x, y FROM points TO EXPLAIN mean_model USING XGBoostExplainer;"
    explained = env.sqlml("-e", program, "--datasource", url, cwd=tmp_path)
    assert explained.returncode == 1
    assert "XGBoostExplainer does not explain mean_model, a constant model" in explained.stderr
    assert "use one of ConstantExplainer, PermutationExplainer" in explained.stderr
    program = "SELECT x, y FROM points TO EXPLAIN mean_model;"  # its default: its own
    explained = env.sqlml("-e", program, "--datasource", url, "--format", "csv", cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.splitlines() == ["feature,importance,rows", "x,0.0,6.0"]


def test_an_installed_family_trains_in_its_own_kubeflow_job_on_argo(env, tmp_path):
    program = (
        "SELECT x, y FROM points TO TRAIN ConstantRegressor WITH train.workers = 3 "
        "LABEL y INTO mean_model;\n"
    )
    (tmp_path / "prog.sql").write_text(program)
    compiled = env.sqlml("compile", "prog.sql", "--target", "argo", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    workflow = yaml.safe_load(compiled.stdout)
    manifests = [
        json.loads(parameter["value"])
        for template in workflow["spec"]["templates"]
        for task in template.get("dag", {}).get("tasks", ())
        for parameter in task.get("arguments", {}).get("parameters", ())
        if parameter["name"] == "manifest"
    ]
    jobs = [m for m in manifests if m["kind"] == "ConstantJob"]
    assert len(jobs) == 1, compiled.stdout
    (job,) = jobs
    assert job["apiVersion"] == "constant.example.org/v1"
    specs = job["spec"]["constantReplicaSpecs"]
    assert {role: spec["replicas"] for role, spec in specs.items()} == {"Master": 1, "Worker": 2}
    container = specs["Master"]["template"]["spec"]["containers"][0]
    assert container["name"] == "constant"
    # The step zoo offers its job by the zoo name it declares.
    zoo = env.run(
        "-c",
        "from sqlml import steps; from sqlml.steps.kubeflow import Replica; "
        "print(steps.constant.train('c', master=Replica('i')).params['manifest']['kind'])",
        cwd=tmp_path,
    )
    assert zoo.stdout.strip() == "ConstantJob", zoo.stderr
