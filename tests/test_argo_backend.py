"""``sqlml run --backend argo``, ``status``, ``logs`` and ``stop`` against a stand-in.

The API server here is tests/kube_standin.py: a loopback HTTP server that records requests
and answers as the API server would, from what the test put in it. It is not a cluster: no
pod runs, no Argo controller moves the workflow, no training operator creates pods; the
statuses, pods and logs are the test's (statuses written as the controllers write them, per
their source: Argo v4.1.2, the training operator v1.9, Katib v0.19), and these tests check
what sqlml sends and how it reports what it gets back.
"""

from __future__ import annotations

import base64
import copy
import gzip
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sqlml.backends.argo import submit as argo_backend
from sqlml.cli import main
from tests.kube_standin import SUFFIX_ALPHABET, TOKEN, KubeStandin, Pod
from tests.test_argo import validated

pytestmark = pytest.mark.usefixtures("tfjob_family")  # TFJobRegressor: a TFJob

pytest.importorskip("kubernetes")

PASSWORD = "s3cr3t-SENTINEL-pw"
URL = f"mysql://ml:{PASSWORD}@mysql.db.svc:3306/analytics"
URL_B64 = base64.b64encode(URL.encode()).decode()
PROGRAM = "CREATE TABLE t AS SELECT 1 AS x;\nSELECT * FROM t;\n"
SUFFIX = "b7x2q"  # the 5 characters the stand-in appends to the first generateName
RUN = f"prog-{SUFFIX}"  # the name of the first workflow of prog.sql
WORKFLOWS = "/apis/argoproj.io/v1alpha1/namespaces/ml/workflows"


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(argo_backend, "POLL_SECONDS", 0.0)


@pytest.fixture
def api():
    with KubeStandin(suffixes=[SUFFIX]) as standin:
        yield standin
    assert not standin.errors, standin.errors[0]  # the stand-in itself never failed


@pytest.fixture
def program(tmp_path):
    file = tmp_path / "prog.sql"
    file.write_text(PROGRAM)
    return str(file)


@pytest.fixture
def kubeconfig(api, tmp_path):
    return str(api.kubeconfig(tmp_path / "kubeconfig"))


def node(task: str, phase: str, message: str = "", template: str = "sql") -> dict[str, Any]:
    """A Pod node of the run's status, as Argo's controller writes it (times made up)."""
    return {
        "id": f"{RUN}-{task}",
        "name": f"{RUN}.{task}",
        "displayName": task,
        "type": "Pod",
        "templateName": template,
        "phase": phase,
        "message": message,
        "startedAt": f"2026-01-01T00:00:0{task[1]}Z",
    }


def status(phase: str, *steps: dict[str, Any]) -> dict[str, Any]:
    root = {"id": RUN, "name": RUN, "displayName": RUN, "type": "DAG", "phase": phase}
    return {"phase": phase, "nodes": {n["id"]: n for n in [root, *steps]}}


def pod(step: dict[str, Any]) -> str:
    return argo_backend.pod_name({"metadata": {"name": RUN}}, step)


S1, S2 = "s1-create", "s2-select"
PROGRESS = [
    status("Running", node(S1, "Running")),
    status("Running", node(S1, "Succeeded"), node(S2, "Running")),
    status("Succeeded", node(S1, "Succeeded"), node(S2, "Succeeded")),
]
LOGS = {pod(node(S1, "")): ["created t"], pod(node(S2, "")): ["  x", "---", "  1", ""]}


def step_pods(api: KubeStandin, logs: dict[str, list[str]]) -> None:
    """The pods of container steps as Argo creates them (an ``init`` container, then ``wait``
    and ``main``), with ``main``'s log."""
    for name, lines in logs.items():
        labels = {"workflows.argoproj.io/workflow": RUN}
        pod_ = Pod(name, labels, containers=("wait", "main"), init_containers=("init",))
        api.add_pod(pod_, {"main": lines})


def run(program: str, kubeconfig: str, *options: str) -> int:
    return main(["run", program, "--backend", "argo", "--kubeconfig", kubeconfig, *options])


def without_secret_data(body: Any) -> Any:
    if isinstance(body, dict) and body.get("kind") == "Secret":
        return {**body, "data": None}
    return body


def assert_no_credentials(api: KubeStandin, *outputs: str) -> None:
    """Neither the password nor the encoded URL is anywhere but in the Secret's data."""
    for request in api.requests:
        seen = json.dumps(
            [request.path, request.query, request.headers, without_secret_data(request.body)]
        )
        assert PASSWORD not in seen and URL_B64 not in seen, request.path
    for output in outputs:
        assert PASSWORD not in output and URL_B64 not in output


def test_a_run_creates_the_secret_and_workflow_then_watches_it_to_success(
    api, program, kubeconfig, capsys
):
    api.statuses = PROGRESS
    step_pods(api, LOGS)
    status_ = run(program, kubeconfig, "--datasource", URL, "--image", "reg/sqlml:1", "--jobs", "2")
    out, err = capsys.readouterr()
    assert status_ == 0, err
    # The Secret: looked up, then created in the context's namespace with the URL, base64.
    assert [(r.method, r.path) for r in api.requests[:2]] == [
        ("GET", "/api/v1/namespaces/ml/secrets/sqlml-datasource"),
        ("POST", "/api/v1/namespaces/ml/secrets"),
    ]
    secret = api.secrets["ml", "sqlml-datasource"]
    assert base64.b64decode(secret["data"]["url"]).decode() == URL
    assert secret["type"] == "Opaque"
    # The Workflow: hera's models take it strictly; it reads the URL from that Secret.
    (create,) = api.requests_to("POST", f"{WORKFLOWS}$")
    workflow = validated(yaml.safe_dump(create.body))
    assert workflow["metadata"]["generateName"] == "prog-"
    assert workflow["spec"]["parallelism"] == 2
    (sql,) = [t for t in workflow["spec"]["templates"] if t["name"] == "sql"]
    assert sql["container"]["image"] == "reg/sqlml:1"
    assert sql["container"]["env"] == [
        {
            "name": "SQLML_DATASOURCE",
            "valueFrom": {"secretKeyRef": {"name": "sqlml-datasource", "key": "url"}},
        },
        {"name": "SQLML_RUN_ID", "value": "{{workflow.name}}"},  # the run of its lineage
    ]
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in api.requests)
    assert_no_credentials(api, out, err)
    # The run's name first, then each step's log, followed from its container.
    assert out.splitlines()[0] == RUN
    assert f"[{S1}] created t" in out.splitlines()
    assert [line for line in out.splitlines() if line.startswith(f"[{S2}]")] == [
        f"[{S2}]   x",
        f"[{S2}] ---",
        f"[{S2}]   1",
        f"[{S2}] ",
    ]
    for request in api.requests_to("GET", "/log$"):
        assert request.query == {"container": ["main"], "follow": ["True"]}
    assert {r.path.split("/")[-2] for r in api.requests_to("GET", "/log$")} == set(LOGS)
    # Every phase change, once.
    for line in (
        f"run {RUN}: Running",
        f"step {S1}: Running",
        f"step {S1}: Succeeded",
        f"step {S2}: Running",
        f"step {S2}: Succeeded",
        f"run {RUN}: Succeeded",
    ):
        assert err.count(line + "\n") == 1, line
    assert err.index(f"step {S2}: Succeeded") < err.index(f"run {RUN}: Succeeded")


def test_a_run_without_jobs_is_bounded_by_its_database(api, program, kubeconfig, capsys):
    """A MySQL datasource: 20 steps at once (MySQL allows 151 connections by default), pods
    collected, the run deleted after a week, failed after three days, no token in sqlml's
    containers."""
    api.statuses = PROGRESS
    step_pods(api, LOGS)
    assert run(program, kubeconfig, "--datasource", URL) == 0, capsys.readouterr().err
    (create,) = api.requests_to("POST", f"{WORKFLOWS}$")
    spec = validated(yaml.safe_dump(create.body))["spec"]
    assert spec["parallelism"] == 20
    assert spec["podGC"]["strategy"] == "OnPodSuccess"
    assert spec["ttlStrategy"] == {"secondsAfterCompletion": 604800}
    assert spec["activeDeadlineSeconds"] == 259200
    assert spec["automountServiceAccountToken"] is False


def test_a_failed_step_is_named_at_its_statement_and_exits_1(api, program, kubeconfig, capsys):
    step_pods(api, LOGS)
    api.statuses = [
        status("Running", node(S1, "Succeeded"), node(S2, "Running")),
        status("Failed", node(S1, "Succeeded"), node(S2, "Failed", "Error (exit code 1)")),
    ]
    assert run(program, kubeconfig, "--datasource", URL) == 1
    out, err = capsys.readouterr()
    assert f"{program}:2:1: error: run {RUN} failed: step {S2} failed: Error (exit code 1)" in err
    assert f"hint: sqlml logs {RUN} --step {S2} -n ml" in err
    assert f"step {S2}: Failed (Error (exit code 1))" in err
    assert "Traceback" not in err
    assert_no_credentials(api, out, err)


def test_detach_submits_and_returns_the_name(api, program, kubeconfig, capsys):
    assert run(program, kubeconfig, "--datasource", URL, "--detach") == 0
    out, err = capsys.readouterr()
    assert out == f"{RUN}\n"
    assert not api.requests_to("GET", WORKFLOWS)
    assert f"sqlml logs {RUN} --follow -n ml" in err


def test_an_existing_secret_is_updated_keeping_its_other_keys(api, program, kubeconfig, capsys):
    old = base64.b64encode(b"mysql://old@h:3306/db").decode()
    api.secrets["ml", "creds"] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds", "namespace": "ml", "resourceVersion": "7"},
        "data": {"dsn": old, "other": "a2VlcA=="},
    }
    options = ("--datasource", URL, "--secret", "creds", "--secret-key", "dsn", "--detach")
    assert run(program, kubeconfig, *options) == 0
    (put,) = api.requests_to("PUT", "/secrets/creds$")
    assert put.body["metadata"]["resourceVersion"] == "7"  # an update, not a blind overwrite
    assert put.body["data"] == {"dsn": URL_B64, "other": "a2VlcA=="}
    (create,) = api.requests_to("POST", f"{WORKFLOWS}$")
    (sql,) = [t for t in create.body["spec"]["templates"] if t["name"] == "sql"]
    assert sql["container"]["env"][0]["valueFrom"]["secretKeyRef"] == {
        "name": "creds",
        "key": "dsn",
    }
    assert_no_credentials(api, *capsys.readouterr())


def test_without_a_datasource_the_secret_must_exist(api, program, kubeconfig, monkeypatch, capsys):
    monkeypatch.delenv("SQLML_DATASOURCE", raising=False)
    assert run(program, kubeconfig, "--detach") == 1
    err = capsys.readouterr().err
    assert (
        "the Secret 'sqlml-datasource' that gives the pods the datasource URL does not exist" in err
    )
    assert "hint: give --datasource URL" in err
    assert not api.requests_to("POST", ".")
    api.secrets["ml", "sqlml-datasource"] = {
        "metadata": {"name": "sqlml-datasource"},
        "data": {"url": URL_B64},
    }
    assert run(program, kubeconfig, "--detach") == 0
    assert [r.method for r in api.requests_to("POST", ".")] == ["POST"]  # the Workflow only
    assert not api.requests_to("PUT", ".")


def test_status_lists_the_steps_of_an_argo_run(api, program, kubeconfig, capsys):
    api.statuses = PROGRESS[1:2]
    run(program, kubeconfig, "--datasource", URL, "--detach")
    capsys.readouterr()
    options = ("--backend", "argo", "--kubeconfig", kubeconfig, "--format", "json")
    assert main(["status", RUN, *options]) == 0
    out, err = capsys.readouterr()
    assert err == f"run {RUN}: Running\n"
    rows = json.loads(out)
    assert [(row["step"], row["state"]) for row in rows] == [(S1, "Succeeded"), (S2, "Running")]


def test_status_of_a_local_run_reads_the_run_record(tmp_path, program, capsys):
    url = f"duckdb:///{tmp_path / 'record.duckdb'}"
    assert main(["run", program, "--datasource", url]) == 0
    err = capsys.readouterr().err
    run_id = err.split("run ", 1)[1].split(":", 1)[0].split()[0]
    assert main(["status", run_id, "--datasource", url, "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert err == f"run {run_id}: succeeded\n"
    lines = out.splitlines()
    assert lines[0] == "step,state,started,finished,message"
    assert [line.split(",")[:2] for line in lines[1:]] == [[S1, "succeeded"], [S2, "succeeded"]]
    assert main(["status", "nope", "--datasource", url]) == 1
    assert "there is no run 'nope'" in capsys.readouterr().err


def test_logs_of_one_step_and_of_all(api, program, kubeconfig, capsys):
    api.statuses = PROGRESS[2:]
    step_pods(api, LOGS)
    run(program, kubeconfig, "--datasource", URL, "--detach")
    capsys.readouterr()
    assert main(["logs", RUN, "--step", S1, "--kubeconfig", kubeconfig]) == 0
    assert capsys.readouterr().out == "created t\n"
    assert main(["logs", RUN, "--kubeconfig", kubeconfig, "-n", "ml"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"[{S1}] created t",
        f"[{S2}]   x",
        f"[{S2}] ---",
        f"[{S2}]   1",
        f"[{S2}] ",
    ]
    assert {tuple(r.query["follow"]) for r in api.requests_to("GET", "/log$")} == {("False",)}
    assert main(["logs", RUN, "--step", "s9", "--kubeconfig", kubeconfig]) == 1
    assert f"its steps: {S1}, {S2}" in capsys.readouterr().err
    del api.pods[pod(node(S1, ""))]  # deleted by Argo's pod garbage collection
    assert main(["logs", RUN, "--kubeconfig", kubeconfig]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"[{S2}]   x\n")
    assert err == f"no log of step {S1}: its pod {pod(node(S1, ''))} was deleted\n"


def test_logs_follow_waits_for_a_container_to_start(api, program, kubeconfig, capsys):
    api.statuses = PROGRESS
    step_pods(api, LOGS)
    run(program, kubeconfig, "--datasource", URL, "--detach")
    capsys.readouterr()
    # The first read of the log finds the container still starting (the kubelet's 400).
    api.pods[pod(node(S1, ""))].waiting = 1
    assert main(["logs", RUN, "--follow", "--step", S1, "--kubeconfig", kubeconfig]) == 0
    out, err = capsys.readouterr()
    assert out == "created t\n" and err == ""
    assert len(api.requests_to("GET", f"{pod(node(S1, ''))}/log$")) == 2
    assert not api.requests_to("GET", f"{pod(node(S2, ''))}/log$")


@pytest.mark.parametrize("terminate, shutdown", [(False, "Stop"), (True, "Terminate")])
def test_stop_patches_the_workflows_shutdown(api, program, kubeconfig, capsys, terminate, shutdown):
    run(program, kubeconfig, "--datasource", URL, "--detach")
    extra = ["--terminate"] if terminate else []
    assert main(["stop", RUN, "--kubeconfig", kubeconfig, *extra]) == 0
    (patch,) = api.requests_to("PATCH", ".")
    assert patch.path == f"{WORKFLOWS}/{RUN}"
    assert patch.body == {"spec": {"shutdown": shutdown}}
    assert patch.headers["content-type"] == "application/merge-patch+json"
    assert api.workflows["ml", RUN]["spec"]["shutdown"] == shutdown


def test_a_missing_run_is_a_clear_error(api, kubeconfig, capsys):
    assert main(["stop", "nope", "--kubeconfig", kubeconfig]) == 1
    assert main(["status", "nope", "--backend", "argo", "--kubeconfig", kubeconfig]) == 1
    err = capsys.readouterr().err
    assert err.count("there is no workflows.argoproj.io 'nope' in namespace 'ml'") == 2
    assert err.count("hint: give a run name that sqlml run --backend argo printed") == 2


def test_forbidden_names_the_missing_rbac_verb_and_resource(api, program, kubeconfig, capsys):
    api.fail("POST", "/secrets$", 403)
    assert run(program, kubeconfig, "--datasource", URL, "--namespace", "ml") == 1
    err = capsys.readouterr().err
    assert "error: you may not create secrets in namespace 'ml'" in err
    assert "hint: ask for a Role granting the RBAC verb 'create' on 'secrets'" in err
    api.failures.clear()
    api.fail("GET", "/log$", 403)
    api.statuses = PROGRESS[2:]
    assert run(program, kubeconfig, "--datasource", URL) == 0  # the run succeeded, logs aside
    assert "you may not get pods/log in namespace 'ml'" in capsys.readouterr().err


def test_argo_not_installed(api, program, kubeconfig, capsys):
    api.argo_installed = False
    assert run(program, kubeconfig, "--datasource", URL) == 1
    err = capsys.readouterr().err
    assert "does not serve workflows.argoproj.io: Argo Workflows is not installed" in err
    assert "hint: install Argo Workflows" in err


def test_a_missing_namespace(api, program, kubeconfig, capsys):
    assert run(program, kubeconfig, "--datasource", URL, "--namespace", "nope") == 1
    err = capsys.readouterr().err
    assert "error: namespace 'nope' does not exist" in err and "kubectl create namespace" in err


def test_rejected_credentials(api, program, kubeconfig, capsys):
    api.fail("GET", ".", 401)
    assert run(program, kubeconfig, "--datasource", URL) == 1
    assert "did not accept your credentials" in capsys.readouterr().err


def test_an_unreachable_api_server(tmp_path, program, capsys):
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with KubeStandin() as standin:
        config = standin.kubeconfig(tmp_path / "kubeconfig")
    text = config.read_text().replace(standin.url, f"http://127.0.0.1:{port}")
    config.write_text(text)
    assert run(program, str(config), "--datasource", URL) == 1
    err = capsys.readouterr().err
    assert f"cannot reach the Kubernetes API server at http://127.0.0.1:{port}" in err
    assert "Connection refused" in err and "Traceback" not in err


def test_no_kubernetes_configuration(tmp_path, program, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert main(["run", program, "--backend", "argo", "--datasource", URL]) == 1
    err = capsys.readouterr().err
    assert "error: no Kubernetes configuration" in err and "hint: give --kubeconfig PATH" in err
    (tmp_path / "bad").write_text("not: [a kubeconfig")
    assert main(["status", "r", "--backend", "argo", "--kubeconfig", str(tmp_path / "bad")]) == 1
    assert "cannot use the Kubernetes configuration" in capsys.readouterr().err


def test_without_the_kubernetes_client(program, kubeconfig, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    assert run(program, kubeconfig, "--datasource", URL) == 1
    assert "hint: pip install 'sqlml[kubernetes]'" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--resume", "r1"], ["--timeout", "9"], ["--junit", "j.xml"]])
def test_local_only_options_are_bad_usage(program, option, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", program, "--backend", "argo", *option])
    assert exit_.value.code == 2
    assert "--resume, --timeout and --junit are for the local backend" in capsys.readouterr().err


def test_pod_names_follow_argos_v2_rule_and_v1_annotation():
    # Argo's FNV-1a test vector: "hello" hashes to 1335831723.
    step = {"id": "wf-123", "name": "hello", "templateName": "train"}
    assert argo_backend.pod_name({"metadata": {"name": "wf"}}, step) == "wf-train-1335831723"
    v1 = {"metadata": {"name": "wf", "annotations": {argo_backend.POD_NAME_FORMAT: "v1"}}}
    assert argo_backend.pod_name(v1, step) == "wf-123"


def test_a_run_that_fails_before_any_step_reports_argos_message(api, program, kubeconfig, capsys):
    api.statuses = [{"phase": "Error", "message": "invalid spec: templates.sql: bad image"}]
    assert run(program, kubeconfig, "--datasource", URL) == 1
    err = capsys.readouterr().err
    assert f"error: run {RUN} ended Error: invalid spec: templates.sql: bad image" in err


def test_the_context_chooses_the_namespace(api, kubeconfig, capsys):
    config = json.loads(Path(kubeconfig).read_text())
    other = {"name": "other", "context": {"cluster": "standin", "user": "tester"}}
    config["contexts"].append(other)
    Path(kubeconfig).write_text(json.dumps(config))
    main(["stop", "r1", "--kubeconfig", kubeconfig])
    main(["stop", "r1", "--kubeconfig", kubeconfig, "--context", "other"])
    main(["stop", "r1", "--kubeconfig", kubeconfig, "--context", "other", "-n", "team"])
    assert [r.path.split("/")[5] for r in api.requests] == ["ml", "default", "team"]
    assert main(["stop", "r1", "--kubeconfig", kubeconfig, "--context", "nope"]) == 1
    assert "cannot use the Kubernetes configuration" in capsys.readouterr().err


def test_compressed_node_status_is_read():
    nodes = {"n1": node(S1, "Succeeded")}
    packed = base64.b64encode(gzip.compress(json.dumps(nodes).encode())).decode()
    workflow = {
        "metadata": {"name": RUN},
        "status": {"phase": "Running", "compressedNodes": packed},
    }
    (step,) = argo_backend.nodes(workflow)
    assert (step.label, step.phase, step.pod) == (S1, "Succeeded", pod(node(S1, "")))


def test_the_watch_rides_out_a_few_failed_reads(api, program, kubeconfig, capsys):
    api.statuses = PROGRESS
    step_pods(api, LOGS)
    api.fail("GET", f"{WORKFLOWS}/", 503, times=argo_backend.READ_RETRIES)
    assert run(program, kubeconfig, "--datasource", URL) == 0
    err = capsys.readouterr().err
    assert err.count(f"cannot read run {RUN} (") == argo_backend.READ_RETRIES
    assert f"run {RUN}: Succeeded" in err
    api.fail("GET", f"{WORKFLOWS}/", 503)  # for good
    assert run(program, kubeconfig, "--datasource", URL) == 1
    err = capsys.readouterr().err
    assert "refused to get workflows.argoproj.io in namespace 'ml': 503 scripted" in err


def test_logs_follow_a_step_that_has_not_started_yet(api, program, kubeconfig, capsys):
    api.statuses = PROGRESS  # S2 starts at the second read
    step_pods(api, LOGS)
    run(program, kubeconfig, "--datasource", URL, "--detach")
    capsys.readouterr()
    assert main(["logs", RUN, "--follow", "--step", S2, "--kubeconfig", kubeconfig]) == 0
    assert capsys.readouterr().out == "  x\n---\n  1\n\n"


# -- Kubeflow jobs and Katib Experiments: what a run creates, stops and trains in

JOBS_PROGRAM = """CREATE TABLE train AS SELECT 1.0 AS x, 2.0 AS y;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  train.workers = 2 LABEL y INTO xgb_model;
SELECT x, y FROM train TO TRAIN TFJobRegressor WITH train.distributed = true, train.ps = 1,
  train.workers = 1 LABEL y INTO dnn_model;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  eta = CHOICE(0.1, 0.3), search.trials = 2, search.metric = rmse LABEL y INTO searched;
"""
XGB, TF, SEARCH = "s2-train-xgb-model", "s3-train-dnn-model", "s4-train-searched-trials"
PLURALS = {"XGBoostJob": "xgboostjobs", "TFJob": "tfjobs", "Experiment": "experiments"}
T0, T1 = "2026-01-01T00:00:05Z", "2026-01-01T00:00:09Z"


@pytest.fixture
def jobs_program(tmp_path):
    file = tmp_path / "prog.sql"
    file.write_text(JOBS_PROGRAM)
    return str(file)


def argo_creates(api: KubeStandin, run: str = RUN) -> dict[str, dict[str, Any]]:
    """What Argo does for each resource step of the run, by task: its controller adds the
    Workflow as the manifest's controlling owner (v4.1.2, workflow/controller/operator.go,
    executeResource: metav1.NewControllerRef, so controller and blockOwnerDeletion are true),
    then its executor creates the object (``kubectl create -f``)."""
    workflow = api.workflows["ml", run]
    owner = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "name": run,
        "uid": workflow["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    created = {}
    for task in workflow["spec"]["templates"][0]["dag"]["tasks"]:
        if task["template"] not in ("resource", "resource-apply"):
            continue
        parameters = {p["name"]: p["value"] for p in task["arguments"]["parameters"]}
        uid = workflow["metadata"]["uid"]  # a global Argo substitutes
        manifest = json.loads(parameters["manifest"].replace("{{workflow.uid}}", uid))
        manifest["metadata"]["ownerReferences"] = [owner]
        created[task["name"]] = api.create(PLURALS[manifest["kind"]], manifest)
    return created


def condition(kind: str, type_: str, message: str, status: str = "True") -> dict[str, Any]:
    """A job condition as the training operator v1.9 writes it (pkg/util/status.go: the
    reason is the kind followed by the type)."""
    return {
        "type": type_,
        "status": status,
        "reason": f"{kind}{type_}",
        "message": message,
        "lastUpdateTime": T0,
        "lastTransitionTime": T0,
    }


def xgboost_running(name: str) -> dict[str, Any]:
    """An XGBoostJob's status while its pods run (xgboostjob_controller.go, UpdateJobStatus)."""
    return {
        "conditions": [
            condition("XGBoostJob", "Created", f"XGBoostJob {name} is created."),
            condition("XGBoostJob", "Running", f"XGBoostJob {name} is running."),
        ],
        "replicaStatuses": {"Master": {"active": 1}, "Worker": {"active": 2}},
        "startTime": T0,
        "lastReconcileTime": T1,
    }


def xgboost_succeeded(name: str) -> dict[str, Any]:
    """Its status once the Master succeeded: Running turned "False" when Succeeded was set."""
    return {
        "conditions": [
            condition("XGBoostJob", "Created", f"XGBoostJob {name} is created."),
            condition("XGBoostJob", "Running", f"XGBoostJob {name} is running.", "False"),
            condition("XGBoostJob", "Succeeded", f"XGBoostJob {name} is successfully completed."),
        ],
        "replicaStatuses": {"Master": {"succeeded": 1}, "Worker": {"succeeded": 2}},
        "startTime": T0,
        "completionTime": T1,
        "lastReconcileTime": T1,
    }


def tfjob_running(name: str) -> dict[str, Any]:
    """A TFJob's status while its pods run (tfjob_controller.go, UpdateJobStatus)."""
    return {
        "conditions": [
            condition("TFJob", "Created", f"TFJob {name} is created."),
            condition("TFJob", "Running", f"TFJob ml/{name} is running."),
        ],
        "replicaStatuses": {"Chief": {"active": 1}, "PS": {"active": 1}, "Worker": {"active": 1}},
        "startTime": T0,
        "lastReconcileTime": T1,
    }


def experiment_running(trials: list[str]) -> dict[str, Any]:
    """A Katib Experiment's status while its trials run (katib v0.19, experiment_controller.go
    sets completionTime to a zero time, serialised as null, when it creates the Experiment)."""

    def katib(type_: str, reason: str, message: str) -> dict[str, Any]:
        return {
            "type": type_,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastUpdateTime": T0,
            "lastTransitionTime": T0,
        }

    return {
        "startTime": T0,
        "completionTime": None,
        "conditions": [
            katib("Created", "ExperimentCreated", "Experiment is created"),
            katib("Running", "ExperimentRunning", "Experiment is running"),
        ],
        "currentOptimalTrial": {"observation": {}},
        "runningTrialList": trials,
        "trials": len(trials),
        "trialsRunning": len(trials),
    }


def resource_node(task: str, phase: str) -> dict[str, Any]:
    """A resource step's node: a job's template applies it, an Experiment's creates it."""
    return node(task, phase, template="resource" if task == SEARCH else "resource-apply")


def jobs_running() -> dict[str, Any]:
    return status(
        "Running",
        node("s1-create", "Succeeded"),
        resource_node(XGB, "Running"),
        resource_node(TF, "Running"),
        resource_node(SEARCH, "Running"),
    )


KLOG = "I1205 10:00:03.000000      14 main.go:143]"  # klog v2's header of an info line


def training_pods(api: KubeStandin, created: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The pods the operators create for the run's jobs and Experiment, labelled as they label
    them (training operator v1.9: pkg/controller.v1/common/pod.go; Katib v0.19's pod webhook:
    the trial's labels and katib.kubeflow.org/trial), each logging one line. Their names by
    label."""
    xgb, tf, search = (created[task]["metadata"]["name"] for task in (XGB, TF, SEARCH))
    names = {}

    def replica(job: str, operator: str, type_: str, index: int, container: str, task: str):
        name = f"{job}-{type_}-{index}"
        labels = {
            "training.kubeflow.org/operator-name": operator,
            "training.kubeflow.org/job-name": job,
            "training.kubeflow.org/replica-type": type_,
            "training.kubeflow.org/replica-index": str(index),
        }
        if type_ in ("master", "chief"):
            labels["training.kubeflow.org/job-role"] = "master"
        api.add_pod(Pod(name, labels, containers=(container,)), {container: [f"{type_} {index}"]})
        names[f"{task}/{type_}-{index}"] = name

    for type_, index in (("worker", 1), ("master", 0), ("worker", 0)):
        replica(xgb, "xgboostjob-controller", type_, index, "xgboost", XGB)
    for type_ in ("ps", "worker", "chief"):
        replica(tf, "tfjob-controller", type_, 0, "tensorflow", TF)
    for trial in (f"{search}-kx7r2b9m", f"{search}-q4ttvz8c"):
        labels = {"katib.kubeflow.org/experiment": search, "katib.kubeflow.org/trial": trial}
        labels["batch.kubernetes.io/job-name"] = labels["job-name"] = trial
        # Katib's StdOut collector: the trial's output goes to its metrics file, which the
        # collector Katib injects prints through klog; the training container logs nothing.
        containers = ("training-container", "metrics-logger-and-collector")
        said = {containers[0]: [], containers[1]: [f"{KLOG} trial {trial}"]}
        api.add_pod(Pod(f"{trial}-5fzqn", labels, containers), said)
        names[f"{SEARCH}/{trial}"] = f"{trial}-5fzqn"
    # The suggestion's pod has the experiment's label too, but no trial's.
    suggestion = {"katib.kubeflow.org/experiment": search, "katib.kubeflow.org/suggestion": search}
    api.add_pod(Pod(f"{search}-random-6b9c8d7f5-2xkzl", suggestion, ("suggestion",)))
    return names


def test_stop_deletes_the_running_jobs_and_experiments_the_run_created(
    api, jobs_program, kubeconfig, capsys
):
    assert run(jobs_program, kubeconfig, "--datasource", URL, "--detach") == 0
    created = argo_creates(api)
    names = {task: obj["metadata"]["name"] for task, obj in created.items()}
    # Another run's TFJob, and one nobody owns: not this run's to stop.
    others = []
    for owner_uid in ("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", None):
        other = copy.deepcopy(created[TF])
        metadata = other["metadata"]
        for key in ("uid", "resourceVersion", "creationTimestamp", "generation"):
            metadata.pop(key)
        metadata["name"] = f"other-{len(others)}"
        if owner_uid:
            metadata["ownerReferences"][0].update(name="prog-zzzzz", uid=owner_uid)
        else:
            del metadata["ownerReferences"]
        others.append(api.create("tfjobs", other)["metadata"]["name"])
    api.objects["xgboostjobs"]["ml", names[XGB]]["status"] = xgboost_running(names[XGB])
    api.objects["tfjobs"]["ml", names[TF]]["status"] = tfjob_running(names[TF])
    api.objects["experiments"]["ml", names[SEARCH]]["status"] = experiment_running([])
    api.statuses = [jobs_running()]
    capsys.readouterr()
    api.requests.clear()

    assert main(["stop", RUN, "--kubeconfig", kubeconfig]) == 0
    err = capsys.readouterr().err
    # Read the run, stop it, then find its objects by the Workflow's uid and delete them.
    calls = api.calls()
    assert calls[:2] == [("GET", f"{WORKFLOWS}/{RUN}"), ("PATCH", f"{WORKFLOWS}/{RUN}")]
    lists = [path for method, path in calls if method == "GET"][1:]
    assert sorted(lists) == [
        "/apis/kubeflow.org/v1/namespaces/ml/tfjobs",
        "/apis/kubeflow.org/v1/namespaces/ml/xgboostjobs",
        "/apis/kubeflow.org/v1beta1/namespaces/ml/experiments",
    ]  # only the kinds the run's resource steps create
    deletes = api.requests_to("DELETE", ".")
    assert sorted(r.path for r in deletes) == sorted(
        [
            f"/apis/kubeflow.org/v1/namespaces/ml/xgboostjobs/{names[XGB]}",
            f"/apis/kubeflow.org/v1/namespaces/ml/tfjobs/{names[TF]}",
            f"/apis/kubeflow.org/v1beta1/namespaces/ml/experiments/{names[SEARCH]}",
        ]
    )
    for request in deletes:  # dependents first: the pods, an Experiment's trials and theirs
        assert request.query["propagationPolicy"] == ["Foreground"]
    assert not api.objects["xgboostjobs"] and not api.objects["experiments"]
    assert sorted(name for _, name in api.objects["tfjobs"]) == sorted(others)
    assert api.workflows["ml", RUN]["spec"]["shutdown"] == "Stop"
    assert err.splitlines() == [
        f"asked run {RUN} to stop",
        f"stopped XGBoostJob {names[XGB]} of step {XGB}: deleted with its pods",
        f"stopped TFJob {names[TF]} of step {TF}: deleted with its pods",
        f"stopped Experiment {names[SEARCH]} of step {SEARCH}: deleted with its trials",
    ]


def test_stop_leaves_finished_jobs_and_skips_kinds_not_served(
    api, jobs_program, kubeconfig, capsys
):
    """A job that has ended keeps its pods' logs; Katib not installed: nothing to look at."""
    assert run(jobs_program, kubeconfig, "--datasource", URL, "--detach") == 0
    created = argo_creates(api)
    xgb, tf = (created[task]["metadata"]["name"] for task in (XGB, TF))
    api.objects["xgboostjobs"]["ml", xgb]["status"] = xgboost_succeeded(xgb)
    del api.objects["experiments"]["ml", created[SEARCH]["metadata"]["name"]]
    del api.served["experiments"]  # 404 page not found, as for a CRD not installed
    api.statuses = [jobs_running()]
    capsys.readouterr()
    assert main(["stop", RUN, "--kubeconfig", kubeconfig, "--terminate"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"asked run {RUN} to terminate (no exit handlers)",
        f"stopped TFJob {tf} of step {TF}: deleted with its pods",
    ]
    (delete,) = api.requests_to("DELETE", ".")
    assert delete.path.endswith(f"/tfjobs/{tf}")
    assert ("ml", xgb) in api.objects["xgboostjobs"]
    assert api.requests_to("GET", "/experiments$")  # asked, and answered 404: skipped
    assert api.workflows["ml", RUN]["spec"]["shutdown"] == "Terminate"


def test_stop_without_the_right_to_list_a_kind_names_the_verb(
    api, jobs_program, kubeconfig, capsys
):
    assert run(jobs_program, kubeconfig, "--datasource", URL, "--detach") == 0
    argo_creates(api)
    api.statuses = [jobs_running()]
    api.fail("GET", "/xgboostjobs$", 403)
    capsys.readouterr()
    assert main(["stop", RUN, "--kubeconfig", kubeconfig]) == 1
    err = capsys.readouterr().err
    assert f"asked run {RUN} to stop" in err
    assert "error: you may not list xgboostjobs.kubeflow.org in namespace 'ml'" in err
    assert "hint: ask for a Role granting the RBAC verb 'list' on 'xgboostjobs.kubeflow.org'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("phase", ["Succeeded", "Failed", "Error"])
def test_stop_of_a_run_that_has_ended_changes_nothing(api, jobs_program, kubeconfig, capsys, phase):
    assert run(jobs_program, kubeconfig, "--datasource", URL, "--detach") == 0
    argo_creates(api)
    api.statuses = [status(phase, node("s1-create", "Succeeded"))]
    capsys.readouterr()
    api.requests.clear()
    assert main(["stop", RUN, "--kubeconfig", kubeconfig]) == 0
    assert capsys.readouterr().err == f"run {RUN} already ended: {phase}; nothing to stop\n"
    assert api.calls() == [("GET", f"{WORKFLOWS}/{RUN}")]  # no PATCH, no DELETE


def test_a_program_without_jobs_stops_without_listing_any(api, program, kubeconfig, capsys):
    run(program, kubeconfig, "--datasource", URL, "--detach")
    api.statuses = PROGRESS[:1]
    api.requests.clear()
    assert main(["stop", RUN, "--kubeconfig", kubeconfig]) == 0
    assert api.calls() == [("GET", f"{WORKFLOWS}/{RUN}"), ("PATCH", f"{WORKFLOWS}/{RUN}")]


def finished_jobs_run(api: KubeStandin) -> dict[str, str]:
    created = argo_creates(api)
    names = training_pods(api, created)
    api.statuses = [
        status(
            "Succeeded",
            node("s1-create", "Succeeded"),
            resource_node(XGB, "Succeeded"),
            resource_node(TF, "Succeeded"),
            resource_node(SEARCH, "Succeeded"),
            {  # after the trials
                **node("s4-train-searched", "Succeeded", template="search"),
                "startedAt": "2026-01-01T00:00:05Z",
            },
        )
    ]
    step_pods(
        api,
        {
            pod(node("s1-create", "")): ["created train"],
            pod(resource_node(XGB, "")): ["created xgboostjob"],
            pod(resource_node(TF, "")): ["created tfjob"],
            pod(resource_node(SEARCH, "")): ["created experiment"],
            pod(node("s4-train-searched", "", template="search")): ["best trial kept"],
        },
    )
    for task in (XGB, TF, SEARCH):  # resource steps' pods have a main container only
        api.pods[pod(resource_node(task, ""))].containers = ("main",)
        api.pods[pod(resource_node(task, ""))].init_containers = ()
    return names


def test_logs_show_the_replica_and_trial_pods_of_each_step(api, jobs_program, kubeconfig, capsys):
    assert run(jobs_program, kubeconfig, "--datasource", URL, "--detach") == 0
    names = finished_jobs_run(api)
    capsys.readouterr()
    assert main(["logs", RUN, "--kubeconfig", kubeconfig]) == 0
    out, err = capsys.readouterr()
    trials = sorted(label for label in names if label.startswith(SEARCH))
    assert out.splitlines() == [
        "[s1-create] created train",
        f"[{XGB}] created xgboostjob",
        f"[{XGB}/master-0] master 0",
        f"[{XGB}/worker-0] worker 0",
        f"[{XGB}/worker-1] worker 1",
        f"[{TF}] created tfjob",
        f"[{TF}/chief-0] chief 0",
        f"[{TF}/worker-0] worker 0",
        f"[{TF}/ps-0] ps 0",
        f"[{SEARCH}] created experiment",
        *(f"[{label}] trial {label.split('/')[1]}" for label in trials),
        "[s4-train-searched] best trial kept",
    ]
    assert err == ""
    # Each pod's log from the container its operator runs the training in.
    containers = {
        r.path.split("/")[-2]: r.query["container"] for r in api.requests_to("GET", "/log$")
    }
    for label, name in names.items():
        expected = {XGB: "xgboost", TF: "tensorflow", SEARCH: "metrics-logger-and-collector"}
        assert containers[name] == [expected[label.split("/")[0]]], label
    # Pods found by the operators' labels, never listing the whole namespace.
    selectors = sorted(r.query["labelSelector"][0] for r in api.requests_to("GET", "/pods$"))
    created = {task: obj["metadata"]["name"] for task, obj in argo_creates_names(api).items()}
    assert selectors == sorted(
        [
            f"katib.kubeflow.org/experiment={created[SEARCH]},katib.kubeflow.org/trial",
            f"training.kubeflow.org/job-name={created[TF]},"
            "training.kubeflow.org/operator-name=tfjob-controller",
            f"training.kubeflow.org/job-name={created[XGB]},"
            "training.kubeflow.org/operator-name=xgboostjob-controller",
        ]
    )
    # --step: that step's main container unlabelled, its replicas labelled.
    assert main(["logs", RUN, "--step", TF, "--kubeconfig", kubeconfig]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "created tfjob",
        f"[{TF}/chief-0] chief 0",
        f"[{TF}/worker-0] worker 0",
        f"[{TF}/ps-0] ps 0",
    ]


def argo_creates_names(api: KubeStandin) -> dict[str, dict[str, Any]]:
    """The objects argo_creates made, by task (from the stand-in's store: one of each kind)."""
    kinds = {XGB: "xgboostjobs", TF: "tfjobs", SEARCH: "experiments"}
    found = {task: list(api.objects[plural].values()) for task, plural in kinds.items()}
    assert all(len(objects) == 1 for objects in found.values()), found
    return {task: objects[0] for task, objects in found.items()}


def test_logs_of_a_pod_not_started_or_deleted_say_so(api, jobs_program, kubeconfig, capsys):
    assert run(jobs_program, kubeconfig, "--datasource", URL, "--detach") == 0
    names = finished_jobs_run(api)
    api.pods[names[f"{XGB}/worker-1"]].waiting = -1  # never starts
    api.pods[names[f"{XGB}/worker-0"]].node = None  # not scheduled
    capsys.readouterr()
    assert main(["logs", RUN, "--step", XGB, "--kubeconfig", kubeconfig]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["created xgboostjob", f"[{XGB}/master-0] master 0"]
    worker0, worker1 = names[f"{XGB}/worker-0"], names[f"{XGB}/worker-1"]
    assert err.splitlines() == [
        f"no log of {XGB}/worker-0 yet: its pod {worker0} waits for a node",
        f'no log of {XGB}/worker-1 yet: container "xgboost" in pod "{worker1}" is waiting to '
        "start: ContainerCreating",
    ]


def test_logs_follow_streams_training_pods_as_they_start(api, jobs_program, kubeconfig, capsys):
    assert run(jobs_program, kubeconfig, "--datasource", URL, "--detach") == 0
    created = argo_creates(api)
    names = training_pods(api, created)
    xgb = created[XGB]["metadata"]["name"]
    api.objects["xgboostjobs"]["ml", xgb]["status"] = xgboost_running(xgb)
    api.pods[names[f"{XGB}/worker-1"]].appears = 2  # created by the operator later
    api.pods[names[f"{XGB}/master-0"]].waiting = 2  # its container starts after two reads
    step_pods(api, {pod(resource_node(XGB, "")): ["created xgboostjob"]})
    api.pods[pod(resource_node(XGB, ""))].containers = ("main",)
    api.pods[pod(resource_node(XGB, ""))].init_containers = ()
    api.statuses = [
        status("Running", resource_node(XGB, "Pending")),
        status("Running", resource_node(XGB, "Running")),
        status("Running", resource_node(XGB, "Running")),
        status("Running", resource_node(XGB, "Running")),
        status("Succeeded", resource_node(XGB, "Succeeded")),
    ]
    capsys.readouterr()
    assert main(["logs", RUN, "--follow", "--step", XGB, "--kubeconfig", kubeconfig]) == 0
    out, err = capsys.readouterr()
    assert sorted(out.splitlines()) == sorted(
        [
            "created xgboostjob",
            f"[{XGB}/master-0] master 0",
            f"[{XGB}/worker-0] worker 0",
            f"[{XGB}/worker-1] worker 1",
        ]
    )
    assert err == ""
    master = names[f"{XGB}/master-0"]
    reads = api.requests_to("GET", f"/pods/{master}/log$")
    assert len(reads) == 3  # twice "waiting to start", then its log
    assert all(r.query["container"] == ["xgboost"] for r in reads)
    assert not api.requests_to("GET", "/tfjobs|/experiments")  # --step: only that step's kind


def test_a_run_streams_its_training_pods_and_reports_a_forbidden_list_once(
    api, jobs_program, kubeconfig, capsys
):
    """While ``sqlml run`` watches, training pods' logs stream too; a submitter who may not
    list pods still sees the run to its end, told once what is missing."""
    api.statuses = [
        status("Running", resource_node(XGB, "Running")),
        status("Running", resource_node(XGB, "Running")),
        status("Succeeded", resource_node(XGB, "Succeeded")),
    ]

    api.fail("GET", "/pods$", 403)
    assert run(jobs_program, kubeconfig, "--datasource", URL, "--detach") == 0
    argo_creates(api)
    capsys.readouterr()
    watched = argo_backend.Watch(argo_backend.Kube(argo_backend.Cluster(kubeconfig)), RUN, True)
    assert watched.run()["status"]["phase"] == "Succeeded"
    err = capsys.readouterr().err
    assert err.count("you may not list pods in namespace 'ml'") == 1
    assert f"no logs of step {XGB}'s training pods: you may not list pods" in err
    assert f"run {RUN}: Succeeded" in err


def test_a_quantity_that_is_none_is_refused_before_any_request(api, program, kubeconfig, capsys):
    assert run(program, kubeconfig, "--datasource", URL, "--memory", "lots") == 1
    err = capsys.readouterr().err
    assert "error: the memory quantity 'lots' must be a Kubernetes quantity" in err
    assert "hint: e.g. --cpu 500m --memory 2Gi" in err and "Traceback" not in err
    assert not api.requests_to("POST", f"{WORKFLOWS}$")


def test_an_invalid_object_is_one_clear_line(api, program, kubeconfig, capsys, monkeypatch):
    """The API server's 422 Invalid (here the Workflow CRD's schema refuses a memory request
    that is no quantity, sqlml's own check of it turned off): one line naming the field, a
    hint, no traceback, no run."""
    from sqlml.semantics import quantities

    monkeypatch.setattr(quantities, "quantity", lambda value: 1)
    assert run(program, kubeconfig, "--datasource", URL, "--memory", "lots") == 1
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith(
        f"{program}: error: the Kubernetes API server refused the workflows.argoproj.io "
        f"'{RUN}' in namespace 'ml' as invalid: spec.templates[1].container.resources.requests"
        ".memory: must match the pattern"
    ), first
    assert first.endswith(": 'lots'")
    assert "hint: fix the option that set that field (--memory, --cpu, --image...)" in err
    assert "Traceback" not in err and len(err.splitlines()) == 2
    (create,) = api.requests_to("POST", f"{WORKFLOWS}$")
    assert create.body["metadata"]["generateName"] == "prog-"
    assert not api.workflows


def test_the_standin_validates_what_it_stores(api):
    """Every object created or replaced goes through tests/k8s_validation.py."""
    from tests import k8s_validation

    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"generateName": "Bad_Name-"},
        "spec": {"tfReplicaSpecs": {}},
    }
    assert k8s_validation.validate(job)  # the validator refuses it...
    with pytest.raises(AssertionError, match="422"):  # ... so the stand-in does too
        api.create("tfjobs", job)


def test_generate_name_gives_the_names_the_api_server_would(api):
    """The prefix cut to 58 characters, then 5 of utilrand's characters (k8s.io/apiserver,
    storage/names.SimpleNameGenerator)."""
    api.suffixes.clear()
    made = {api.generate_name("prog-") for _ in range(50)}
    assert len(made) == 50
    for name in made:
        assert len(name) == 10 and name.startswith("prog-")
        assert set(name[5:]) <= set(SUFFIX_ALPHABET)
    long = "p" * 70 + "-"
    name = api.generate_name(long)
    assert len(name) == 63 and name[:58] == "p" * 58 and set(name[58:]) <= set(SUFFIX_ALPHABET)
    # sqlml's job prefixes leave room for the suffix: nothing it creates is cut.
    prefix = "x" * 57 + "-"
    assert api.generate_name(prefix).startswith(prefix)


def test_a_taken_name_and_a_stale_update_are_conflicts(api, kubeconfig):
    workflow = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": "fixed"},
        "spec": {
            "entrypoint": "main",
            "templates": [{"name": "main", "container": {"image": "i"}}],
        },
    }
    stored = api.create("workflows", workflow)
    kube = argo_backend.Kube(argo_backend.Cluster(kubeconfig))
    with pytest.raises(argo_backend.ApiError) as error:
        argo_backend.submit(kube, workflow)
    assert error.value.status == 409 and error.value.reason == "AlreadyExists"
    stale = {**stored, "metadata": {**stored["metadata"], "resourceVersion": "1"}}
    with (
        pytest.raises(argo_backend.ApiError) as error,
        kube.call("update", "workflows.argoproj.io", "fixed"),
    ):
        kube.custom.replace_namespaced_custom_object(
            "argoproj.io", "v1alpha1", "ml", "workflows", "fixed", stale
        )
    assert error.value.status == 409 and error.value.reason == "Conflict"
    assert "the object has been modified" in error.value.message


def test_a_secret_changed_meanwhile_is_read_again_and_updated(api, program, kubeconfig):
    """A concurrent change of the datasource Secret (409 on the update) is read again, and
    sqlml's key written over it, keeping the other keys."""
    api.secrets["ml", "sqlml-datasource"] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "sqlml-datasource", "namespace": "ml", "resourceVersion": "7"},
        "data": {"url": "b2xk", "other": "a2VlcA=="},
    }
    api.fail("PUT", "/secrets/sqlml-datasource$", 409, times=1)
    assert run(program, kubeconfig, "--datasource", URL, "--detach") == 0
    assert len(api.requests_to("PUT", "/secrets/")) == 2
    assert api.secrets["ml", "sqlml-datasource"]["data"] == {"url": URL_B64, "other": "a2VlcA=="}
