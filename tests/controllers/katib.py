"""Katib v0.19's Experiment controller, as the loopback API stand-in's controller for
``experiments`` (plugged into ``KubeStandin.controllers`` by
:meth:`ExperimentController.plug_into`). It is NOT Katib, and the stand-in NOT a cluster.

One reconcile per read of an Experiment: each GET moves it one step, as Katib's source
(kubeflow/katib v0.19.0) writes its status:

- ``experiment_controller.go`` ``Reconcile``: the first reconcile sets ``startTime``, the
  ``Created`` condition and ``completionTime`` to an empty ``metav1.Time``, which is sent as
  ``null`` (the CRD preserves unknown fields, so the API server keeps the null); later ones
  list the trials, update the status from them and create trials up to
  ``parallelTrialCount`` (``ReconcileTrials``), which show in the status from the next one.
  A suggestion that fails fails the Experiment without a completion time
  (``ReconcileSuggestions``).
- ``util/status_util.go``: ``updateTrialsSummary`` (the trial lists and counts, omitted when
  empty, and ``currentOptimalTrial``), ``UpdateExperimentStatusCondition`` (goal reached:
  Succeeded; failed trials, metrics unavailable included, at ``maxFailedTrialCount``:
  Failed; completed trials at ``maxTrialCount``: Succeeded; each with ``completionTime``;
  else Running).
- ``apis/.../experiments/v1beta1/util.go`` ``setCondition``: one condition per type, a
  changed one removed and appended last; Succeeded and Failed turn Running ``False``.

Each trial (a batch Job) is Pending when created, Running for its ``polls`` reconciles, then
ends. Its pod is labelled as Katib's pod webhook labels it and has the trial container and
the collector Katib injects for the StdOut collector (``metrics-logger-and-collector``,
``pkg/webhook/v1beta1/pod``): the training container's output goes to
``/var/log/katib/metrics.log`` (``1>... 2>&1``), so its own log is empty, and the collector
prints each line of that file through klog (``printMetricsFile``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.kube_standin import Pod

COLLECTOR = "metrics-logger-and-collector"  # pkg/metricscollector/v1beta1/common/const.go
TRIAL_CONTAINER = "training-container"
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s utilrand, for trial and pod names
START = datetime(2026, 12, 5, 10, 0, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Trial:
    """What one trial does: it runs for ``polls`` reconciles, then ends as ``end``
    (``Succeeded``, ``Failed`` or ``MetricsUnavailable``) with ``metric`` as its objective
    value, having printed ``lines``."""

    polls: int = 2
    end: str = "Succeeded"
    metric: float = 0.5
    lines: tuple[str, ...] = ()


@dataclass
class _Run:
    name: str
    plan: Trial
    age: int = -1  # reconciles since the one that created it (listed Pending at the next)
    pod: Pod | None = None

    @property
    def state(self) -> str:
        if self.age == 0:
            return "Pending"
        return "Running" if self.age <= self.plan.polls else self.plan.end


@dataclass
class ExperimentController:
    """Katib's Experiment controller over ``trials`` (the n-th trial Katib creates does
    ``trials[n]``, the last one repeated)."""

    trials: list[Trial] = field(default_factory=lambda: [Trial()])
    suggestion_fails: bool = False
    injected: bool = True  # the namespace has katib.kubeflow.org/metrics-collector-injection
    seed: int = 1
    reconciles: int = 0
    _runs: dict[str, list[_Run]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def plug_into(self, api: Any) -> None:
        """Reconcile the Experiments of the stand-in ``api`` before each read of one."""

        def reconcile(plural: str, obj: dict[str, Any]) -> None:
            if plural == "experiments":
                self.reconcile(api, obj)

        api.controllers.append(reconcile)

    def reconcile(self, api: Any, experiment: dict[str, Any]) -> None:
        """One reconcile of ``experiment`` (as stored by the stand-in ``api``)."""
        self.reconciles += 1
        now = (START + timedelta(seconds=self.reconciles)).strftime("%Y-%m-%dT%H:%M:%SZ")
        status = experiment.setdefault("status", {})
        runs = self._runs.setdefault(experiment["metadata"]["uid"], [])
        for run in runs:
            run.age += 1
            self._pod(api, experiment, run, now)
        if _completed(status):
            if status.get("trialsRunning"):
                _summary(experiment, runs)
            return
        if not _has(status, "Created"):
            status.update(startTime=now, completionTime=None)
            status.setdefault("currentOptimalTrial", {"observation": {}})
            _set(status, "Created", "True", "ExperimentCreated", "Experiment is created", now)
            return
        spec = experiment["spec"]
        if runs:
            goal_reached = _summary(experiment, runs)
            _conditions(status, spec, goal_reached, now)
            if _completed(status):
                return
        completed = sum(status.get(key, 0) for key in _COMPLETED)
        active = status.get("trialsPending", 0) + status.get("trialsRunning", 0)
        parallel = spec.get("parallelTrialCount", 3)
        if active < parallel:
            required = min(spec["maxTrialCount"] - completed, parallel)
            if required - active > 0 and self.suggestion_fails:
                message = "Suggestion has failed"
                _failed(status, "ExperimentFailed", message, now)  # no completion time
                return
            for _ in range(max(0, required - active)):
                name = f"{experiment['metadata']['name']}-{self._name(8)}"
                runs.append(_Run(name, self.trials[min(len(runs), len(self.trials) - 1)]))

    def _name(self, length: int) -> str:
        return "".join(self._random.choice(ALPHABET) for _ in range(length))

    def _pod(self, api: Any, experiment: dict[str, Any], run: _Run, now: str) -> None:
        """The trial's Job's pod, once it runs: created, then ended with the trial."""
        if run.pod is None and run.state != "Pending":
            labels = {
                "katib.kubeflow.org/experiment": experiment["metadata"]["name"],
                "katib.kubeflow.org/trial": run.name,
                "batch.kubernetes.io/job-name": run.name,
                "job-name": run.name,
            }
            containers = (TRIAL_CONTAINER, COLLECTOR) if self.injected else (TRIAL_CONTAINER,)
            pod = Pod(f"{run.name}-{self._name(5)}", labels, containers, created=now)
            pod.namespace = experiment["metadata"]["namespace"]
            logs = {TRIAL_CONTAINER: list(run.plan.lines)}
            if self.injected:  # the output went to the metrics file; the collector prints it
                logs = {TRIAL_CONTAINER: [], COLLECTOR: [_klog(line) for line in run.plan.lines]}
            run.pod = api.add_pod(pod, logs)
        if run.pod is not None and run.state not in ("Pending", "Running"):
            run.pod.phase = "Succeeded" if run.state == "Succeeded" else "Failed"


_COMPLETED = ("trialsSucceeded", "trialsFailed", "trialsKilled", "trialsEarlyStopped")
_LISTS = {
    "Running": ("runningTrialList", "trialsRunning"),
    "Pending": ("pendingTrialList", "trialsPending"),
    "Failed": ("failedTrialList", "trialsFailed"),
    "Succeeded": ("succeededTrialList", "trialsSucceeded"),
    "MetricsUnavailable": ("metricsUnavailableTrialList", "trialMetricsUnavailable"),
}


def _klog(line: str) -> str:
    """A line as klog v2's header prefixes it (the collector's ``klog.Info``)."""
    return f"I1205 10:00:00.000000      14 main.go:143] {line}"


def _summary(experiment: dict[str, Any], runs: list[_Run]) -> bool:
    """``updateTrialsSummary``: the trial lists and counts; whether the goal is reached."""
    status, objective = experiment["status"], experiment["spec"]["objective"]
    for listed, counted in _LISTS.values():
        status.pop(listed, None)
        status.pop(counted, None)
    status["trials"] = len(runs)
    for run in runs:
        listed, counted = _LISTS[run.state]
        status.setdefault(listed, []).append(run.name)
        status[counted] = status.get(counted, 0) + 1
    measured = [run for run in runs if run.state == "Succeeded"]
    if not measured:
        return False
    pick = min if objective["type"] == "minimize" else max
    best = pick(measured, key=lambda run: run.plan.metric)
    value = repr(best.plan.metric)
    name = objective["objectiveMetricName"]
    status["currentOptimalTrial"] = {
        "bestTrialName": best.name,
        "parameterAssignments": _assignments(experiment["spec"]),
        "observation": {"metrics": [{"name": name, "min": value, "max": value, "latest": value}]},
    }
    goal = objective.get("goal")
    if goal is None:
        return False
    return best.plan.metric <= goal if objective["type"] == "minimize" else best.plan.metric >= goal


def _assignments(spec: dict[str, Any]) -> list[dict[str, str]]:
    """A trial's values: each parameter's first candidate (the suggestion is not modelled)."""
    values = []
    for parameter in spec.get("parameters", []):
        space = parameter["feasibleSpace"]
        values.append(
            {"name": parameter["name"], "value": (space.get("list") or [space["min"]])[0]}
        )
    return values


def _conditions(status: dict[str, Any], spec: dict[str, Any], goal_reached: bool, now: str):
    """``UpdateExperimentStatusCondition``."""
    completed = sum(status.get(k, 0) for k in (*_COMPLETED, "trialMetricsUnavailable"))
    failed = status.get("trialsFailed", 0) + status.get("trialMetricsUnavailable", 0)
    allowed = spec.get("maxFailedTrialCount")
    if goal_reached:
        message = "Experiment has succeeded because Objective goal has reached"
        _succeeded(status, "ExperimentGoalReached", message, now)
    elif allowed is not None and failed != 0 and failed >= allowed:
        message = "Experiment has failed because max failed count has reached"
        _failed(status, "ExperimentFailed", message, now)
    elif completed >= spec["maxTrialCount"]:
        message = "Experiment has succeeded because max trial count has reached"
        _succeeded(status, "ExperimentMaxTrialsReached", message, now)
    else:
        _set(status, "Running", "True", "ExperimentRunning", "Experiment is running", now)
        return
    status["completionTime"] = now


def _succeeded(status: dict[str, Any], reason: str, message: str, now: str) -> None:
    _end_running(status, now)
    _set(status, "Succeeded", "True", reason, message, now)


def _failed(status: dict[str, Any], reason: str, message: str, now: str) -> None:
    _end_running(status, now)
    _set(status, "Failed", "True", reason, message, now)


def _end_running(status: dict[str, Any], now: str) -> None:
    running = _condition(status, "Running")
    if running is not None:
        _set(status, "Running", "False", running["reason"], running["message"], now)


def _condition(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions", []) if c["type"] == kind), None)


def _has(status: dict[str, Any], kind: str) -> bool:
    found = _condition(status, kind)
    return found is not None and found["status"] == "True"


def _completed(status: dict[str, Any]) -> bool:
    return _has(status, "Succeeded") or _has(status, "Failed")


def _set(status: dict[str, Any], kind: str, value: str, reason: str, message: str, now: str):
    """``setCondition``: unchanged when status and reason are; else removed, appended last
    (its transition time kept when only the reason changed)."""
    current = _condition(status, kind)
    if current is not None and current["status"] == value and current["reason"] == reason:
        return
    transition = current["lastTransitionTime"] if current and current["status"] == value else now
    conditions = [c for c in status.get("conditions", []) if c["type"] != kind]
    conditions.append(
        {
            "type": kind,
            "status": value,
            "reason": reason,
            "message": message,
            "lastUpdateTime": now,
            "lastTransitionTime": transition,
        }
    )
    status["conditions"] = conditions
