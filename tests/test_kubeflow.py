"""Kubeflow training jobs and Katib Experiments, checked against the published SDK models."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pydantic
import pytest
from conftest import import_or_skip

from sqlml import steps
from sqlml.errors import KubernetesError
from sqlml.steps import katib, kubeflow
from sqlml.steps.kubeflow import Replica, RunPolicy, SchedulingPolicy
from tests.k8s_validation import validate

training = import_or_skip("kubeflow.training")

_PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float)}


def build(data: Any, type_name: str, models: Any) -> Any:
    """``data`` as the SDK's object of type ``type_name``, failing on any key the model
    lacks or value of another type (fields the operator would drop or reject).

    The Kubeflow SDKs' own models are OpenAPI classes; the Kubernetes models they hold are
    pydantic models, validated strictly with extra fields forbidden.
    """
    if type_name in _PRIMITIVES:
        assert isinstance(data, _PRIMITIVES[type_name]), (type_name, data)
        assert type_name == "bool" or not isinstance(data, bool), (type_name, data)
        return data
    if type_name in ("object", "Quantity"):
        return data
    if match := re.fullmatch(r"list\[(.+)\]", type_name):
        assert isinstance(data, list), (type_name, data)
        return [build(item, match[1], models) for item in data]
    if match := re.fullmatch(r"dict\(str, (.+)\)", type_name):
        assert isinstance(data, dict), (type_name, data)
        return {key: build(item, match[1], models) for key, item in data.items()}
    klass = getattr(models, type_name)
    if issubclass(klass, pydantic.BaseModel):
        return klass.model_validate(data, extra="forbid", strict=True)
    assert isinstance(data, dict), (type_name, data)
    fields = {json_key: attr for attr, json_key in klass.attribute_map.items()}
    unknown = set(data) - set(fields)
    assert not unknown, f"{type_name} has no fields {unknown}"
    return klass(
        **{
            fields[key]: build(value, klass.openapi_types[fields[key]], models)
            for key, value in data.items()
        }
    )


def assert_valid(manifest: dict[str, Any], type_name: str, models: Any) -> None:
    """``manifest`` fits the SDK model exactly and survives manifest -> model -> manifest."""
    assert kubeflow.to_plain(build(manifest, type_name, models)) == manifest


def assert_valid_job(manifest: dict[str, Any], kind: str) -> None:
    from kubeflow.training import models

    assert_valid(manifest, f"KubeflowOrgV1{kind}", models)


def _replica(count: int = 1, **settings: Any) -> Replica:
    return Replica(
        image="registry.example/sqlml:1",
        command=("python", "-m", "sqlml.runtime.step"),
        args=('{"kind":"sql"}',),
        replicas=count,
        env={"LOG_LEVEL": "info"},
        secret_env={"SQLML_DATASOURCE": ("sqlml-datasource", "url")},
        requests={"cpu": "500m", "memory": "1Gi"},
        limits={"cpu": "2"},
        node_selector={"pool": "train"},
        service_account="trainer",
        **settings,
    )


FULL_POLICY = RunPolicy(
    clean_pod_policy="Running",
    ttl_seconds_after_finished=600,
    active_deadline_seconds=7200,
    backoff_limit=4,
    scheduling_policy=SchedulingPolicy(
        min_available=3,
        queue="ml",
        priority_class="high",
        min_resources={"cpu": "3"},
        schedule_timeout_seconds=120,
    ),
)


def test_tfjob_has_every_replica_type_and_the_run_policy():
    step = steps.tensorflow.train(
        "tf-job",
        chief=_replica(),
        workers=_replica(3),
        ps=_replica(2),
        evaluator=_replica(),
        namespace="ml",
        run_policy=FULL_POLICY,
        success_policy="AllWorkers",
        labels={"app": "sqlml"},
    )
    manifest = step.params["manifest"]
    assert_valid_job(manifest, "TFJob")
    assert manifest["apiVersion"] == "kubeflow.org/v1"
    assert manifest["metadata"] == {"name": "tf-job", "namespace": "ml", "labels": {"app": "sqlml"}}
    specs = manifest["spec"]["tfReplicaSpecs"]
    assert {role: spec["replicas"] for role, spec in specs.items()} == {
        "Chief": 1,
        "Worker": 3,
        "PS": 2,
        "Evaluator": 1,
    }
    assert manifest["spec"]["runPolicy"] == {
        "cleanPodPolicy": "Running",
        "ttlSecondsAfterFinished": 600,
        "activeDeadlineSeconds": 7200,
        "backoffLimit": 4,
        "schedulingPolicy": {
            "minAvailable": 3,
            "queue": "ml",
            "priorityClass": "high",
            "minResources": {"cpu": "3"},
            "scheduleTimeoutSeconds": 120,
        },
    }
    assert manifest["spec"]["successPolicy"] == "AllWorkers"
    pod = specs["Worker"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 1000
    assert pod["nodeSelector"] == {"pool": "train"}
    assert pod["serviceAccountName"] == "trainer"
    (container,) = pod["containers"]
    assert container["name"] == "tensorflow"
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"cpu": "2"},
    }
    assert container["env"] == [
        {"name": "LOG_LEVEL", "value": "info"},
        {
            "name": "SQLML_DATASOURCE",
            "valueFrom": {"secretKeyRef": {"name": "sqlml-datasource", "key": "url"}},
        },
    ]
    assert step.template == "resource"
    assert step.params["success_condition"] == JOB_SUCCEEDED
    assert step.params["failure_condition"] == JOB_FAILED


# The operator's conditions: completionTime comes with Succeeded or Failed; Failed is the
# last of at most five conditions (see tests/test_job_conditions.py for how they are met).
JOB_SUCCEEDED = "status.completionTime"
JOB_FAILED = ", ".join(f"status.conditions.{index}.type == Failed" for index in range(5))


def test_tfjob_without_chief_ends_with_the_job():
    step = steps.tensorflow.train("tf-job", workers=_replica(2))
    assert_valid_job(step.params["manifest"], "TFJob")
    assert step.params["success_condition"] == JOB_SUCCEEDED
    assert set(step.params["manifest"]["spec"]["tfReplicaSpecs"]) == {"Worker"}


def test_jobs_have_a_backoff_limit_by_default():
    manifest = steps.xgboost.train("x", master=_replica()).params["manifest"]
    assert manifest["spec"]["runPolicy"] == {"cleanPodPolicy": "None", "backoffLimit": 3}


@pytest.mark.parametrize(
    ("make", "kind", "spec_key", "roles", "container"),
    [
        (
            lambda: steps.pytorch.train(
                "pt", master=_replica(), workers=_replica(2), nproc_per_node="2"
            ),
            "PyTorchJob",
            "pytorchReplicaSpecs",
            {"Master": 1, "Worker": 2},
            "pytorch",
        ),
        (
            lambda: steps.xgboost.train(
                "xgb", master=_replica(), workers=_replica(4), run_policy=FULL_POLICY
            ),
            "XGBoostJob",
            "xgbReplicaSpecs",
            {"Master": 1, "Worker": 4},
            "xgboost",
        ),
    ],
)
def test_other_jobs_are_valid(make, kind, spec_key, roles, container):
    step = make()
    manifest = step.params["manifest"]
    assert_valid_job(manifest, kind)
    assert manifest["kind"] == kind
    specs = manifest["spec"][spec_key]
    assert {role: spec["replicas"] for role, spec in specs.items()} == roles
    assert {spec["template"]["spec"]["containers"][0]["name"] for spec in specs.values()} == {
        container
    }
    assert step.params["success_condition"] == JOB_SUCCEEDED
    assert step.params["failure_condition"] == JOB_FAILED


def test_mpi_jobs_are_mpi_operators_v2beta1():
    step = steps.mpi.train(
        "mpi",
        launcher=_replica(),
        workers=_replica(2),
        slots_per_worker=4,
        mpi_implementation="Intel",
        container_name="horovod",
    )
    manifest = step.params["manifest"]
    assert manifest["apiVersion"] == "kubeflow.org/v2beta1"  # mpi-operator serves no v1
    assert validate(manifest) == []
    spec = manifest["spec"]
    assert "mainContainer" not in spec  # a v1 field that v2beta1 does not have
    assert spec["slotsPerWorker"] == 4 and spec["mpiImplementation"] == "Intel"
    specs = spec["mpiReplicaSpecs"]
    assert {role: s["replicas"] for role, s in specs.items()} == {"Launcher": 1, "Worker": 2}
    assert {s["template"]["spec"]["containers"][0]["name"] for s in specs.values()} == {"horovod"}
    assert step.params["success_condition"] == JOB_SUCCEEDED


def test_the_round_trip_catches_an_unknown_field():
    manifest = steps.xgboost.train("xgb", master=_replica()).params["manifest"]
    manifest["spec"]["runPolicy"]["cleanupPolicy"] = "All"
    with pytest.raises(AssertionError, match="cleanupPolicy"):
        assert_valid_job(manifest, "XGBoostJob")


def test_job_steps_wait_for_their_dependencies():
    first = steps.xgboost.train("first", master=_replica())
    second = steps.tensorflow.train("second", workers=_replica(), after=[first])
    assert second.after == ("first",)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: steps.xgboost.train("x", master=_replica(run_as_user=0)), "non-root"),
        (lambda: steps.xgboost.train("x", master=_replica(2)), "exactly one Master"),
        (lambda: steps.tensorflow.train("x", workers=_replica(0)), "at least 1"),
        (
            lambda: steps.xgboost.train(
                "x", master=_replica(), run_policy=RunPolicy(clean_pod_policy="Sometimes")
            ),
            "clean pod policy",
        ),
        (
            lambda: steps.xgboost.train("x", master=_replica(restart_policy="Maybe")),
            "restart policy",
        ),
        (lambda: steps.xgboost.train("Bad_Name", master=_replica()), "not a valid name"),
        (
            lambda: steps.xgboost.train("2024-q1", master=_replica()),
            "start with a lower-case letter",
        ),
        # Its Services would be x...x-worker-0 and longer than 63 characters.
        (lambda: steps.xgboost.train("x" * 55, master=_replica()), "at most 54 are allowed"),
        (lambda: _experiment_with(name="e" * 41), "at most 40 are allowed"),
    ],
)
def test_bad_settings_are_user_errors_with_hints(make, message):
    with pytest.raises(KubernetesError, match=message) as raised:
        make()
    assert raised.value.hint


def _experiment(**settings: Any):
    trial = steps.tensorflow.train(
        "trial",
        workers=Replica(
            image="sqlml:1",
            command=("python", "train.py"),
            args=("--lr=${trialParameters.learningRate}", "--units=${trialParameters.units}"),
        ),
    ).params["manifest"]
    return katib.run(
        "search",
        trial_spec=trial,
        parameters=[
            katib.Parameter("lr", "double", min=0.001, max=0.1, distribution="logUniform"),
            katib.Parameter("units", "int", min=16, max=128, step=16),
            katib.Parameter("optimizer", "categorical", values=("adam", "sgd")),
        ],
        trial_parameters={"learningRate": "lr", "units": "units"},
        objective_metric="accuracy",
        objective_goal=0.99,
        additional_metrics=("loss",),
        algorithm="bayesianoptimization",
        algorithm_settings={"random_state": 7},
        parallel_trial_count=2,
        max_trial_count=10,
        max_failed_trial_count=2,
        primary_container_name="tensorflow",
        resume_policy="Never",
        namespace="ml",
        **settings,
    )


def test_katib_experiment_is_valid():
    # Katib's SDK pins protobuf<5, which TensorFlow excludes: installed without its
    # dependencies in the development environment (pip install --no-deps kubeflow-katib).
    katib_models = import_or_skip("kubeflow.katib.models")

    step = _experiment()
    manifest = step.params["manifest"]
    assert_valid(manifest, "V1beta1Experiment", katib_models)
    spec = manifest["spec"]
    assert spec["objective"] == {
        "type": "maximize",
        "objectiveMetricName": "accuracy",
        "goal": 0.99,
        "additionalMetricNames": ["loss"],
    }
    assert spec["parameters"][0]["feasibleSpace"] == {
        "min": "0.001",
        "max": "0.1",
        "distribution": "logUniform",
    }
    assert spec["parameters"][1]["feasibleSpace"] == {"min": "16", "max": "128", "step": "16"}
    assert spec["parameters"][2]["feasibleSpace"] == {"list": ["adam", "sgd"]}
    assert spec["algorithm"]["algorithmSettings"] == [{"name": "random_state", "value": "7"}]
    assert_valid_job(spec["trialTemplate"]["trialSpec"], "TFJob")
    assert validate(manifest) == []
    # Katib fails the Experiment when failed trials (metrics unavailable included) reach 2.
    assert step.params["failure_condition"] == JOB_FAILED
    # Katib writes completionTime as null from its first reconcile: present AND not empty.
    assert step.params["success_condition"] == "status.completionTime,status.completionTime!="


@pytest.mark.parametrize(
    ("parameters", "trial_parameters", "message"),
    [
        ([katib.Parameter("lr", "double", min=0.1, max=1)], {"x": "momentum"}, "not searched"),
        ([katib.Parameter("lr", "double", values=("1",))], {"x": "lr"}, "needs min and max"),
        ([katib.Parameter("opt", "categorical")], {"x": "opt"}, "needs values"),
        ([katib.Parameter("lr", "float", min=0, max=1)], {"x": "lr"}, "unknown type"),
    ],
)
def test_katib_rejects_inconsistent_searches(parameters, trial_parameters, message):
    with pytest.raises(KubernetesError, match=message) as raised:
        katib.run(
            "search",
            trial_spec={},
            parameters=parameters,
            trial_parameters=trial_parameters,
            objective_metric="accuracy",
            primary_container_name="training-container",
        )
    assert raised.value.hint


def test_katib_trials_take_a_zoo_job_as_it_is():
    # Katib names each trial's object itself and refuses a name or namespace in trialSpec;
    # the metrics are collected from the job's only container.
    trial = steps.xgboost.train(
        "trial", master=replace(_replica(), args=("--lr=${trialParameters.lr}",)), namespace="ml"
    ).params["manifest"]
    manifest = _experiment_with(trial_spec=trial).params["manifest"]
    template = manifest["spec"]["trialTemplate"]
    assert "name" not in template["trialSpec"].get("metadata", {})
    assert "namespace" not in template["trialSpec"].get("metadata", {})
    assert template["primaryContainerName"] == "xgboost"
    assert validate(manifest) == []


@pytest.mark.parametrize(
    ("given", "message"),
    [(None, "no single container"), ("trainer", "no container named 'trainer'")],
)
def test_katib_needs_the_container_whose_metrics_it_collects(given, message):
    trial = {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
    }
    with pytest.raises(KubernetesError, match=message) as raised:
        _experiment_with(trial_spec=trial, primary_container_name=given)
    assert "a, b" in raised.value.hint


def test_katib_rejects_more_parallel_than_total_trials():
    with pytest.raises(KubernetesError, match="parallel_trial_count"):
        _experiment_with(parallel_trial_count=5, max_trial_count=3)


def _experiment_with(name: str = "search", **settings: Any):
    if "trial_spec" not in settings:
        settings.update(trial_spec={}, primary_container_name="training-container")
    return katib.run(
        name,
        parameters=[katib.Parameter("lr", "double", min=0.1, max=1)],
        trial_parameters={"lr": "lr"},
        objective_metric="accuracy",
        **settings,
    )
