"""The conditions that end a distributed TO TRAIN's or a Katib search's resource step, met
by statuses written as the operators write them.

Statuses follow the operators' source: the training operator v1.9
(``pkg/controller.v1/common/job.go`` ``ReconcileJobs``: backoff limit and deadline;
``pkg/controller.v1/tensorflow/tfjob_controller.go`` ``UpdateJobStatus``: a replica's
success or failure; ``pkg/util/status.go``: one condition per type, each new one appended,
Running set False when the job ends), mpi-operator v0.8 (the same rules, and Failed set
False when the job succeeds after an eviction) and Katib (``status_util.go``
``UpdateExperimentStatusCondition``: failed once failed trials, metrics unavailable
included, reach ``maxFailedTrialCount``). Argo's evaluation is ``tests/argo_conditions.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from argo_conditions import outcome, parse

from sqlml import steps
from sqlml.steps import katib
from sqlml.steps.kubeflow import Replica

NOW = "2026-11-24T10:00:00Z"


def condition(kind: str, status: str = "True", reason: str = "") -> dict[str, Any]:
    return {
        "type": kind,
        "status": status,
        "reason": reason or f"TFJob{kind}",
        "message": f"TFJob ml/x is {kind.lower()}.",
        "lastUpdateTime": NOW,
        "lastTransitionTime": NOW,
    }


def job_status(*conditions: dict, completed: bool = False, **replicas: dict) -> dict:
    status: dict[str, Any] = {
        "conditions": list(conditions),
        "replicaStatuses": replicas,
        "startTime": NOW,
    }
    if completed:
        status["completionTime"] = NOW
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "status": status}


CREATED = condition("Created")
RUNNING = condition("Running")
ENDED_RUNNING = condition("Running", "False")
RESTARTING = condition("Restarting")

# (what happened, the job's status as the operator reports it, the step's outcome)
TFJOB_STATUSES = [
    ("just created", job_status(CREATED), None),
    ("running", job_status(CREATED, RUNNING, Chief={"active": 1}, Worker={"active": 2}), None),
    (
        "a replica killed and created again (ExitCode, exit code 137)",
        job_status(CREATED, RESTARTING, Chief={"active": 1}, Worker={"active": 1, "failed": 1}),
        None,
    ),
    (
        "the chief's statement failed (exit code 1: final under ExitCode)",
        job_status(
            CREATED,
            ENDED_RUNNING,
            condition("Failed", reason="TFJobFailed"),
            completed=True,
            Chief={"failed": 1},
            Worker={"active": 2},
        ),
        "failed",
    ),
    (
        "the backoff limit reached: the operator deleted the pods, no replica counted failed",
        job_status(
            CREATED,
            RESTARTING,
            condition("Failed", reason="TFJobFailed"),
            completed=True,
            Chief={},
            Worker={},
        ),
        "failed",
    ),
    (
        "past activeDeadlineSeconds",
        job_status(
            CREATED, ENDED_RUNNING, condition("Failed"), completed=True, Chief={"active": 1}
        ),
        "failed",
    ),
    (
        "suspended",
        job_status(CREATED, ENDED_RUNNING, condition("Suspended")),
        None,
    ),
    (
        "succeeded",
        job_status(
            CREATED,
            ENDED_RUNNING,
            condition("Succeeded"),
            completed=True,
            Chief={"succeeded": 1},
            Worker={"succeeded": 2},
        ),
        "succeeded",
    ),
    (
        "mpi-operator: a worker evicted (Failed, no completion time yet)",
        job_status(CREATED, ENDED_RUNNING, condition("Failed", reason="MPIJobEvicted")),
        "failed",
    ),
]


def _job_step():
    replica = Replica(image="sqlml:1", command=("python", "-m", "sqlml.runtime.step"))
    return steps.tensorflow.train("x", chief=replica, workers=replica)


@pytest.mark.parametrize(
    ("status", "expected"),
    [(status, expected) for _, status, expected in TFJOB_STATUSES],
    ids=[what for what, _, _ in TFJOB_STATUSES],
)
def test_a_training_job_step_ends_as_the_operator_ends_the_job(status, expected):
    params = _job_step().params
    assert outcome(params["success_condition"], params["failure_condition"], status) == expected


@pytest.mark.parametrize("make", [steps.xgboost.train, steps.pytorch.train])
def test_every_job_kind_waits_on_the_same_conditions(make):
    replica = Replica(image="sqlml:1")
    params = make("x", master=replica, workers=replica).params
    assert (params["success_condition"], params["failure_condition"]) == (
        _job_step().params["success_condition"],
        _job_step().params["failure_condition"],
    )


def test_the_old_replica_count_condition_would_have_hung_on_a_crash_loop():
    """A replica restarting in place (OnFailure) until the backoff limit: the operator fails
    the job and deletes its pods, so no replica is ever counted failed."""
    _, status, _ = TFJOB_STATUSES[4]
    assert (
        outcome(
            "status.replicaStatuses.Chief.succeeded > 0",
            "status.replicaStatuses.Chief.failed > 0",
            status,
        )
        is None
    )


def experiment_status(*conditions: dict, completed: bool = False, **counts: int) -> dict:
    """Katib sets completionTime to an empty time (sent as null) with Created, a time when
    the Experiment ends."""
    status: dict[str, Any] = {"conditions": list(conditions), "startTime": NOW, **counts}
    status["completionTime"] = NOW if completed else None
    return {"apiVersion": "kubeflow.org/v1beta1", "kind": "Experiment", "status": status}


EXPERIMENT_STATUSES = [
    ("created", experiment_status(condition("Created", reason="ExperimentCreated")), None),
    (
        "running, one trial failed of 3 allowed",
        experiment_status(CREATED, RUNNING, trialsRunning=2, trialsFailed=1),
        None,
    ),
    (
        "failed trials reached maxFailedTrialCount (Katib fails at >=)",
        experiment_status(
            CREATED,
            ENDED_RUNNING,
            condition("Failed", reason="ExperimentFailed"),
            completed=True,
            trialsFailed=3,
        ),
        "failed",
    ),
    (
        "every trial's metrics unavailable",
        experiment_status(
            CREATED,
            ENDED_RUNNING,
            condition("Failed", reason="ExperimentFailed"),
            completed=True,
            trialMetricsUnavailable=3,
        ),
        "failed",
    ),
    (
        "max trials reached",
        experiment_status(
            CREATED,
            ENDED_RUNNING,
            condition("Succeeded", reason="ExperimentMaxTrialsReached"),
            completed=True,
            trialsSucceeded=11,
            trialsFailed=1,
        ),
        "succeeded",
    ),
]


@pytest.mark.parametrize(
    ("status", "expected"),
    [(status, expected) for _, status, expected in EXPERIMENT_STATUSES],
    ids=[what for what, _, _ in EXPERIMENT_STATUSES],
)
def test_a_search_step_ends_as_katib_ends_the_experiment(status, expected):
    params = katib.run(
        "search",
        trial_spec={},
        parameters=[katib.Parameter("lr", "double", min=0.1, max=1)],
        trial_parameters={"lr": "lr"},
        objective_metric="accuracy",
        max_failed_trial_count=3,
        primary_container_name="training-container",
    ).params
    assert outcome(params["success_condition"], params["failure_condition"], status) == expected


@pytest.mark.parametrize(
    "selector",
    [
        'status.conditions.#(type=="Failed").status == True',  # gjson queries: not a label key
        "status.replicaStatuses.Master.failed > many",
        "status.phase in (Failed, Error",
    ],
)
def test_selectors_argo_cannot_parse_are_refused(selector):
    with pytest.raises(ValueError):
        parse(selector)
