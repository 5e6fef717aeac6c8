"""``sqlml compile --target argo``: Argo Workflows checked strictly against hera's models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
import yaml

from sqlml import ir
from sqlml.backends.argo.codegen import ArgoOptions, to_argo_yaml
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError, KubernetesError
from sqlml.grammar import parse
from sqlml.plan import dependencies
from sqlml.semantics import analyze

pytestmark = pytest.mark.usefixtures("tfjob_family")  # TFJobRegressor: a TFJob

models = pytest.importorskip("hera.workflows.models")

PROGRAM = """
CREATE TABLE train AS SELECT 1.0 AS x, 2.0 AS y, 'a{{b}}c' AS note;
CREATE TABLE test AS SELECT 1.5 AS x;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror' LABEL y
  INTO plain_model;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  train.workers = 3 LABEL y INTO xgb_model;
SELECT x, y FROM train TO TRAIN TFJobRegressor WITH train.distributed = true, train.ps = 2
  LABEL y INTO dnn_model;
SELECT x, y FROM train TO TRAIN DNNRegressor WITH train.distributed = false, train.workers = 4
  LABEL y INTO local_model;
SELECT * FROM test TO PREDICT predictions.y USING xgb_model;
SELECT * FROM predictions;
SHOW MODELS;
"""


def statements(text: str = PROGRAM) -> list:
    return analyze(parse(text))


def validated(text: str) -> dict[str, Any]:
    """The YAML as plain values, after checking that hera's Argo models take it strictly
    (extra fields forbidden) and give back every field."""
    document = yaml.safe_load(text)
    workflow = models.Workflow.model_validate(document, extra="forbid", strict=True)
    assert workflow.model_dump(mode="json", by_alias=True, exclude_none=True) == document
    return document


def tasks(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The statement tasks, from ``main`` or, in a large program, its ``part-N`` DAGs."""
    dags = [t for t in document["spec"]["templates"] if "dag" in t]
    parts = [t for t in dags if t["name"] != "main"] or dags
    return {task["name"]: task for dag in parts for task in dag["dag"]["tasks"]}


def arguments(task: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["value"] for p in task["arguments"]["parameters"]}


def replica_specs(job: dict[str, Any]) -> list[dict[str, Any]]:
    """Every replica spec of a Kubeflow job (``tfReplicaSpecs``, ``xgbReplicaSpecs``...)."""
    return [
        spec
        for key, specs in job["spec"].items()
        if key.endswith("ReplicaSpecs")
        for spec in specs.values()
    ]


def templates(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in document["spec"]["templates"]}


def test_the_workflow_passes_hera_strictly_and_round_trips():
    document = validated(to_argo_yaml(statements(), "my_program"))
    assert document["apiVersion"] == "argoproj.io/v1alpha1"
    assert document["kind"] == "Workflow"
    assert document["metadata"] == {"generateName": "my-program-"}
    assert document["spec"]["entrypoint"] == "main"


def test_the_model_rejects_an_unknown_field():
    document = yaml.safe_load(to_argo_yaml(statements(), "p"))
    document["spec"]["templates"][1]["container"]["imagePullPolicyy"] = "Always"
    with pytest.raises(ValueError, match="imagePullPolicyy"):
        validated(yaml.safe_dump(document))


def test_each_task_passes_its_statements_ir_and_runs_the_step_entry_point():
    program = statements()
    document = validated(to_argo_yaml(program, "p"))
    by_name = tasks(document)
    for statement in program:
        task = by_name[statement.id]
        if task["template"] in ("resource", "resource-apply"):
            continue
        assert task["template"] == statement.kind.replace("_", "-")
        # Argo expands {{...}} in parameters: none reaches it, yet the IR decodes unchanged.
        assert "{{" not in arguments(task)["ir"]
        assert json.loads(arguments(task)["ir"]) == statement.to_dict()
    container = templates(document)["sql"]["container"]
    assert container["command"] == ["python", "-m", "sqlml.runtime.step"]
    assert container["args"] == ["{{inputs.parameters.ir}}"]
    assert "a{{b}}c" in json.loads(arguments(by_name[program[0].id])["ir"])["text"]


def test_dag_dependencies_equal_the_programs():
    program = statements()
    graph = dependencies(program, "duckdb")
    by_name = tasks(validated(to_argo_yaml(program, "p")))
    assert set(by_name) == {statement.id for statement in program}
    for statement in program:
        assert set(by_name[statement.id].get("dependencies", [])) == set(graph.after[statement.id])
    # Independent statements really are independent: the two CREATEs start at once.
    assert "dependencies" not in by_name[program[0].id]
    assert "dependencies" not in by_name[program[1].id]


SCORING = """
CREATE TABLE scores AS SELECT i AS id, sin(i) AS a, cos(0.7 * i) AS b,
  CASE WHEN sin(i) + cos(0.7 * i) > 0 THEN 'yes' ELSE 'no' END AS y FROM range(80) AS t(i);
SELECT a, b, y FROM scores TO TRAIN xgboost.gbtree
  WITH objective = 'binary:logistic', train.num_boost_round = 3 LABEL y INTO scorer;
SELECT id, a, b FROM scores TO PREDICT scored.y
  WITH predict.extra_outputs = 'probabilities' USING scorer;
CREATE VIEW scored_live AS
  SELECT id, PREDICT(scorer) AS y, PREDICT_PROBA(scorer, 'yes') AS p FROM scores;
"""


def test_predict_in_sql_is_a_sql_step_after_its_models_training(tmp_path):
    """The view calling the model is an ordinary SQL step that waits for the model's TO
    TRAIN; its pods (``python -m sqlml.runtime.step IR``, in the DAG's order) make a view
    that predicts what TO PREDICT wrote."""
    program = statements(SCORING)
    by_name = tasks(validated(to_argo_yaml(program, "p")))
    _, train, _, view = program
    task = by_name[view.id]
    assert task["template"] == "sql" and task["dependencies"] == [train.id]
    assert json.loads(arguments(task)["ir"])["models"] == ["scorer"]
    url = f"duckdb:///{tmp_path / 'pods.duckdb'}"
    for statement in program:
        pod = subprocess.run(
            [sys.executable, "-m", "sqlml.runtime.step", arguments(by_name[statement.id])["ir"]],
            cwd=tmp_path,
            env={**os.environ, "SQLML_DATASOURCE": url},
            capture_output=True,
            text=True,
            timeout=600,  # a deadlock guard
        )
        assert pod.returncode == 0, pod.stderr
    ds = connect(url)
    try:
        found = ds.execute("SELECT id, y, p FROM scored_live ORDER BY id").rows
        expected = ds.execute("SELECT id, y, y_yes FROM scored ORDER BY id").rows
    finally:
        ds.close()
    assert [row[:2] for row in found] == [row[:2] for row in expected] and len(found) == 80
    assert {row[1] for row in found} == {"yes", "no"}
    assert [row[2] for row in found] == pytest.approx([row[2] for row in expected], abs=1e-6)


def test_distributed_training_becomes_kubeflow_jobs():
    from tests.test_kubeflow import assert_valid_job

    program = statements()
    document = validated(to_argo_yaml(program, "p", ArgoOptions(namespace="ml")))
    by_name = tasks(document)
    kinds = {}
    for statement in program:
        task = by_name[statement.id]
        if task["template"] != "resource-apply":
            continue
        uid = "0b6f5c1e-7d2a-4c3b-9e8f-1a2b3c4d5e6f"  # Argo substitutes the Workflow's uid
        manifest = json.loads(arguments(task)["manifest"].replace("{{workflow.uid}}", uid))
        assert_valid_job(manifest, manifest["kind"])
        kinds[statement.model] = manifest
    assert set(kinds) == {"xgb_model", "dnn_model"}  # not local_model: distributed = false
    xgb = kinds["xgb_model"]["spec"]["xgbReplicaSpecs"]
    assert {role: spec["replicas"] for role, spec in xgb.items()} == {"Master": 1, "Worker": 2}
    tf = kinds["dnn_model"]["spec"]["tfReplicaSpecs"]
    assert {role: spec["replicas"] for role, spec in tf.items()} == {
        "Chief": 1,
        "Worker": 2,
        "PS": 2,
    }
    metadata = kinds["xgb_model"]["metadata"]
    # Named after the statement and the Workflow's uid: a retried step finds its job.
    assert metadata["name"] == f"s4-train-xgb-mode-{uid}"
    assert metadata["namespace"] == "ml"
    container = xgb["Worker"]["template"]["spec"]["containers"][0]
    statement = next(s for s in program if getattr(s, "model", None) == "xgb_model")
    (argument,) = container["args"]  # base64: no shell or kubelet can alter it
    assert ir.from_argument(argument) == statement
    assert {spec["restartPolicy"] for spec in xgb.values()} == {"OnFailure"}
    policy = kinds["xgb_model"]["spec"]["runPolicy"]
    assert policy["backoffLimit"] == 3 and policy["activeDeadlineSeconds"] == 24 * 3600
    resource = templates(document)["resource-apply"]["resource"]
    assert resource == {
        "action": "apply",
        "manifest": "{{inputs.parameters.manifest}}",
        "successCondition": "{{inputs.parameters.success-condition}}",
        "failureCondition": "{{inputs.parameters.failure-condition}}",
        "setOwnerReference": True,
    }
    task = by_name[statement.id]
    assert arguments(task)["success-condition"] == "status.completionTime"
    assert arguments(task)["failure-condition"] == ", ".join(
        f"status.conditions.{index}.type == Failed" for index in range(5)
    )


def test_one_template_per_kind_of_step_for_a_thousand_statements():
    lines = []
    for i in range(250):
        lines += [
            f"CREATE TABLE t{i} AS SELECT {i} AS x, {i} * 2 AS y;",
            f"SELECT x, y FROM t{i} TO TRAIN xgboost.gbtree "
            f"WITH objective = 'reg:squarederror' LABEL y INTO m{i};",
            f"SELECT x FROM t{i} TO PREDICT p{i}.y USING m{i};",
            f"SELECT * FROM p{i};",
        ]
    program = statements("\n".join(lines))
    text = to_argo_yaml(program, "big")
    document = validated(text)
    parts = [f"part-{n}" for n in range(1, 6)]  # Argo v4: at most 200 tasks per DAG
    assert sorted(templates(document)) == ["main", *parts, "predict", "sql", "train"]
    main_tasks = templates(document)["main"]["dag"]["tasks"]
    assert [(t["name"], t.get("dependencies")) for t in main_tasks] == [(p, None) for p in parts]
    assert len(tasks(document)) == 1000
    assert len(text.encode()) < 1 << 20


def test_credentials_come_from_a_secret_and_never_appear(tmp_path, monkeypatch, capsys):
    sentinel = "S3ntinel-Pa55word"
    url = f"mysql://admin:{sentinel}@db.example:3306/prod"
    monkeypatch.setenv("SQLML_DATASOURCE", url)
    program = tmp_path / "p.sql"
    program.write_text(PROGRAM, encoding="utf-8")
    out = tmp_path / "p.yaml"
    assert main(["compile", str(program), "--target", "argo", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert sentinel not in text and "db.example" not in text
    assert sentinel not in capsys.readouterr().err
    document = validated(text)
    secret = {"secretKeyRef": {"name": "sqlml-datasource", "key": "url"}}
    containers = [t["container"] for t in document["spec"]["templates"] if "container" in t]
    for task in tasks(document).values():
        if task["template"] == "resource":
            job = json.loads(arguments(task)["manifest"])
            containers += [spec["template"]["spec"]["containers"][0] for spec in replica_specs(job)]
    assert containers
    run = {"name": "SQLML_RUN_ID", "value": "{{workflow.name}}"}  # a statement step's (lineage)
    for container in containers:
        assert [e for e in container["env"] if e != run] == [
            {"name": "SQLML_DATASOURCE", "valueFrom": secret}
        ]


def test_every_pod_is_non_root():
    document = validated(to_argo_yaml(statements(), "p", ArgoOptions(run_as_user=2000)))
    assert document["spec"]["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 2000,
        "runAsGroup": 2000,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    for template in document["spec"]["templates"]:
        if "container" in template:
            assert template["container"]["securityContext"] == {
                "allowPrivilegeEscalation": False,
                "runAsNonRoot": True,
                "capabilities": {"drop": ["ALL"]},
            }
    for task in tasks(document).values():
        if task["template"] == "resource":
            job = json.loads(arguments(task)["manifest"])
            for spec in replica_specs(job):
                assert spec["template"]["spec"]["securityContext"]["runAsUser"] == 2000
    with pytest.raises(KubernetesError, match="non-root"):
        to_argo_yaml(statements(), "p", ArgoOptions(run_as_user=0))


def test_cli_options_reach_the_workflow(tmp_path, capsys):
    program = tmp_path / "p.sql"
    program.write_text(PROGRAM, encoding="utf-8")
    status = main(
        [
            "compile",
            str(program),
            "--target",
            "argo",
            "--image",
            "registry.example/sqlml:1.2",
            "--namespace",
            "ml",
            "--service-account",
            "sqlml-runner",
            "--secret",
            "prod-db",
            "--secret-key",
            "dsn",
            "--cpu",
            "500m",
            "--memory",
            "1Gi",
            "--memory-limit",
            "2Gi",
            "--retries",
            "2",
        ]
    )
    assert status == 0
    document = validated(capsys.readouterr().out)
    assert document["metadata"]["namespace"] == "ml"
    assert document["spec"]["serviceAccountName"] == "sqlml-runner"
    train = templates(document)["train"]
    assert train["container"]["image"] == "registry.example/sqlml:1.2"
    assert train["container"]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"memory": "2Gi"},
    }
    assert train["container"]["env"][0]["valueFrom"]["secretKeyRef"] == {
        "name": "prod-db",
        "key": "dsn",
    }
    assert train["retryStrategy"] == {
        "limit": 2,
        "retryPolicy": "Always",
        "backoff": {"duration": "10s", "factor": 2},
    }


def test_cli_reports_a_non_root_violation(tmp_path, capsys):
    program = tmp_path / "p.sql"
    program.write_text("SELECT 1;", encoding="utf-8")
    assert main(["compile", str(program), "--target", "argo", "--run-as-user", "0"]) == 1
    assert "non-root" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ("train.workers = 0", "must be >= 1"),
        ("train.distributed = 'yes'", "TRUE or FALSE"),
    ],
)
def test_distributed_attributes_are_checked(attributes, message):
    with pytest.raises(CheckError, match=message):
        statements(f"SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH {attributes} LABEL y INTO m;")


def test_parameter_servers_are_a_keras_attribute():
    with pytest.raises(CheckError, match=r"no attribute train\.ps"):
        statements("SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH train.ps = 1 LABEL y INTO m;")


def test_compiling_to_argo_without_hera_says_which_extra(tmp_path, monkeypatch, capsys):
    program = tmp_path / "p.sql"
    program.write_text("SELECT 1;\n")
    for name in ("hera", "hera.workflows", "hera.workflows.models"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it raises ImportError
    assert main(["compile", str(program), "--target", "argo"]) == 1
    err = capsys.readouterr().err
    assert "hera's Argo models, which are not installed" in err
    assert "pip install 'sqlml[kubernetes]'" in err and "Traceback" not in err


def test_the_job_deadline_is_an_option(tmp_path, capsys):
    source = tmp_path / "p.sql"
    source.write_text(
        "SELECT x, y FROM t TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',"
        " train.workers = 2 LABEL y INTO m;"
    )
    assert main(["compile", str(source), "--target", "argo", "--job-deadline", "3600"]) == 0
    (task,) = tasks(yaml.safe_load(capsys.readouterr().out)).values()
    policy = json.loads(arguments(task)["manifest"])["spec"]["runPolicy"]
    assert policy == {"cleanPodPolicy": "None", "activeDeadlineSeconds": 3600, "backoffLimit": 3}
    assert main(["compile", str(source), "--target", "argo", "--job-deadline", "0"]) == 1
    assert "--job-deadline must be at least 1 second" in capsys.readouterr().err
