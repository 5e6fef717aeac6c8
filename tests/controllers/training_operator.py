"""The Kubeflow training operator's reconcile of TFJobs and XGBoostJobs, for the loopback
stand-in (tests/kube_standin.py, which is NOT a cluster), as training-operator v1.9's source
(release-1.9) does it:

- ``pkg/controller.v1/common/job.go`` ``ReconcileJobs``: a finished job is left alone; the
  job fails when ``PastBackoffLimit`` (``pkg/core/job.go``: the restart counts of the
  containers of its *running* pods, for replicas restarting ``OnFailure``, ``Always`` or
  ``ExitCode``, reach ``backoffLimit``) or ``exceedsBackoffLimit`` (a new failed pod while
  ``NumRequeues(job) + 1 > backoffLimit``; these controllers' work queue is a
  ``FakeWorkQueue`` whose ``NumRequeues`` is 0) holds, else when ``PastActiveDeadline``
  (now - ``startTime`` >= ``activeDeadlineSeconds``);
- ``pod.go`` ``ReconcilePods``: a missing pod is created (``<job>-<type>-<index>``, its
  ``restartPolicy`` the replica's, ``Never`` for ``ExitCode``: ``pkg/core/pod.go``
  ``SetRestartPolicy``); a ``Failed`` pod is deleted (so created again at the next
  reconcile) and the job gets ``Restarting`` under ``OnFailure``/``Always``, or under
  ``ExitCode`` with an exit code from 128 (``IsRetryableExitCode``); under ``ExitCode`` a
  lower one fails the job;
- the kinds' ``UpdateJobStatus``: ``startTime`` on the first one; the Chief/Master running
  makes the job ``Running``, succeeded ``Succeeded`` with ``completionTime``; a failed pod of
  an XGBoostJob replica fails the job unless its restart policy is ``ExitCode``, of a TFJob
  unless the job is ``Restarting``;
- ``pkg/util/status.go`` ``setCondition``: nothing changes once ``Failed``; one condition per
  type, appended last; ``Running`` and ``Restarting`` replace each other.

The kubelet's part is the test's: :meth:`TrainingOperator.exit` ends a pod's container (a
pod restarting ``OnFailure``/``Always`` restarts it in place, counted in its
``restartCount``; a ``Never`` pod ends ``Failed`` or ``Succeeded``), :meth:`evict` and
:meth:`delete` act on pods from outside (a node drained, a preemption). Time is the test's
too (``now``, seconds). The operator reconciles a job each time a client reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tests.kube_standin import KubeStandin, Pod

OPERATORS = {"tfjobs": "tfjob-controller", "xgboostjobs": "xgboostjob-controller"}
SPECS = {"tfjobs": "tfReplicaSpecs", "xgboostjobs": "xgbReplicaSpecs"}
CONTAINERS = {"tfjobs": "tensorflow", "xgboostjobs": "xgboost"}
HEADS = ("Chief", "Master")
RESTARTING_POLICIES = ("OnFailure", "Always", "ExitCode")  # counted by PastBackoffLimit


@dataclass
class ReplicaPod:
    """What the operator reads of one of its pods."""

    job: str
    rtype: str  # as in the spec: Master, Worker...
    index: int
    restart_policy: str  # the pod's: Never, OnFailure, Always
    phase: str = "Running"
    restarts: int = 0
    exit_code: int | None = None

    @property
    def name(self) -> str:
        return f"{self.job}-{self.rtype.lower()}-{self.index}"


@dataclass
class TrainingOperator:
    """training-operator v1.9 for the stand-in's TFJobs and XGBoostJobs."""

    api: KubeStandin
    now: float = 1_767_225_600.0  # 2026-01-01T00:00:00Z
    pods: dict[str, ReplicaPod] = field(default_factory=dict)  # by name
    created: list[str] = field(default_factory=list)  # every pod created, in order

    def __post_init__(self) -> None:
        self.api.controllers.append(self.reconcile)

    # -- the kubelet's and the cluster's part, which tests drive

    def exit(self, name: str, code: int) -> None:
        """The pod's container exits with ``code`` (137: killed out of memory)."""
        pod = self.pods[name]
        if code != 0 and pod.restart_policy in ("OnFailure", "Always"):
            pod.restarts += 1  # restarted in its pod; the pod stays Running
            return
        pod.phase, pod.exit_code = ("Succeeded" if code == 0 else "Failed"), code
        self.api.pods[name].phase = pod.phase

    def evict(self, name: str) -> None:
        """The pod is evicted (node pressure): it ends Failed, its container killed."""
        pod = self.pods[name]
        pod.phase, pod.exit_code = "Failed", 137
        self.api.pods[name].phase = pod.phase

    def delete(self, name: str) -> None:
        """The pod is deleted (a node drained, a preemption)."""
        del self.pods[name]
        self.api.pods.pop(name, None)

    # -- the operator

    def reconcile(self, plural: str, obj: dict[str, Any]) -> None:
        """ReconcileJobs on ``obj`` (the stored job), before a client reads it."""
        if plural not in OPERATORS:
            return
        status = obj.setdefault("status", {})
        if not status.get("conditions"):  # the job's creation (onOwnerCreateFunc)
            self._condition(obj, "Created", f"{obj['kind']} {obj['metadata']['name']} is created.")
        if _has(status, "Succeeded") or _has(status, "Failed"):
            return
        name = obj["metadata"]["name"]
        replicas = obj["spec"][SPECS[plural]]
        policy = obj["spec"].get("runPolicy") or {}
        pods = [pod for pod in self.pods.values() if pod.job == name]
        total = sum(spec.get("replicas", 1) for spec in replicas.values())
        active = sum(pod.phase not in ("Succeeded", "Failed") for pod in pods)
        failed = sum(pod.phase == "Failed" for pod in pods)
        previous = sum(s.get("failed", 0) for s in (status.get("replicaStatuses") or {}).values())
        limit = policy.get("backoffLimit")
        message = None
        if limit is not None:
            requeues = 0  # FakeWorkQueue.NumRequeues
            exceeds = failed > previous and active != total and requeues + 1 > limit
            restarts = sum(
                pod.restarts
                for pod in pods
                if pod.phase == "Running"
                and replicas[pod.rtype].get("restartPolicy") in RESTARTING_POLICIES
            )
            if exceeds or (restarts > 0 if limit == 0 else restarts >= limit):
                message = (
                    f"Job {name} has failed because it has reached the specified backoff limit"
                )
        deadline = policy.get("activeDeadlineSeconds")
        started = status.get("startTime")
        past = deadline is not None and started and self.now - _seconds(started) >= deadline
        if message is None and past:
            message = f"Job {name} has failed because it was active longer than specified deadline"
        if message is not None:
            status.setdefault("completionTime", self._time())
            for pod in pods:  # DeletePodsAndServices: all, the job not yet Failed
                self.delete(pod.name)
            self._condition(obj, "Failed", message)
            return
        status["replicaStatuses"] = {}
        for rtype, spec in replicas.items():
            self._reconcile_pods(plural, obj, rtype, spec)
        self._update_status(plural, obj)

    def _reconcile_pods(self, plural: str, obj: dict[str, Any], rtype: str, spec: dict) -> None:
        name = obj["metadata"]["name"]
        counts = obj["status"]["replicaStatuses"].setdefault(rtype, {})
        policy = spec.get("restartPolicy", "Never")
        for index in range(spec.get("replicas", 1)):
            pod = self.pods.get(f"{name}-{rtype.lower()}-{index}")
            if pod is None:
                self._create_pod(plural, obj, rtype, index, policy)
                continue
            if pod.phase == "Failed":
                retryable = (pod.exit_code or 0) >= 128
                if policy in ("OnFailure", "Always") or (policy == "ExitCode" and retryable):
                    self.delete(pod.name)
                    message = f"job {name} is restarting because {rtype} replica(s) failed."
                    self._condition(obj, "Restarting", message)
                elif policy == "ExitCode":
                    message = f'job "{name}" is failing because "{rtype}" replica(s) failed.'
                    self._condition(obj, "Failed", message)
            key = {"Running": "active", "Succeeded": "succeeded", "Failed": "failed"}[pod.phase]
            counts[key] = counts.get(key, 0) + 1

    def _create_pod(self, plural: str, obj: dict, rtype: str, index: int, policy: str) -> None:
        name = obj["metadata"]["name"]
        pod = ReplicaPod(name, rtype, index, "Never" if policy == "ExitCode" else policy)
        self.pods[pod.name] = pod
        self.created.append(pod.name)
        labels = {
            "training.kubeflow.org/job-name": name,
            "training.kubeflow.org/operator-name": OPERATORS[plural],
            "training.kubeflow.org/replica-type": rtype.lower(),
            "training.kubeflow.org/replica-index": str(index),
        }
        owner = {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "name": name,
            "uid": obj["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        container = (CONTAINERS[plural],)
        self.api.add_pod(Pod(pod.name, labels, container, owner=owner, created=self._time()))

    def _update_status(self, plural: str, obj: dict[str, Any]) -> None:
        status = obj["status"]
        status.setdefault("startTime", self._time())
        restarting = _has(status, "Restarting")
        kind, name = obj["kind"], obj["metadata"]["name"]
        replicas = obj["spec"][SPECS[plural]]
        for rtype, spec in replicas.items():
            counts = status["replicaStatuses"][rtype]
            if rtype in HEADS:
                if counts.get("active", 0) > 0:
                    self._condition(obj, "Running", f"{kind} {name} is running.")
                if spec.get("replicas", 1) - counts.get("succeeded", 0) == 0:
                    status.setdefault("completionTime", self._time())
                    self._condition(obj, "Succeeded", f"{kind} {name} successfully completed.")
                    return
            if counts.get("failed", 0) > 0:
                keeps = (
                    restarting if plural == "tfjobs" else spec.get("restartPolicy") == "ExitCode"
                )
                if keeps:
                    message = f"{kind} {name} is restarting because {rtype} replica(s) failed."
                    self._condition(obj, "Restarting", message)
                else:
                    status.setdefault("completionTime", self._time())
                    message = f"{kind} {name} has failed because {rtype} replica(s) failed."
                    self._condition(obj, "Failed", message)

    def _condition(self, obj: dict[str, Any], type_: str, message: str) -> None:
        """setCondition (pkg/util/status.go)."""
        status = obj["status"]
        conditions = status.get("conditions") or []
        if _has(status, "Failed"):
            return
        reason = f"{obj['kind']}{type_}"
        current = next((c for c in conditions if c["type"] == type_), None)
        if current and current["status"] == "True" and current["reason"] == reason:
            return
        kept = []
        for c in conditions:
            if c["type"] == type_ or {c["type"], type_} == {"Running", "Restarting"}:
                continue
            if type_ in ("Failed", "Succeeded") and c["type"] == "Running":
                c = {**c, "status": "False"}
            kept.append(c)
        now = self._time()
        kept.append(
            {
                "type": type_,
                "status": "True",
                "reason": reason,
                "message": message,
                "lastUpdateTime": now,
                "lastTransitionTime": now,
            }
        )
        status["conditions"] = kept

    def _time(self) -> str:
        return datetime.fromtimestamp(self.now, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _has(status: dict[str, Any], type_: str) -> bool:
    return any(c["type"] == type_ and c["status"] == "True" for c in status.get("conditions") or [])


def _seconds(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
