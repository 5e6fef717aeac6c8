"""A distributed TO TRAIN and a searched TO TRAIN, compiled to Argo, run against the
Kubernetes API stand-in (tests/kube_standin.py: it is NOT a cluster) the way Argo's executor
runs a resource step: create the job, then read it until the step's failure or success
condition is met (failure first, as the executor checks). The job's statuses are scripted as
the operators write them (tests/test_job_conditions.py says from which source).

What is asserted: a job whose replicas fail ends the step as failed, within the backoff limit
and the deadline the manifest carries, and never as succeeded; a failed Experiment too.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from argo_conditions import outcome
from test_job_conditions import (
    CREATED,
    ENDED_RUNNING,
    RESTARTING,
    RUNNING,
    condition,
    experiment_status,
    job_status,
)
from test_k8s_manifests import argument, statement_tasks, workflow

from tests.kube_standin import TOKEN, KubeStandin

WORKFLOW_UID = "5f0c6a1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b"  # Argo substitutes {{workflow.uid}}
pytestmark = pytest.mark.usefixtures("tfjob_family")  # TFJobRegressor: a TFJob

pytest.importorskip("hera.workflows.models")

PROGRAM = """
CREATE TABLE train AS SELECT 1.0 AS x, 2.0 AS y;
SELECT x, y FROM train TO TRAIN TFJobRegressor WITH train.distributed = true, train.workers = 2
  LABEL y INTO dnn_distributed;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  max_depth = INT_RANGE(2, 4), search.trials = 4, search.parallel = 2, search.metric = rmse
  LABEL y INTO searched;
"""
PLURALS = {"TFJob": "tfjobs", "Experiment": "experiments"}

# A replica's statement fails (a wrong password, say): under restartPolicy ExitCode the pod
# exits 1 and is not restarted; a pod killed by the kubelet (exit 137) is, counted against
# the backoff limit, until the operator fails the job.
CRASHING = [
    job_status(CREATED)["status"],
    job_status(CREATED, RUNNING, Chief={"active": 1}, Worker={"active": 2})["status"],
    job_status(CREATED, RESTARTING, Chief={"active": 1}, Worker={"active": 1, "failed": 1})[
        "status"
    ],
    job_status(CREATED, RESTARTING, Chief={"active": 1}, Worker={"active": 1, "failed": 2})[
        "status"
    ],
    job_status(
        CREATED,
        RESTARTING,
        condition("Failed", reason="TFJobFailed"),
        completed=True,
        Chief={},
        Worker={},
    )["status"],
]
PAST_DEADLINE = [
    job_status(CREATED)["status"],
    job_status(CREATED, RUNNING, Chief={"active": 1})["status"],
    job_status(CREATED, ENDED_RUNNING, condition("Failed"), completed=True, Chief={"active": 1})[
        "status"
    ],
]
SUCCEEDING = [
    job_status(CREATED)["status"],
    job_status(CREATED, RUNNING, Chief={"active": 1}, Worker={"active": 2})["status"],
    job_status(
        CREATED,
        ENDED_RUNNING,
        condition("Succeeded"),
        completed=True,
        Chief={"succeeded": 1},
        Worker={"succeeded": 2},
    )["status"],
]
EXPERIMENT_FAILING = [
    experiment_status(condition("Created", reason="ExperimentCreated"))["status"],
    experiment_status(CREATED, RUNNING, trialsRunning=2, trialsFailed=1)["status"],
    experiment_status(CREATED, RUNNING, trialsRunning=1, trialsFailed=2, trialsSucceeded=1)[
        "status"
    ],
    experiment_status(
        CREATED,
        ENDED_RUNNING,
        condition("Failed", reason="ExperimentFailed"),
        completed=True,
        trialsFailed=2,
        trialMetricsUnavailable=2,
    )["status"],
]


def _resource_task(kind: str) -> dict[str, Any]:
    tasks = statement_tasks(workflow(PROGRAM))
    return next(
        task
        for task in tasks.values()
        if "manifest" in {p["name"] for p in task["arguments"]["parameters"]}
        and json.loads(argument(task, "manifest"))["kind"] == kind
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


def _run_resource_step(api: KubeStandin, task: dict[str, Any]) -> tuple[str, int]:
    """Create the task's job and read it until a condition is met: (outcome, reads)."""
    manifest = json.loads(argument(task, "manifest").replace("{{workflow.uid}}", WORKFLOW_UID))
    success, failure = argument(task, "success-condition"), argument(task, "failure-condition")
    group_version = manifest["apiVersion"]
    collection = f"/apis/{group_version}/namespaces/ml/{PLURALS[manifest['kind']]}"
    created = _call(api, "POST", collection, manifest)
    for reads in range(1, 50):
        job = _call(api, "GET", f"{collection}/{created['metadata']['name']}")
        if ended := outcome(success, failure, job):
            return ended, reads
    raise AssertionError("the step never ended")


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [(CRASHING, "failed"), (PAST_DEADLINE, "failed"), (SUCCEEDING, "succeeded")],
    ids=["replicas-failing-to-the-backoff-limit", "past-the-deadline", "succeeding"],
)
def test_a_distributed_training_step_ends_when_the_operator_ends_its_job(statuses, expected):
    task = _resource_task("TFJob")
    policy = json.loads(argument(task, "manifest"))["spec"]["runPolicy"]
    assert policy["backoffLimit"] == 3
    assert policy["activeDeadlineSeconds"] == 24 * 3600
    with KubeStandin() as api:
        api.script("tfjobs", statuses)
        # It ends at the status that ends the job, not before and not never.
        assert _run_resource_step(api, task) == (expected, len(statuses))
        assert api.errors == []


def test_a_failed_experiment_ends_the_search_step_as_failed():
    task = _resource_task("Experiment")
    manifest = json.loads(argument(task, "manifest"))
    assert manifest["spec"]["maxFailedTrialCount"] == 4
    with KubeStandin() as api:
        api.script("experiments", EXPERIMENT_FAILING)
        assert _run_resource_step(api, task) == ("failed", len(EXPERIMENT_FAILING))
        assert api.errors == []
