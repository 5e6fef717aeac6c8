"""sqlml ui's Argo runs: a run ``sqlml run --backend argo`` submitted is listed, drawn and
stopped from the page, its steps' logs and errors read from the Kubernetes API.

The API server is tests/kube_standin.py, a loopback stand-in that records requests and
answers from what the test put in it (not a cluster: no Argo controller moves the Workflow;
its statuses are scripted here as the controller writes them).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("networkx")
pytest.importorskip("kubernetes")

from starlette.testclient import TestClient

from sqlml.backends.argo import views as argo_runs
from sqlml.backends.argo.submission import ARGO_FILE
from sqlml.cli import main
from sqlml.ui.server import Settings, create_app
from tests.kube_standin import TOKEN, KubeStandin
from tests.test_argo_backend import (
    JOBS_PROGRAM,
    RUN,
    SEARCH,
    SUFFIX,
    TF,
    WORKFLOWS,
    finished_jobs_run,
    node,
    pod,
    status,
    step_pods,
)

pytestmark = pytest.mark.usefixtures("tfjob_family")  # TFJobRegressor: a TFJob

PASSWORD = "s3cr3t-SENTINEL-pw"
URL = f"postgresql://root:{PASSWORD}@127.0.0.1:5432/test"
PROGRAM = """CREATE TABLE t AS SELECT 1 AS x;
CREATE TABLE u AS SELECT x FROM t;
CREATE TABLE v AS SELECT x FROM u;
"""
S1, S2, S3 = "s1-create", "s2-create", "s3-create"
SAME_SITE = {"origin": "http://testserver"}
ROW = re.compile(r'<tr class="run" data-run="([^"]+)" data-state="([^"]+)" data-backend="argo">')
NODE = re.compile(r'<g class="node" data-step="([^"]+)" data-state="([^"]+)"')
# A node and the steps it waits for (sqlml/ui/templates/dag.html).
AFTER = re.compile(r'<g class="node" data-step="([^"]+)" data-state="[^"]+" data-after="([^"]+)"')


@pytest.fixture(autouse=True)
def fresh_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request reads the Workflow again (no read kept from another test)."""
    monkeypatch.setattr(argo_runs, "LIST_SECONDS", 0.0)
    monkeypatch.setattr(argo_runs, "PAGE_SECONDS", 0.0)
    monkeypatch.setattr(argo_runs, "_read_at", {})
    monkeypatch.setattr(argo_runs, "_down", {})


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SQLML_RUN_DIR", str(tmp_path / "runs"))
    (tmp_path / "prog.sql").write_text(PROGRAM)
    return tmp_path


@pytest.fixture
def api():
    with KubeStandin(suffixes=[SUFFIX]) as standin:
        yield standin
    assert not standin.errors, standin.errors[0]


def submit(folder: Path, api: KubeStandin, capsys: pytest.CaptureFixture[str]) -> None:
    """``sqlml run prog.sql --backend argo --detach`` to the stand-in."""
    config = str(api.kubeconfig(folder / "kubeconfig"))
    assert main(["run", "prog.sql", "--backend", "argo", "--kubeconfig", config,
                 "--datasource", URL, "--detach"]) == 0  # fmt: skip
    assert capsys.readouterr().out.strip() == RUN


def ui(folder: Path, url: str = URL) -> TestClient:
    return TestClient(create_app(Settings(url, folder / "runs", folder)))


def omitted(task: str) -> dict[str, Any]:
    """A task Argo's controller did not run because a task it depends on failed."""
    return {**node(task, "Omitted", "omitted: depends condition not met"), "type": "Skipped"}


FAILED = status(
    "Failed",
    node(S1, "Succeeded"),
    node(S2, "Failed", "Error (exit code 1)"),
    omitted(S3),
)


def test_the_submission_is_recorded_with_its_dag_and_no_credential(folder, api, capsys):
    submit(folder, api, capsys)
    text = (folder / "runs" / RUN / ARGO_FILE).read_text()
    assert PASSWORD not in text and TOKEN not in text
    record = json.loads(text)
    assert record["namespace"] == "ml" and record["server"] == api.url
    assert record["datasource"] == "postgresql://root@127.0.0.1:5432/test"
    assert record["source"] == str(folder / "prog.sql")
    assert [(s["name"], s["after"], s["line"]) for s in record["steps"]] == [
        (S1, [], 1),
        (S2, [S1], 2),
        (S3, [S2], 3),
    ]
    assert record["steps"][1]["text"] == "CREATE TABLE u AS SELECT x FROM t"


def test_a_failed_argo_run_is_listed_drawn_and_its_step_explained(folder, api, capsys):
    submit(folder, api, capsys)
    step_pods(api, {pod(node(S2, "")): ["reading t", f"connect {URL} failed"]})
    api.statuses = [FAILED]
    client = ui(folder)

    listing = client.get("/runs")
    assert listing.status_code == 200
    assert ROW.findall(listing.text) == [(RUN, "failed")]
    assert ROW.findall(client.get("/runs", params={"state": "running"}).text) == []
    assert ROW.findall(client.get("/runs", params={"q": "prog.sql"}).text) == [(RUN, "failed")]
    # Another datasource's page does not list it.
    assert ROW.findall(ui(folder, "postgresql://root@127.0.0.1:5432/other").get("/runs").text) == []

    page = client.get(f"/runs/{RUN}")
    assert page.status_code == 200
    assert dict(NODE.findall(page.text)) == {S1: "succeeded", S2: "failed", S3: "omitted"}
    assert AFTER.findall(page.text) == [(S2, S1), (S3, S2)]
    assert '<path class="edges" d="M' in page.text
    assert '<span id="run-state" class="state" data-state="failed">failed</span>' in page.text
    assert re.search(r'<button id="stop" type="button" hidden>', page.text)
    assert "namespace ml" in page.text

    state = client.get(f"/runs/{RUN}/state").json()
    assert state["state"] == "failed" and not state["stoppable"] and not state["resumable"]
    assert state["steps"][S2][0] == "failed"
    details = client.get(f"/runs/{RUN}/steps/{S2}").json()
    assert details["error"] == "Error (exit code 1)"
    assert details["statement"] == "CREATE TABLE u AS SELECT x FROM t"
    assert (details["line"], details["column"], details["attempts"]) == (2, 1, 1)
    assert [a["error"] for a in details["failed_attempts"]] == ["Error (exit code 1)"]

    log = client.get(f"/runs/{RUN}/steps/{S2}/log")
    assert log.status_code == 200
    assert log.text == "reading t\nconnect postgresql://root:***@127.0.0.1:5432/test failed\n"
    (read,) = api.requests_to("GET", "/log$")
    assert read.path.endswith(f"/pods/{pod(node(S2, ''))}/log")
    assert read.query["container"] == ["main"] and read.query.get("follow") in (None, ["False"])
    assert client.get(f"/runs/{RUN}/steps/{S3}/log").status_code == 404  # it never ran
    resumed = client.post(f"/runs/{RUN}/resume", headers=SAME_SITE)
    assert resumed.status_code == 409 and "resumes local runs only" in resumed.json()["error"]

    for path in ("/runs", f"/runs/{RUN}", f"/runs/{RUN}/steps/{S2}", f"/runs/{RUN}/steps/{S2}/log"):
        answer = client.get(path).text
        assert PASSWORD not in answer and TOKEN not in answer, path


def test_stop_asks_argo_to_stop_as_argo_stop_does(folder, api, capsys):
    submit(folder, api, capsys)
    api.statuses = [status("Running", node(S1, "Succeeded"), node(S2, "Running"))]
    client = ui(folder)
    page = client.get(f"/runs/{RUN}").text
    assert dict(NODE.findall(page)) == {S1: "succeeded", S2: "running", S3: "pending"}
    assert re.search(r'<button id="stop" type="button" >', page)
    assert client.get(f"/runs/{RUN}/state").json()["stoppable"]

    stopped = client.post(f"/runs/{RUN}/stop", headers=SAME_SITE)
    assert stopped.status_code == 200 and stopped.json() == {"run": RUN, "stopping": True}
    (patch,) = api.requests_to("PATCH", ".")
    assert patch.path == f"{WORKFLOWS}/{RUN}"
    assert patch.body == {"spec": {"shutdown": "Stop"}}
    assert patch.headers["content-type"] == "application/merge-patch+json"

    # What Argo's controller then writes: the run failed "Stopped with strategy 'Stop'".
    api.statuses = [
        {
            **status(
                "Failed",
                node(S1, "Succeeded"),
                node(S2, "Failed", "workflow shutdown with strategy:  Stop"),
                omitted(S3),
            ),
            "message": "Stopped with strategy 'Stop'",
        }
    ]
    state = client.get(f"/runs/{RUN}/state").json()
    assert state["state"] == "cancelled" and state["steps"][S2][0] == "cancelled"
    assert ROW.findall(client.get("/runs").text) == [(RUN, "cancelled")]
    again = client.post(f"/runs/{RUN}/stop", headers=SAME_SITE)
    assert again.status_code == 409 and "has ended: cancelled" in again.json()["error"]
    assert len(api.requests_to("PATCH", ".")) == 1


def test_a_stand_in_that_is_down_gives_a_note_not_a_failure(folder, capsys):
    with KubeStandin(suffixes=[SUFFIX]) as api:
        submit(folder, api, capsys)
    client = ui(folder)  # the API server is gone now

    listing = client.get("/runs")
    assert listing.status_code == 200
    assert ROW.findall(listing.text) == [(RUN, "unknown")]
    note = re.search(r'<p class="note" id="argo-note">([^<]*)</p>', listing.text)
    assert note and f"cannot reach the Kubernetes API server at {api.url}" in note.group(1)

    page = client.get(f"/runs/{RUN}")
    assert page.status_code == 200
    assert dict(NODE.findall(page.text)) == {S1: "pending", S2: "pending", S3: "pending"}
    assert 'id="argo-note"' in page.text
    state = client.get(f"/runs/{RUN}/state")
    assert state.status_code == 503 and "cannot reach" in state.json()["error"]
    log = client.get(f"/runs/{RUN}/steps/{S2}/log")
    assert log.status_code == 503 and "cannot reach" in log.text
    stop = client.post(f"/runs/{RUN}/stop", headers=SAME_SITE)
    assert stop.status_code == 503 and "cannot reach" in stop.json()["error"]
    for answer in (listing.text, page.text, log.text):
        assert PASSWORD not in answer and TOKEN not in answer


def test_a_deleted_workflow_is_named_in_the_note(folder, api, capsys):
    submit(folder, api, capsys)
    del api.workflows["ml", RUN]  # as Argo's TTL deletes an ended run
    listing = ui(folder).get("/runs").text
    assert ROW.findall(listing) == [(RUN, "unknown")]
    assert f"the Workflow of run {RUN} is no longer in namespace 'ml'" in html.unescape(listing)


def test_a_training_steps_log_has_its_job_replicas_logs(folder, api, capsys):
    (folder / "prog.sql").write_text(JOBS_PROGRAM)
    submit(folder, api, capsys)
    finished_jobs_run(api)  # the TFJob's chief, worker and ps pods, as its operator makes them
    client = ui(folder)
    assert dict(NODE.findall(client.get(f"/runs/{RUN}").text))[TF] == "succeeded"
    log = client.get(f"/runs/{RUN}/steps/{TF}/log")
    assert log.status_code == 200
    assert log.text.splitlines() == [
        f"--- {TF}",
        "created tfjob",
        f"--- {TF}/chief-0",
        "chief 0",
        f"--- {TF}/worker-0",
        "worker 0",
        f"--- {TF}/ps-0",
        "ps 0",
    ]


def test_a_search_steps_log_has_its_trials_output_from_katibs_collector(folder, api, capsys):
    """Katib's StdOut collector sends a trial's output to its metrics file and prints it from
    the collector it injects; the page shows those lines, without klog's header."""
    (folder / "prog.sql").write_text(JOBS_PROGRAM)
    submit(folder, api, capsys)
    names = finished_jobs_run(api)
    trials = sorted(label for label in names if label.startswith(f"{SEARCH}/"))
    log = ui(folder).get(f"/runs/{RUN}/steps/{SEARCH}/log")
    assert log.status_code == 200
    assert log.text.splitlines() == [
        f"--- {SEARCH}",
        "created experiment",
        *(line for label in trials for line in (f"--- {label}", f"trial {label.split('/')[1]}")),
    ]
    asked = {r.path.split("/")[-2]: r.query["container"] for r in api.requests_to("GET", "/log$")}
    assert {asked[names[label]][0] for label in trials} == {"metrics-logger-and-collector"}
