"""A searched TO TRAIN's trials step, compiled to Argo, run as Argo v4.1.2's executor runs a
resource step (create the Experiment, read it until a condition decides:
``argo_conditions.wait_resource``) against the Kubernetes API stand-in (NOT a cluster) with
Katib v0.19's Experiment controller modelled from its source (``tests/controllers/katib.py``:
Created with a null completionTime, Running while trials run, then Succeeded or Failed).
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from argo_conditions import outcome, wait_resource
from test_k8s_manifests import argument, statement_tasks, workflow

from sqlml.backends.argo import submit
from tests.controllers.katib import COLLECTOR, ExperimentController, Trial
from tests.kube_standin import TOKEN, KubeStandin

pytest.importorskip("hera.workflows.models")

PROGRAM = """
CREATE TABLE train AS SELECT 1.0 AS x, 2.0 AS y;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  max_depth = INT_RANGE(2, 4), search.trials = 4, search.parallel = 2, search.metric = rmse
  LABEL y INTO searched;
"""
OLD_SUCCESS = "status.completionTime"  # before issue 31: true for Katib's null at once
READS = 60


@pytest.fixture(scope="module")
def task() -> dict[str, Any]:
    """The compiled trials step: the task whose manifest is the Experiment."""
    return next(
        task
        for task in statement_tasks(workflow(PROGRAM)).values()
        if "manifest" in {p["name"] for p in task["arguments"]["parameters"]}
    )


def _call(api: KubeStandin, method: str, path: str, body: Any = None) -> dict[str, Any]:
    request = urllib.request.Request(
        api.url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def run_step(
    task: dict[str, Any], controller: ExperimentController, success: str | None = None
) -> tuple[str, int, list[dict[str, Any]]]:
    """Run the step as Argo's executor does: (outcome, reads, the statuses it read)."""
    manifest = json.loads(argument(task, "manifest"))
    success = argument(task, "success-condition") if success is None else success
    collection = f"/apis/{manifest['apiVersion']}/namespaces/ml/experiments"
    seen: list[dict[str, Any]] = []
    with KubeStandin() as api:
        controller.plug_into(api)
        name = _call(api, "POST", collection, manifest)["metadata"]["name"]

        def read() -> bytes:
            request = urllib.request.Request(
                f"{api.url}{collection}/{name}", headers={"Authorization": f"Bearer {TOKEN}"}
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                text = answer.read()
            seen.append(json.loads(text)["status"])
            return text  # the JSON as sent: Argo's gjson reads the text

        ended, reads = wait_resource(read, success, argument(task, "failure-condition"), READS)
        assert api.errors == []
    return ended, reads, seen


def _types(status: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["type"], c["status"]) for c in status.get("conditions", [])]


def test_a_search_whose_trials_take_several_polls_succeeds_only_when_katib_ends_it(task):
    ended, reads, seen = run_step(task, ExperimentController([Trial(polls=3)]))
    assert ended == "succeeded"
    first, last = seen[0], seen[-1]
    assert first["completionTime"] is None and _types(first) == [("Created", "True")]
    # Trials ran over several reads, two at a time (search.parallel), before the end.
    running = [status.get("trialsRunning", 0) for status in seen[:-1]]
    assert running.count(2) >= 3 and max(running) == 2
    assert all(status["completionTime"] is None for status in seen[:-1])
    assert _types(last) == [("Created", "True"), ("Running", "False"), ("Succeeded", "True")]
    assert last["conditions"][-1]["reason"] == "ExperimentMaxTrialsReached"
    assert last["trialsSucceeded"] == 4 and last["completionTime"]
    assert reads == len(seen) > 8


def test_the_old_success_condition_ends_the_search_at_its_first_read(task):
    """Item 1 of issue 31: ``status.completionTime`` exists (as null) from Katib's first
    reconcile, so the step succeeded before any trial ran."""
    ended, reads, seen = run_step(task, ExperimentController([Trial(polls=3)]), OLD_SUCCESS)
    assert (ended, reads) == ("succeeded", 1)
    assert "trials" not in seen[0]


@pytest.mark.parametrize("end", ["Failed", "MetricsUnavailable"])
def test_a_failed_experiment_fails_the_step(task, end):
    """Trials failing (or reporting no metrics) until maxFailedTrialCount: Katib fails the
    Experiment and the step fails at that read, never succeeding."""
    ended, _, seen = run_step(task, ExperimentController([Trial(polls=2, end=end)]))
    assert ended == "failed"
    assert _types(seen[-1])[-1] == ("Failed", "True")
    counted = "trialsFailed" if end == "Failed" else "trialMetricsUnavailable"
    assert (
        seen[-1][counted] == json.loads(argument(task, "manifest"))["spec"]["maxFailedTrialCount"]
    )
    assert all(("Failed", "True") not in _types(status) for status in seen[:-1])


def test_a_failed_suggestion_fails_the_step_without_a_completion_time(task):
    ended, _, seen = run_step(task, ExperimentController(suggestion_fails=True))
    assert ended == "failed"
    assert seen[-1]["completionTime"] is None
    assert seen[-1]["conditions"][-1]["message"] == "Suggestion has failed"


def test_one_failed_trial_of_several_does_not_end_the_search(task):
    trials = [Trial(polls=1, end="Failed"), Trial(polls=2, metric=0.3), Trial(polls=1)]
    ended, _, seen = run_step(task, ExperimentController(trials))
    assert ended == "succeeded"
    assert (seen[-1]["trialsFailed"], seen[-1]["trialsSucceeded"]) == (1, 3)
    assert seen[-1]["currentOptimalTrial"]["observation"]["metrics"][0]["latest"] == "0.3"


# gjson's values as Argo's executor sees them (v1.19 Result.Exists and String).
GJSON = [
    ("status.t", {"t": None}, "exists", True),
    ("status.t", {}, "exists", False),
    ("status.t,status.t!=", {"t": None}, "null is empty", False),
    ("status.t,status.t!=", {"t": ""}, "an empty string is empty", False),
    ("status.t,status.t!=", {"t": "2026-12-05T10:00:00Z"}, "a time", True),
    ("status.t!=", {}, "missing: != holds", True),
    ("status.t=", {}, "missing: = needs the key", False),
    ("status.t notin (x)", {}, "missing: notin holds", True),
    ("status.t in (true)", {"t": True}, "booleans are words", True),
    ("status.t=3", {"t": 3.0}, "3.0 is 3", True),
    ("status.t>2", {"t": 3.0}, "3.0 is an integer to Gt", True),
    ("status.t=100000000000000000000", {"t": 1e20}, "no exponent", True),
    ("status.t=0.5", {"t": 0.5}, "a fraction", True),
    ("status.t>2", {"t": "3"}, "a string holding a number", True),
    ("status.t>2", {"t": " 3"}, "ParseInt takes no spaces", False),
    ("status.t>2", {"t": 2.5}, "not an integer", False),
    ("status.l.1=b", {"l": ["a", "b"]}, "a list index", True),
    ("status.l.2", {"l": ["a", "b"]}, "past the list's end", False),
    ("status.o.0=a", {"o": {"0": "a"}}, "a digit key of an object", True),
]


@pytest.mark.parametrize(
    ("success", "status", "holds"),
    [(success, status, holds) for success, status, _, holds in GJSON],
    ids=[what for _, _, what, _ in GJSON],
)
def test_conditions_see_values_as_gjson_does(success, status, holds):
    expected = "succeeded" if holds else None
    assert outcome(success, "", {"status": status}) == expected


def test_any_failure_requirement_fails_and_every_success_requirement_is_needed():
    status = {"status": {"a": "1", "b": "2"}}
    assert outcome("status.a=1,status.b=2", "status.c=3,status.b=2", status) == "failed"
    assert outcome("status.a=1,status.b=3", "status.c=3", status) is None
    assert outcome("", "status.c=3", status) == "succeeded"  # no requirement: all hold


@pytest.mark.parametrize("selector", ["status.a,", ",status.a", "status.a in ()x", "a>-1"])
def test_what_labels_parse_refuses_is_refused(selector):
    with pytest.raises(ValueError):
        wait_resource(lambda: {}, selector, "", 1)


def test_trial_output_is_in_the_collectors_log_not_the_training_containers(task):
    """What the Katib model writes, which the logs tests rely on."""
    controller = ExperimentController([Trial(polls=1, lines=("rmse=0.25",))])
    with KubeStandin() as api:
        controller.plug_into(api)
        name = api.create("experiments", json.loads(argument(task, "manifest")))["metadata"]["name"]
        for _ in range(4):
            _call(api, "GET", f"/apis/kubeflow.org/v1beta1/namespaces/ml/experiments/{name}")
        assert len(api.pods) == 2  # search.parallel trials at once
        for pod in api.pods.values():
            assert pod.containers == ("training-container", COLLECTOR)
            assert api.logs[pod.name, "training-container"] == []
            assert api.logs[pod.name, COLLECTOR][0].endswith("main.go:143] rmse=0.25")


@pytest.mark.parametrize(
    ("collector", "containers", "read"),
    [
        ("StdOut", ("training-container", COLLECTOR), COLLECTOR),
        (None, ("training-container", COLLECTOR), COLLECTOR),  # Katib's default: StdOut
        ("StdOut", ("training-container",), "training-container"),  # namespace not labelled
        ("File", ("training-container", COLLECTOR), "training-container"),  # not redirected
    ],
)
def test_a_trials_output_is_read_where_katib_leaves_it(collector, containers, read):
    experiment: dict[str, Any] = {"spec": {"trialTemplate": {}}}
    if collector:
        experiment["spec"]["metricsCollectorSpec"] = {"collector": {"kind": collector}}
    pod_spec = {"containers": [{"name": name} for name in containers]}
    assert submit._trial_container(experiment, pod_spec) == read
