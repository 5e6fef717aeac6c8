"""Distributed TO TRAINs compiled to Argo, their resource steps run against the loopback
stand-in (tests/kube_standin.py: NOT a cluster) with the training operator's reconcile
(tests/controllers/training_operator.py, from training-operator v1.9's source) driving the
jobs from their pods, and Argo v4.1.2's resource action and retry decision
(tests/controllers/argo_resource.py, argo_retry.py).

What is asserted: a worker killed out of memory again and again fails the job after the
documented 3 restarts (and, with the restart policy sqlml used before, never did until the
deadline); a step whose pod is deleted is retried; a retried step adopts the job its first
attempt created instead of creating a second one.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from controllers import argo_resource
from controllers.argo_retry import retried
from controllers.training_operator import TrainingOperator
from test_k8s_manifests import OPTIONS, statement_tasks, workflow

from tests.kube_standin import KubeStandin

pytest.importorskip("hera.workflows.models")
pytestmark = pytest.mark.usefixtures("tfjob_family")  # TFJobRegressor: a TFJob

PROGRAM = """
CREATE TABLE train AS SELECT 1.0 AS x, 2.0 AS y;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  train.workers = 2 LABEL y INTO xgb_distributed;
SELECT x, y FROM train TO TRAIN TFJobRegressor WITH train.distributed = true, train.workers = 2
  LABEL y INTO dnn_distributed;
"""
RUN = {"metadata": {"name": "p-x7k2m", "uid": "5f0c6a1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b"}}
WORKER = {"XGBoostJob": "worker", "TFJob": "worker"}
HEAD = {"XGBoostJob": "master", "TFJob": "chief"}


def compiled() -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The program's Workflow with the default retries, and its templates by name."""
    document = workflow(PROGRAM, options=replace(OPTIONS, retries=0))
    return document, {t["name"]: t for t in document["spec"]["templates"]}


def job_task(document: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(
        task
        for task in statement_tasks(document).values()
        if task["template"] in ("resource", "resource-apply")
        and json.loads(argument(task, "manifest"))["kind"] == kind
    )


def argument(task: dict[str, Any], name: str) -> str:
    return next(p["value"] for p in task["arguments"]["parameters"] if p["name"] == name)


def with_manifest(task: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict:
    """``task`` with its manifest changed by ``change``."""
    task = copy.deepcopy(task)
    for parameter in task["arguments"]["parameters"]:
        if parameter["name"] == "manifest":
            manifest = json.loads(parameter["value"])
            change(manifest)
            parameter["value"] = json.dumps(manifest)
    return task


def exit_code_replicas(manifest: dict[str, Any]) -> None:
    """The restart policy sqlml gave replicas before: ExitCode."""
    specs = next(value for key, value in manifest["spec"].items() if key.endswith("ReplicaSpecs"))
    for spec in specs.values():
        spec["restartPolicy"] = "ExitCode"


def oom_killer(operator: TrainingOperator, job: dict[str, Any], kind: str) -> list[tuple]:
    """Kill the job's worker 0 out of memory (exit 137) after every reconcile it runs in;
    (pod, its restart count after the kill) of each kill."""
    killed: list[tuple[str, int]] = []
    name = f"{job['metadata']['name']}-{WORKER[kind]}-0"

    def kill(plural: str, obj: dict[str, Any]) -> None:
        pod = operator.pods.get(name)
        if obj["metadata"]["name"] == job["metadata"]["name"] and pod and pod.phase == "Running":
            operator.exit(name, 137)
            killed.append((name, pod.restarts))

    operator.api.controllers.append(kill)
    return killed


@pytest.mark.parametrize("kind", ["XGBoostJob", "TFJob"])
def test_repeated_oom_kills_fail_the_job_after_three_restarts(kind):
    document, templates = compiled()
    task = job_task(document, kind)
    manifest = json.loads(argument(task, "manifest"))
    assert manifest["spec"]["runPolicy"]["backoffLimit"] == 3
    with KubeStandin() as api:
        operator = TrainingOperator(api)
        job = argo_resource.start(api, templates[task["template"]], task, RUN)
        killed = oom_killer(operator, job, kind)
        assert argo_resource.wait(api, task, RUN, job) == "failed"
        stored = api.objects[f"{kind.lower()}s"]["ml", job["metadata"]["name"]]
        failed = stored["status"]["conditions"][-1]
        assert failed["type"] == "Failed" and "backoff limit" in failed["message"]
        # 3 restarts in the same pod, counted by the operator; no pod created again; the
        # failed job's pods deleted.
        worker = f"{job['metadata']['name']}-{WORKER[kind]}-0"
        assert killed == [(worker, 1), (worker, 2), (worker, 3)]
        assert len(set(operator.created)) == len(operator.created)
        assert operator.pods == {}
        assert api.errors == []


@pytest.mark.parametrize("kind", ["XGBoostJob", "TFJob"])
def test_with_exit_code_replicas_oom_kills_only_ended_at_the_deadline(kind):
    """What sqlml generated before: each kill deletes the pod and creates it again, which
    no backoff limit counts; only activeDeadlineSeconds (a day) ended the job."""
    document, templates = compiled()
    task = with_manifest(job_task(document, kind), exit_code_replicas)
    with KubeStandin() as api:
        operator = TrainingOperator(api)
        job = argo_resource.start(api, templates["resource-apply"], task, RUN)
        killed = oom_killer(operator, job, kind)
        assert argo_resource.wait(api, task, RUN, job) == "waiting"  # 100 reads
        worker = f"{job['metadata']['name']}-{WORKER[kind]}-0"
        assert len(killed) > 30 and set(killed) == {(worker, 0)}  # never a restart counted
        assert operator.created.count(worker) in (len(killed), len(killed) + 1)  # recreated
        operator.now += 24 * 3600
        assert argo_resource.wait(api, task, RUN, job) == "failed"
        stored = api.objects[f"{kind.lower()}s"]["ml", job["metadata"]["name"]]
        assert "deadline" in stored["status"]["conditions"][-1]["message"]
        assert api.errors == []


def test_a_statement_that_fails_is_restarted_to_the_limit_too():
    """Under OnFailure the kubelet restarts a statement that exits 1 as well: the job fails
    after the same 3 restarts (about 70 s of the kubelet's back-off)."""
    document, templates = compiled()
    task = job_task(document, "XGBoostJob")
    with KubeStandin() as api:
        operator = TrainingOperator(api)
        job = argo_resource.start(api, templates["resource-apply"], task, RUN)
        master = f"{job['metadata']['name']}-master-0"

        restarts: list[int] = []

        def fail(plural: str, obj: dict[str, Any]) -> None:
            if master in operator.pods:
                operator.exit(master, 1)
                restarts.append(operator.pods[master].restarts)

        api.controllers.append(fail)
        assert argo_resource.wait(api, task, RUN, job) == "failed"
        assert restarts == [1, 2, 3] and master not in operator.pods


def test_every_step_whose_pod_is_deleted_is_retried_but_not_a_failed_statement():
    document, templates = compiled()
    kinds = {task["template"] for task in statement_tasks(document).values()}
    assert kinds == {"sql", "resource-apply"}
    for kind in kinds:
        strategy = templates[kind].get("retryStrategy")
        # "pod deleted" is an Error (operator.go podReconciliation)
        assert [retried(strategy, "Error", attempt) for attempt in (1, 2, 3, 4)] == [
            True,
            True,
            True,
            False,
        ]
        assert not retried(strategy, "Failed", 1)  # a statement's own failure is final
    # What sqlml generated before: no retryStrategy, or one without a policy (--retries).
    assert not retried(None, "Error", 1)
    old = {"limit": 2, "backoff": {"duration": "10s", "factor": 2}}
    assert not retried(old, "Error", 1)


def test_retries_retry_failures_and_errors():
    document = workflow(PROGRAM, options=replace(OPTIONS, retries=2))
    for template in document["spec"]["templates"]:
        if "dag" in template:
            continue
        strategy = template["retryStrategy"]
        assert strategy["retryPolicy"] == "Always"
        assert retried(strategy, "Failed", 2) and retried(strategy, "Error", 1)
        assert not retried(strategy, "Error", 3)


@pytest.mark.parametrize("kind", ["XGBoostJob", "TFJob"])
def test_a_retried_training_step_adopts_the_job_of_its_first_attempt(kind):
    document, templates = compiled()
    task = job_task(document, kind)
    plural = f"{kind.lower()}s"
    with KubeStandin() as api:
        operator = TrainingOperator(api)
        first = argo_resource.start(api, templates["resource-apply"], task, RUN)
        assert first["metadata"]["name"].endswith(RUN["metadata"]["uid"])
        # The step's pod is deleted while the job runs: Argo retries the step.
        argo_resource.read(api, first)  # the operator creates the pods
        running = argo_resource.read(api, first)["status"]["conditions"][-1]
        assert running["type"] == "Running"
        assert retried(templates["resource-apply"]["retryStrategy"], "Error", 1)
        second = argo_resource.start(api, templates["resource-apply"], task, RUN)
        assert second["metadata"]["uid"] == first["metadata"]["uid"]
        assert list(api.objects[plural]) == [("ml", first["metadata"]["name"])]
        assert api.requests_to("POST", plural) and len(api.requests_to("POST", plural)) == 1
        # The job goes on: its head succeeds, and so does the retried step.
        operator.exit(f"{first['metadata']['name']}-{HEAD[kind]}-0", 0)
        assert argo_resource.wait(api, task, RUN, second) == "succeeded"
        assert api.errors == []


def test_the_old_create_made_a_second_job_on_a_retry():
    """``action: create`` of a ``generateName`` (what sqlml generated before) creates
    another job on each attempt while the first may still run."""
    document, templates = compiled()

    def generated(manifest: dict[str, Any]) -> None:
        manifest["metadata"]["generateName"] = "p-s02-train-xgb-distributed-"
        del manifest["metadata"]["name"]

    task = with_manifest(job_task(document, "XGBoostJob"), generated)
    create = {"resource": {**templates["resource-apply"]["resource"], "action": "create"}}
    with KubeStandin() as api:
        argo_resource.start(api, create, task, RUN)
        argo_resource.start(api, create, task, RUN)
        assert len(api.objects["xgboostjobs"]) == 2


@pytest.mark.parametrize("kind", ["XGBoostJob", "TFJob"])
def test_a_deleted_replica_pod_is_created_again_and_the_job_goes_on(kind):
    """A node drained: the operator creates the pod again, a new one with no restarts."""
    document, templates = compiled()
    task = job_task(document, kind)
    with KubeStandin() as api:
        operator = TrainingOperator(api)
        job = argo_resource.start(api, templates[task["template"]], task, RUN)
        argo_resource.read(api, job)
        worker = f"{job['metadata']['name']}-{WORKER[kind]}-0"
        for _ in range(5):  # more deletions than the backoff limit
            operator.delete(worker)
            argo_resource.read(api, job)
            assert worker in api.pods and operator.pods[worker].restarts == 0
        assert operator.created.count(worker) == 6
        operator.exit(f"{job['metadata']['name']}-{HEAD[kind]}-0", 0)
        assert argo_resource.wait(api, task, RUN, job) == "succeeded"
        assert api.errors == []


@pytest.mark.parametrize(("kind", "expected"), [("XGBoostJob", "failed"), ("TFJob", "succeeded")])
def test_an_evicted_replica_pod(kind, expected):
    """Evicted (ends Failed): a TFJob restarts it; an XGBoostJob's status rule fails the job
    on a failed replica unless its restart policy is ExitCode (xgboostjob_controller.go)."""
    document, templates = compiled()
    task = job_task(document, kind)
    with KubeStandin() as api:
        operator = TrainingOperator(api)
        job = argo_resource.start(api, templates[task["template"]], task, RUN)
        argo_resource.read(api, job)
        worker = f"{job['metadata']['name']}-{WORKER[kind]}-0"
        operator.evict(worker)
        conditions = argo_resource.read(api, job)["status"]["conditions"]
        assert conditions[-1]["type"] == ("Failed" if expected == "failed" else "Restarting")
        head = f"{job['metadata']['name']}-{HEAD[kind]}-0"
        if expected == "succeeded":
            argo_resource.read(api, job)  # the worker created again
            assert worker in operator.pods and operator.pods[worker].phase == "Running"
            operator.exit(head, 0)
        assert argo_resource.wait(api, task, RUN, job) == expected
        assert api.errors == []
