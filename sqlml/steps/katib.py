"""Hyperparameter search on Kubernetes: a Katib Experiment.

The Experiment runs trials of a template (any Kubernetes object: a batch Job, or a
Kubeflow training job from :mod:`sqlml.steps.kubeflow`) whose ``${trialParameters.NAME}``
placeholders Katib fills with each trial's values, and reads the objective metric each
trial reports.

The manifest is built as plain JSON values in Katib's ``v1beta1`` schema: Katib's Python
SDK (``kubeflow-katib``) pins ``protobuf<5``, which TensorFlow's own pin excludes, so it is
not a dependency of sqlml; the tests check every field against its models.

The step fails when the Experiment has Katib's ``Failed`` condition: Katib (v0.19) sets it
once failed trials, trials whose metrics were unavailable included, reach
``maxFailedTrialCount``, or when its suggestion fails. It succeeds when the Experiment's
``completionTime`` is set and not empty: Katib writes it as ``null`` when it creates the
Experiment (an empty time: Argo's gjson lookup finds a null, so a bare ``status.completionTime``
would hold at once) and sets it in the status update that adds ``Succeeded`` (the last trial
counted, the objective's goal reached) or ``Failed`` (checked first).

Metrics collection (``StdOut``, ``File``...) works only in namespaces labelled
``katib.kubeflow.org/metrics-collector-injection: enabled``, where Katib's webhook adds its
collector to the trial pods and runs the trial container's command through ``sh -c``.

System dependencies: a Kubernetes cluster with Katib (``kubeflow.org/v1beta1``) and the
operator of the trial template's kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlml.errors import KubernetesError
from sqlml.steps.kubeflow import failed_condition
from sqlml.steps.naming import MAX_EXPERIMENT_NAME, check_label
from sqlml.workflow.core import Step
from sqlml.workflow.templates import run_job

API_VERSION = "kubeflow.org/v1beta1"
PARAMETER_TYPES = ("double", "int", "categorical", "discrete")
GOALS = ("maximize", "minimize")
COLLECTORS = ("StdOut", "File", "TensorFlowEvent", "PrometheusMetric", "None")
RESUME_POLICIES = ("Never", "LongRunning", "FromVolume")
# One condition per type, each new one appended last (Katib's Experiment setCondition):
# Created, Running, Restarting, Succeeded, Failed.
EXPERIMENT_CONDITION_TYPES = 5
# completionTime present and not null (its string is "" while null): set only when it ends.
EXPERIMENT_COMPLETED = "status.completionTime,status.completionTime!="


@dataclass(frozen=True)
class Parameter:
    """One searched hyperparameter.

    Args:
        name: its name, referenced by the trial template's parameters.
        type: ``double``, ``int`` (a range) or ``categorical``, ``discrete`` (a list).
        min: the range's lower bound.
        max: the range's upper bound.
        step: the range's step (grid search).
        values: the candidates of a list.
        distribution: ``uniform``, ``logUniform``, ``normal`` or ``logNormal`` sampling.
    """

    name: str
    type: str
    min: float | None = None
    max: float | None = None
    step: float | None = None
    values: Sequence[str | float] = ()
    distribution: str | None = None

    def to_plain(self) -> dict[str, Any]:
        if self.type not in PARAMETER_TYPES:
            raise KubernetesError(
                f"hyperparameter {self.name} has unknown type {self.type!r}",
                hint=f"use one of {', '.join(PARAMETER_TYPES)}",
            )
        ranged = self.type in ("double", "int")
        if ranged and (self.min is None or self.max is None or self.values):
            raise KubernetesError(
                f"hyperparameter {self.name} of type {self.type} needs min and max, no values",
                hint="give min and max (and step for a grid), or use type categorical",
            )
        if not ranged and (not self.values or self.min is not None or self.max is not None):
            raise KubernetesError(
                f"hyperparameter {self.name} of type {self.type} needs values, no range",
                hint="list the candidates in values, or use type double or int",
            )
        space = {
            "min": _number(self.min, self.type),
            "max": _number(self.max, self.type),
            "step": _number(self.step, self.type),
            "list": [str(value) for value in self.values] or None,
            "distribution": self.distribution,
        }
        return {
            "name": self.name,
            "parameterType": self.type,
            "feasibleSpace": {key: value for key, value in space.items() if value is not None},
        }


def run(
    name: str,
    *,
    trial_spec: dict[str, Any],
    parameters: Sequence[Parameter],
    trial_parameters: Mapping[str, str],
    objective_metric: str,
    goal: str = "maximize",
    objective_goal: float | None = None,
    additional_metrics: Sequence[str] = (),
    algorithm: str = "random",
    algorithm_settings: Mapping[str, str] | None = None,
    early_stopping: str | None = None,
    early_stopping_settings: Mapping[str, str] | None = None,
    parallel_trial_count: int = 3,
    max_trial_count: int = 12,
    max_failed_trial_count: int = 3,
    metrics_collector: str = "StdOut",
    primary_container_name: str | None = None,
    trial_success_condition: str | None = None,
    trial_failure_condition: str | None = None,
    resume_policy: str | None = None,
    namespace: str | None = None,
    after: Sequence[Step] = (),
) -> Step:
    """A Katib Experiment that searches ``parameters`` by running trials of ``trial_spec``.

    The step succeeds when the Experiment completes and fails when Katib fails it: when
    ``max_failed_trial_count`` trials failed or reported no metrics.

    Args:
        name: the Experiment's name (a DNS label of at most 40 characters, starting with a
            letter) and the step's.
        trial_spec: the object each trial creates, as plain JSON values, with
            ``${trialParameters.NAME}`` placeholders; a step zoo job's ``manifest`` fits.
            Its name and namespace are left out: Katib names each trial's object after
            the trial and creates it in the Experiment's namespace.
        parameters: the searched hyperparameters.
        trial_parameters: placeholder name -> the searched parameter it takes, or the
            trial's metadata (``${trialSpec.Name}``, ``${trialSpec.Namespace}``...).
        objective_metric: the metric each trial reports (e.g. ``accuracy``).
        goal: ``maximize`` or ``minimize`` the objective metric.
        objective_goal: stop early once a trial reaches this value.
        additional_metrics: other metrics to collect.
        algorithm: Katib's search algorithm (``random``, ``grid``, ``bayesianoptimization``,
            ``tpe``, ``hyperband``, ``cmaes``...).
        algorithm_settings: the algorithm's settings, by name.
        early_stopping: Katib's early-stopping algorithm (``medianstop``), or None.
        early_stopping_settings: its settings, by name (``min_trials_required``,
            ``start_step``).
        parallel_trial_count: trials run at once.
        max_trial_count: trials in all.
        max_failed_trial_count: failed trials (metrics unavailable included) at which the
            Experiment fails.
        metrics_collector: how metrics are read: ``StdOut`` (``name=value`` lines),
            ``File``, ``TensorFlowEvent``, ``PrometheusMetric`` or ``None``.
        primary_container_name: the trial container whose metrics are collected
            (default: the trial spec's container when all its pods have one name).
        trial_success_condition: when a trial's object succeeded (Katib's GJSON syntax;
            default: Katib's for batch Jobs and Kubeflow jobs).
        trial_failure_condition: when it failed.
        resume_policy: ``Never``, ``LongRunning`` or ``FromVolume``.
        namespace: the Experiment's namespace (default: the workflow's).
        after: steps that must finish first.

    System dependencies: Katib ``v1beta1`` and the operator of the trial spec's kind.
    """
    check_label(name, "a Katib Experiment", MAX_EXPERIMENT_NAME)
    _check_choice("goal", goal, GOALS)
    _check_choice("metrics collector", metrics_collector, COLLECTORS)
    if resume_policy is not None:
        _check_choice("resume policy", resume_policy, RESUME_POLICIES)
    searched = {parameter.name for parameter in parameters}
    unknown = sorted(
        reference
        for reference in set(trial_parameters.values()) - searched
        if not reference.startswith("${trialSpec.")  # the trial's own metadata, e.g. its Name
    )
    if unknown:
        raise KubernetesError(
            f"trial parameters refer to {', '.join(unknown)}, which are not searched",
            hint=f"refer to one of {', '.join(sorted(searched)) or '(no parameters given)'}",
        )
    if not 1 <= parallel_trial_count <= max_trial_count:
        raise KubernetesError(
            f"parallel_trial_count {parallel_trial_count} must be between 1 and "
            f"max_trial_count ({max_trial_count})",
            hint="run fewer trials at once, or more in all",
        )
    trial_spec = _without_name(trial_spec)
    primary_container_name = _primary_container(trial_spec, primary_container_name)
    objective = {
        "type": goal,
        "objectiveMetricName": objective_metric,
        "goal": objective_goal,
        "additionalMetricNames": list(additional_metrics) or None,
    }
    template = {
        "primaryContainerName": primary_container_name,
        "successCondition": trial_success_condition,
        "failureCondition": trial_failure_condition,
        "trialParameters": [
            {"name": key, "reference": reference} for key, reference in trial_parameters.items()
        ],
        "trialSpec": trial_spec,
    }
    spec = {
        "objective": _present(objective),
        "algorithm": _settings(algorithm, algorithm_settings),
        "earlyStopping": _settings(early_stopping, early_stopping_settings),
        "parameters": [parameter.to_plain() for parameter in parameters],
        "parallelTrialCount": parallel_trial_count,
        "maxTrialCount": max_trial_count,
        "maxFailedTrialCount": max_failed_trial_count,
        "metricsCollectorSpec": {"collector": {"kind": metrics_collector}},
        "resumePolicy": resume_policy,
        "trialTemplate": _present(template),
    }
    metadata = _present({"name": name, "namespace": namespace})
    manifest = {
        "apiVersion": API_VERSION,
        "kind": "Experiment",
        "metadata": metadata,
        "spec": _present(spec),
    }
    return run_job(
        name,
        manifest,
        EXPERIMENT_COMPLETED,
        failed_condition(EXPERIMENT_CONDITION_TYPES),
        after,
    )


def _settings(algorithm: str | None, settings: Mapping[str, Any] | None) -> dict | None:
    """An algorithm's spec (search or early stopping): its name and its settings as text."""
    if algorithm is None:
        return None
    pairs = [{"name": key, "value": str(value)} for key, value in (settings or {}).items()]
    return _present({"algorithmName": algorithm, "algorithmSettings": pairs or None})


def _present(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _number(value: float | None, kind: str) -> str | None:
    """Katib's feasible space holds numbers as strings; ``int`` ranges as integers."""
    if value is None:
        return None
    return str(int(value)) if kind == "int" else repr(float(value))


def _check_choice(what: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise KubernetesError(f"unknown {what} {value!r}", hint=f"use one of {', '.join(choices)}")


def _without_name(trial_spec: dict[str, Any]) -> dict[str, Any]:
    """``trial_spec`` without the metadata Katib sets itself (it refuses both)."""
    metadata = {
        key: value
        for key, value in trial_spec.get("metadata", {}).items()
        if key not in ("name", "namespace")
    }
    return _present({**trial_spec, "metadata": metadata or None})


def _container_names(value: Any) -> set[str]:
    """The names of every container in the pod templates within ``value``."""
    if isinstance(value, list):
        return set().union(*(_container_names(item) for item in value))
    if not isinstance(value, dict):
        return set()
    names = {c.get("name") for c in value.get("containers", []) if isinstance(c, dict)}
    return {n for n in names if n} | _container_names(
        [item for key, item in value.items() if key != "containers"]
    )


def _primary_container(trial_spec: dict[str, Any], given: str | None) -> str:
    """The trial container whose metrics Katib collects: ``given``, or the only one."""
    names = _container_names(trial_spec)
    if given is not None and (given in names or not names):
        return given
    if given is None and len(names) == 1:
        return names.pop()
    raise KubernetesError(
        "the trial spec has no single container to collect metrics from"
        if given is None
        else f"the trial spec has no container named {given!r}",
        hint=f"set primary_container_name to one of {', '.join(sorted(names)) or '(none)'}",
    )
