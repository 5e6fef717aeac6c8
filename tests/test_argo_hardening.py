"""What a compiled Workflow's pods may use and how long a run's objects stay: parallelism by
dialect, pod GC, TTL, run deadline, requests and limits (per program and per TO TRAIN), the
service-account token only in Argo's executor containers, the default image's full name,
and XGBoost's ``train.workers = 1`` in its step's own process. Checked against Argo
v4.1.2's, the training operator's and Katib's published schemas (tests/k8s_validation.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from test_argo import replica_specs, tasks, templates

from sqlml.backends.argo.codegen import ArgoOptions, to_argo_yaml
from sqlml.cli import main
from sqlml.errors import CheckError, KubernetesError
from sqlml.grammar import parse
from sqlml.semantics import analyze
from sqlml.semantics.quantities import quantity
from tests import k8s_validation

pytest.importorskip("hera.workflows.models")

XGB = "SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror'"
PROGRAM = f"""
CREATE TABLE t AS SELECT 1.0 AS x, 2.0 AS y;
{XGB} LABEL y INTO plain;
{XGB}, train.cpu = '2', train.memory = '8Gi' LABEL y INTO big;
{XGB}, train.workers = 3, train.memory_limit = '6Gi' LABEL y INTO spread;
{XGB}, train.workers = 1 LABEL y INTO one;
SELECT x, y FROM t TO TRAIN DNNRegressor WITH train.workers = 1 LABEL y INTO keras_one;
SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  eta = CHOICE(0.1, 0.3), search.metric = 'rmse', train.cpu = '3' LABEL y INTO searched;
"""


def compiled(text: str = PROGRAM, dialect: str = "duckdb", **options: Any) -> dict[str, Any]:
    """The Workflow, after every object in it passed its published schema."""
    document = yaml.safe_load(
        to_argo_yaml(analyze(parse(text)), "p", ArgoOptions(**options), dialect)
    )
    assert k8s_validation.validate(document) == []
    for task in tasks(document).values():
        for parameter in task["arguments"]["parameters"]:
            if parameter["name"] == "manifest":
                # as Argo substitutes it before the object reaches the API server
                value = parameter["value"].replace(
                    "{{workflow.uid}}", k8s_validation.SAMPLE_WORKFLOW_UID
                )
                manifest = json.loads(value)
                assert k8s_validation.validate(manifest) == [], manifest["kind"]
    return document


def manifest(document: dict[str, Any], task: str) -> dict[str, Any]:
    parameters = tasks(document)[task]["arguments"]["parameters"]
    return json.loads(next(p["value"] for p in parameters if p["name"] == "manifest"))


def container(document: dict[str, Any], task: str) -> dict[str, Any]:
    return templates(document)[tasks(document)[task]["template"]]["container"]


DEFAULT = {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "4Gi"}}


@pytest.mark.parametrize(
    "dialect, steps", [("mysql", 20), ("postgres", 20), ("duckdb", 1), ("sqlite", 1)]
)
def test_steps_at_once_are_bounded_by_the_dialect(dialect, steps):
    """MySQL allows 151 connections and PostgreSQL 100 by default, DuckDB one process."""
    assert compiled(dialect=dialect)["spec"]["parallelism"] == steps
    assert compiled(dialect=dialect, parallelism=7)["spec"]["parallelism"] == 7


def test_compile_and_run_take_jobs(tmp_path, capsys):
    program = tmp_path / "p.sql"
    program.write_text("CREATE TABLE t AS SELECT 1 AS x;\n")
    assert main(["compile", str(program), "--target", "argo", "--dialect", "mysql"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["spec"]["parallelism"] == 20
    assert main(["compile", str(program), "--target", "argo", "--jobs", "3"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["spec"]["parallelism"] == 3
    assert main(["compile", str(program), "--target", "argo", "--jobs", "0"]) == 1
    assert "error: --jobs must be at least 1, not 0" in capsys.readouterr().err


def test_finished_pods_and_runs_are_deleted_and_a_run_has_a_deadline(tmp_path, capsys):
    spec = compiled()["spec"]
    assert spec["podGC"] == {"strategy": "OnPodSuccess", "deleteDelayDuration": "1h"}
    assert spec["ttlStrategy"] == {"secondsAfterCompletion": 7 * 24 * 3600}
    assert spec["activeDeadlineSeconds"] == 3 * 24 * 3600
    spec = compiled(pod_gc=None, ttl_seconds=None, deadline_seconds=60)["spec"]
    assert "podGC" not in spec and "ttlStrategy" not in spec
    assert spec["activeDeadlineSeconds"] == 60
    program = tmp_path / "p.sql"
    program.write_text("CREATE TABLE t AS SELECT 1 AS x;\n")
    options = ["--pod-gc", "OnWorkflowCompletion", "--ttl", "0", "--run-deadline", "3600"]
    assert main(["compile", str(program), "--target", "argo", *options]) == 0
    spec = yaml.safe_load(capsys.readouterr().out)["spec"]
    assert spec["podGC"]["strategy"] == "OnWorkflowCompletion"
    assert "ttlStrategy" not in spec and spec["activeDeadlineSeconds"] == 3600


def test_every_pod_has_requests_and_a_memory_limit_a_statement_may_change():
    document = compiled()
    assert container(document, "s2-train-plain")["resources"] == DEFAULT
    # A TO TRAIN's own: a template of its own; the memory limit raised to its request.
    own = container(document, "s3-train-big")
    assert own["resources"] == {
        "requests": {"cpu": "2", "memory": "8Gi"},
        "limits": {"memory": "8Gi"},
    }
    assert tasks(document)["s3-train-big"]["template"].startswith("train-pod-")
    job = manifest(document, "s4-train-spread")
    for spec in replica_specs(job):
        [pod_container] = spec["template"]["spec"]["containers"]
        assert pod_container["resources"] == {**DEFAULT, "limits": {"memory": "6Gi"}}
    trials = manifest(document, "s7-train-searched-trials")
    trial = trials["spec"]["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]
    assert trial["containers"][0]["resources"] == {
        "requests": {"cpu": "3", "memory": "1Gi"},
        "limits": {"memory": "4Gi"},
    }
    options = {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}
    assert container(compiled(**options), "s2-train-plain")["resources"] == options


@pytest.mark.parametrize(
    "statement, kind",
    [
        ("SELECT x FROM t TO PREDICT p.y WITH predict.{name} = '{value}' USING m", "predict"),
        ("SELECT x, y FROM t TO EVALUATE m WITH evaluate.{name} = '{value}' LABEL y INTO e",
         "evaluate"),
        ("SELECT x, y FROM t TO EXPLAIN m WITH explain.{name} = '{value}' INTO e", "explain"),
        ("SELECT x FROM t TO RUN funcs.f WITH run.{name} = '{value}', factor = 3 INTO o", "run"),
        ("SELECT x FROM t TO MAXIMIZE SUM(x) CONSTRAINT SUM(x) <= 10 WITH variables = 'x', "
         "var_type = 'Integers', optimize.{name} = '{value}' INTO o", "optimize"),
    ],
)  # fmt: skip
@pytest.mark.parametrize(
    "name, value, resources",
    [
        ("cpu", "2", {**DEFAULT, "requests": {"cpu": "2", "memory": "1Gi"}}),
        ("memory_limit", "2Gi", {**DEFAULT, "limits": {"memory": "2Gi"}}),
    ],
)
def test_every_statement_kind_may_set_its_own_pods_resources(
    statement, kind, name, value, resources
):
    head = "CREATE TABLE t AS SELECT 1.0 AS x, 2.0 AS y;\n"
    train = f"{XGB} LABEL y INTO m;\n"
    document = compiled(head + train + statement.format(name=name, value=value) + ";\n")
    [task] = [name for name in tasks(document) if name.startswith("s3-")]
    assert tasks(document)[task]["template"].startswith(f"{kind}-pod-")
    assert container(document, task)["resources"] == resources
    assert container(document, "s2-train-m")["resources"] == DEFAULT


def test_a_limit_below_its_request_and_a_quantity_that_is_none_are_refused():
    text = f"{XGB}, train.memory = '8Gi', train.memory_limit = '2Gi' LABEL y INTO m;"
    with pytest.raises(KubernetesError, match="statement s1-train-m: the memory request 8Gi ") as e:
        compiled(text)
    assert (e.value.line, e.value.column) == (1, 1)
    with pytest.raises(CheckError, match=r"train\.cpu.*must be a Kubernetes quantity"):
        analyze(parse(f"{XGB}, train.cpu = 'two' LABEL y INTO m;"))
    with pytest.raises(KubernetesError, match="the cpu request 2 is above its limit 1"):
        compiled(requests={"cpu": "2"}, limits={"cpu": "1"})


def test_the_token_is_mounted_only_in_argos_executor_containers():
    """Argo v4.1.2 (workflowpod.go, setupServiceAccount): with automountServiceAccountToken
    false, the executor's service account's token is mounted in the executor containers
    only (a step's init and wait, a resource step's main); sqlml's containers, job and
    trial pods get none."""
    spec = compiled(service_account="sqlml-runner")["spec"]
    assert spec["automountServiceAccountToken"] is False
    assert spec["executor"] == {"serviceAccountName": "sqlml-runner"}
    assert compiled()["spec"]["executor"] == {"serviceAccountName": "default"}
    document = compiled()
    job = manifest(document, "s4-train-spread")
    for spec_ in replica_specs(job):
        assert spec_["template"]["spec"]["automountServiceAccountToken"] is False
    trials = manifest(document, "s7-train-searched-trials")
    trial = trials["spec"]["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]
    assert trial["automountServiceAccountToken"] is False


def test_the_default_image_is_named_in_full():
    assert ArgoOptions().image == "docker.io/library/sqlml:0.1.0"
    assert container(compiled(), "s2-train-plain")["image"] == "docker.io/library/sqlml:0.1.0"


def test_one_xgboost_worker_and_a_keras_model_train_in_their_step():
    document = compiled()
    assert tasks(document)["s5-train-one"]["template"] == "train"
    assert tasks(document)["s6-train-keras-one"]["template"] == "train"  # Keras: one process
    assert manifest(document, "s4-train-spread")["kind"] == "XGBoostJob"


def test_the_quantities_kubernetes_takes():
    assert quantity("500m") == quantity("0.5")
    assert quantity("1Gi") == 2**30 and quantity("1G") == 10**9
    for text in ("lots", "1 Gi", "-1", "1gi", ""):
        with pytest.raises(ValueError):
            quantity(text)
