"""``sqlml run --backend argo``, ``status``, ``logs`` and ``stop`` against a stand-in.

The API server here is tests/kube_standin.py: a loopback HTTP server that records requests
and answers from a script. It is not a cluster: no pod runs, no Argo controller moves the
workflow; the statuses and logs are scripted, and these tests check what sqlml sends and how
it reports what it gets back.
"""

from __future__ import annotations

import base64
import gzip
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sqlml.cli import main
from sqlml.workflow import argo_backend
from tests.kube_standin import TOKEN, KubeStandin
from tests.test_argo import validated

pytest.importorskip("kubernetes")

PASSWORD = "s3cr3t-SENTINEL-pw"
URL = f"mysql://ml:{PASSWORD}@mysql.db.svc:3306/analytics"
URL_B64 = base64.b64encode(URL.encode()).decode()
PROGRAM = "CREATE TABLE t AS SELECT 1 AS x;\nSELECT * FROM t;\n"
RUN = "prog-x0001"  # the stand-in's name for the first workflow of prog.sql
WORKFLOWS = "/apis/argoproj.io/v1alpha1/namespaces/ml/workflows"


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(argo_backend, "POLL_SECONDS", 0.0)


@pytest.fixture
def api():
    with KubeStandin() as standin:
        yield standin


@pytest.fixture
def program(tmp_path):
    file = tmp_path / "prog.sql"
    file.write_text(PROGRAM)
    return str(file)


@pytest.fixture
def kubeconfig(api, tmp_path):
    return str(api.kubeconfig(tmp_path / "kubeconfig"))


def node(task: str, phase: str, message: str = "") -> dict[str, Any]:
    """A Pod node of the run's status, as Argo's controller writes it (times made up)."""
    return {
        "id": f"{RUN}-{task}",
        "name": f"{RUN}.{task}",
        "displayName": task,
        "type": "Pod",
        "templateName": "sql",
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
    api.statuses, api.logs = PROGRESS, LOGS
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
        }
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


def test_a_failed_step_is_named_at_its_statement_and_exits_1(api, program, kubeconfig, capsys):
    api.logs = LOGS
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
    api.statuses, api.logs = PROGRESS[2:], dict(LOGS)
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
    del api.logs[pod(node(S1, ""))]  # deleted by Argo's pod garbage collection
    assert main(["logs", RUN, "--kubeconfig", kubeconfig]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"[{S2}]   x\n")
    assert err == f"no log of step {S1}: its pod {pod(node(S1, ''))} was deleted\n"


def test_logs_follow_waits_for_a_container_to_start(api, program, kubeconfig, capsys):
    api.statuses, api.logs = PROGRESS, LOGS
    run(program, kubeconfig, "--datasource", URL, "--detach")
    capsys.readouterr()
    # The first read of the log finds the container still starting (HTTP 400).
    api.fail("GET", f"{pod(node(S1, ''))}/log$", 400, times=1)
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
    api.statuses, api.logs = PROGRESS, LOGS
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
    api.statuses, api.logs = PROGRESS, LOGS  # S2 starts at the second read
    run(program, kubeconfig, "--datasource", URL, "--detach")
    capsys.readouterr()
    assert main(["logs", RUN, "--follow", "--step", S2, "--kubeconfig", kubeconfig]) == 0
    assert capsys.readouterr().out == "  x\n---\n  1\n\n"
