"""The validator of Kubernetes objects (tests/k8s_validation.py), tested on its own.

Negative controls: objects a cluster would refuse, each reported with the right violation
and path. Positive controls: small hand-written objects it must accept. And the CEL rules of
the vendored schemas: every one has an evaluation, which agrees with cel-python's.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
import re
import time
from typing import Any

import k8s_validation as kv
import pytest
from k8s_validation import validate

IMAGE = "registry.example.com/sqlml:1"


def container(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "image": IMAGE,
        "command": ["python", "-m", "train"],
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        "env": [
            {
                "name": "SQLML_DATASOURCE",
                "valueFrom": {"secretKeyRef": {"name": "sqlml-datasource", "key": "url"}},
            }
        ],
        **extra,
    }


def tfjob(name: str = "tf-train", workers: int = 2) -> dict[str, Any]:
    replica = {
        "replicas": workers,
        "restartPolicy": "ExitCode",
        "template": {"spec": {"containers": [container("tensorflow")]}},
    }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "labels": {"app.kubernetes.io/part-of": "sqlml"},
        },
        "spec": {
            "runPolicy": {
                "cleanPodPolicy": "None",
                "backoffLimit": 3,
                "activeDeadlineSeconds": 86400,
            },
            "tfReplicaSpecs": {
                "Chief": {**copy.deepcopy(replica), "replicas": 1},
                "Worker": replica,
            },
        },
    }


def mpijob_v2(name: str = "mpi-train") -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"generateName": f"{name}-", "namespace": "ml"},
        "spec": {
            "slotsPerWorker": 1,
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 2},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "OnFailure",
                    "template": {"spec": {"containers": [container("launcher")]}},
                },
                "Worker": {
                    "replicas": 4,
                    "restartPolicy": "Never",
                    "template": {"spec": {"containers": [container("worker")]}},
                },
            },
        },
    }


def experiment(name: str = "search") -> dict[str, Any]:
    trial_container = container(
        "training-container",
        args=["--eta=${trialParameters.eta}", "--trial=${trialParameters.trialName}"],
    )
    return {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Experiment",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "objective": {"type": "minimize", "objectiveMetricName": "validation_rmse"},
            "algorithm": {"algorithmName": "random"},
            "parameters": [
                {
                    "name": "eta",
                    "parameterType": "double",
                    "feasibleSpace": {"min": "0.01", "max": "0.3"},
                },
            ],
            "maxTrialCount": 4,
            "parallelTrialCount": 2,
            "maxFailedTrialCount": 1,
            "metricsCollectorSpec": {"collector": {"kind": "StdOut"}},
            "trialTemplate": {
                "primaryContainerName": "training-container",
                "trialParameters": [
                    {"name": "eta", "reference": "eta"},
                    {"name": "trialName", "reference": "${trialSpec.Name}"},
                ],
                "trialSpec": {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "spec": {
                        "backoffLimit": 0,
                        "template": {
                            "spec": {"restartPolicy": "Never", "containers": [trial_container]}
                        },
                    },
                },
            },
        },
    }


FAILED = "status.conditions.0.type == Failed, status.conditions.1.type == Failed"


def workflow(manifest: dict[str, Any] | None = None) -> dict[str, Any]:
    """A DAG of a container step and a resource step that creates ``manifest``."""
    manifest = manifest if manifest is not None else tfjob()
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {"generateName": "program-", "namespace": "ml"},
        "spec": {
            "entrypoint": "main",
            "serviceAccountName": "sqlml-runner",
            "templates": [
                {
                    "name": "main",
                    "dag": {
                        "tasks": [
                            {
                                "name": "s01-create",
                                "template": "sql",
                                "arguments": {"parameters": [{"name": "ir", "value": "{}"}]},
                            },
                            {
                                "name": "s02-train",
                                "template": "resource",
                                "dependencies": ["s01-create"],
                                "arguments": {
                                    "parameters": [
                                        {"name": "manifest", "value": json.dumps(manifest)},
                                        {"name": "success", "value": "status.completionTime"},
                                        {"name": "failure", "value": FAILED},
                                    ]
                                },
                            },
                            {
                                "name": "s03-check",
                                "template": "sql",
                                "dependencies": ["s02-train", "s01-create"],
                                "arguments": {
                                    "parameters": [
                                        {
                                            "name": "ir",
                                            "value": "{{tasks.s01-create.outputs.result}}",
                                        }
                                    ]
                                },
                            },
                        ]
                    },
                },
                {
                    "name": "sql",
                    "inputs": {"parameters": [{"name": "ir"}]},
                    "retryStrategy": {"limit": 2, "retryPolicy": "OnFailure"},
                    "container": {
                        "image": IMAGE,
                        "command": ["python", "-m", "sqlml.runtime.step"],
                        "args": ["{{inputs.parameters.ir}}", "{{workflow.name}}", "{{pod.name}}"],
                        "env": [{"name": "SQLML_DATASOURCE", "value": "duckdb:///tmp/x"}],
                    },
                },
                {
                    "name": "resource",
                    "inputs": {
                        "parameters": [
                            {"name": "manifest"},
                            {"name": "success"},
                            {"name": "failure"},
                        ]
                    },
                    "resource": {
                        "action": "create",
                        "setOwnerReference": True,
                        "manifest": "{{inputs.parameters.manifest}}",
                        "successCondition": "{{inputs.parameters.success}}",
                        "failureCondition": "{{inputs.parameters.failure}}",
                    },
                },
                {
                    "name": "literal",
                    "resource": {
                        "action": "create",
                        "manifest": json.dumps(tfjob("literal-job")),
                        "successCondition": "status.completionTime",
                        "failureCondition": "status.conditions.0.type in (Failed)",
                    },
                },
            ],
        },
    }


def tasks(document: dict[str, Any]) -> list[dict[str, Any]]:
    return document["spec"]["templates"][0]["dag"]["tasks"]


def template(document: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in document["spec"]["templates"] if t["name"] == name)


def assert_reports(document: dict[str, Any], *expected: str) -> list[str]:
    """Each expected text is part of some violation (a regex if it starts with '^')."""
    violations = validate(document)
    for text in expected:
        if text.startswith("^"):
            found = any(re.search(text, v) for v in violations)
        else:
            found = any(text in v for v in violations)
        assert found, f"{text!r} not among {violations}"
    return violations


# -- positive controls -------------------------------------------------------------------


def test_a_small_workflow_with_a_dag_and_a_resource_template_is_accepted():
    assert validate(workflow()) == []


@pytest.mark.parametrize("make", [tfjob, mpijob_v2, experiment], ids=lambda f: f.__name__)
def test_hand_written_jobs_are_accepted(make):
    assert validate(make()) == []


def test_a_workflow_creating_each_kind_is_accepted():
    for manifest in (tfjob(), mpijob_v2(), experiment()):
        assert validate(workflow(manifest)) == []


def test_core_objects_are_accepted():
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "sqlml-datasource",
            "labels": {"app.kubernetes.io/managed-by": "sqlml"},
        },
        "type": "Opaque",
        "data": {"url": "ZHVja2RiOi8vL3RtcC94"},
    }
    assert validate(secret) == []
    job = experiment()["spec"]["trialTemplate"]["trialSpec"]
    job = {**copy.deepcopy(job), "metadata": {"name": "a-job"}}
    job["spec"]["template"]["spec"]["containers"][0]["args"] = ["--eta=0.1"]
    assert validate(job) == []


# -- negative controls: schemas ----------------------------------------------------------


def test_an_unknown_field_at_the_top_level():
    document = workflow()
    document["bogus"] = 1
    assert "Workflow bogus: unknown field" in validate(document)


def test_an_unknown_field_deep_in_a_pod_template_container():
    job = tfjob()
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["imagePolicy"] = (
        "x"
    )
    assert validate(job) == [
        "TFJob spec.tfReplicaSpecs.Worker.template.spec.containers[0].imagePolicy: unknown field"
    ]


def test_an_unknown_field_in_an_argo_template():
    document = workflow()
    template(document, "sql")["retries"] = 3
    assert validate(document) == ["Workflow spec.templates[1].retries: unknown field"]


def test_an_unknown_field_in_an_experiment_and_in_its_trial_job():
    search = experiment()
    search["spec"]["maxTrials"] = 4
    trial = search["spec"]["trialTemplate"]["trialSpec"]
    trial["spec"]["template"]["spec"]["containers"][0]["bogus"] = True
    assert_reports(
        search,
        "Experiment spec.maxTrials: unknown field",
        "Experiment spec.trialTemplate.trialSpec: Job spec.template.spec.containers[0].bogus: "
        "unknown field",
    )


def test_an_int_or_string_given_as_a_list():
    job = tfjob()
    worker = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    worker["resources"]["limits"]["cpu"] = ["1"]
    assert validate(job) == [
        "TFJob spec.tfReplicaSpecs.Worker.template.spec.containers[0].resources.limits.cpu: "
        "must be an integer or a string, not array"
    ]


def test_a_wrong_type():
    document = workflow()
    document["spec"]["parallelism"] = "3"
    assert validate(document) == ["Workflow spec.parallelism: must be of type integer, not string"]
    document["spec"]["parallelism"] = True
    assert validate(document) == ["Workflow spec.parallelism: must be of type integer, not boolean"]
    document["spec"]["parallelism"] = 2.5
    assert validate(document) == ["Workflow spec.parallelism: must be of type integer, not number"]
    document["spec"]["parallelism"] = 2**70
    assert_reports(document, "Workflow spec.parallelism: must be an int64")


def _wide(count: int) -> dict[str, Any]:
    document = workflow()
    first = tasks(document)[0]
    tasks(document)[:] = [{**first, "name": f"t{i}-create"} for i in range(count)]
    return document


def test_201_tasks_in_one_dag():
    assert validate(_wide(200)) == []
    assert validate(_wide(201)) == [
        "Workflow spec.templates[0].dag.tasks: must have at most 200 items"
    ]


def test_201_templates():
    document = workflow()
    spare = template(document, "sql")
    document["spec"]["templates"] += [
        {**spare, "name": f"spare-{i}"} for i in range(201 - len(document["spec"]["templates"]))
    ]
    assert len(document["spec"]["templates"]) == 201
    assert validate(document) == ["Workflow spec.templates: must have at most 200 items"]


def test_a_missing_required_field():
    document = workflow()
    del tasks(document)[0]["name"]
    assert_reports(document, "Workflow spec.templates[0].dag.tasks[0].name: Required value")
    job = tfjob()
    del job["spec"]["tfReplicaSpecs"]
    assert_reports(job, "TFJob spec.tfReplicaSpecs: Required value")


def test_a_value_outside_an_enum_and_a_pattern():
    job = mpijob_v2()
    job["spec"]["mpiImplementation"] = "LAM"
    job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"memory": "2 Gi"}
    }
    assert_reports(
        job,
        'MPIJob spec.mpiImplementation: Unsupported value: "LAM"',
        "MPIJob spec.mpiReplicaSpecs.Worker.template.spec.containers[0].resources.limits.memory: "
        "must match the pattern",
    )


def test_duplicate_keys_of_a_list_map():
    job = tfjob()
    chief = job["spec"]["tfReplicaSpecs"]["Chief"]["template"]["spec"]
    chief["containers"].append(container("tensorflow"))
    assert_reports(
        job, "TFJob spec.tfReplicaSpecs.Chief.template.spec.containers[1]: Duplicate value"
    )


# -- negative controls: CEL rules of the full Argo CRD -----------------------------------


def test_cel_rules_of_the_argo_crd():
    document = workflow()
    tasks(document)[2]["depends"] = "s02-train"  # s03 also has dependencies
    template(document, "main")["timeout"] = "1h"
    template(document, "sql")["script"] = {"image": IMAGE, "source": "print(1)"}
    assert_reports(
        document,
        "Workflow spec.templates[0].dag.tasks[2]: cannot use both 'depends' and 'dependencies'",
        "Workflow spec.templates: timeout cannot be applied to steps or dag templates",
        "Workflow spec.templates: template must have at most one template type",
    )


def test_a_transition_rule_is_not_evaluated_on_create():
    job = tfjob()
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"queue": "ml"}
    assert validate(job) == []


def test_a_rule_with_no_evaluation_fails_loudly():
    schema = {
        "type": "object",
        "x-kubernetes-validations": [{"rule": "self.size() > 1", "message": "too small"}],
    }
    with pytest.raises(kv.SchemaError, match="no evaluation"):
        kv._Compiler(None, go_typed=False).compile(schema)
    with pytest.raises(kv.SchemaError, match="keywords"):
        kv._Compiler(None, go_typed=False).compile({"type": "string", "x-new-keyword": 1})


# -- negative controls: Argo's own validation --------------------------------------------


def test_a_task_depending_on_an_unknown_task():
    document = workflow()
    tasks(document)[1]["dependencies"] = ["s00-nope"]
    assert_reports(
        document,
        "Workflow spec.templates[0].dag.tasks[1].dependencies: templates.main.tasks.s02-train "
        "dependency 's00-nope' not defined",
    )


def test_a_dependency_cycle():
    document = workflow()
    tasks(document)[0]["dependencies"] = ["s03-check"]
    assert_reports(
        document,
        "Workflow spec.templates[0].dag.tasks: templates.main.tasks dependency cycle detected",
    )


def test_an_undeclared_input_parameter():
    document = workflow()
    template(document, "sql")["container"]["args"].append("{{inputs.parameters.nope}}")
    assert validate(document) == [
        "Workflow spec.templates[1]: templates.sql: failed to resolve {{inputs.parameters.nope}}"
    ]


def test_unknown_variables_and_an_unclosed_tag():
    document = workflow()
    template(document, "sql")["container"]["args"] += ["{{workflow.nope}}", "{{tasks.x.id}}"]
    # as in Argo, the tag runs to the next }} of the task's JSON
    tasks(document)[0]["arguments"]["parameters"][0]["value"] = "{{steps.a.outputs.result"
    assert_reports(
        document,
        "Workflow spec.templates[1]: templates.sql: failed to resolve {{workflow.nope}}",
        "Workflow spec.templates[1]: templates.sql: failed to resolve {{tasks.x.id}}",
        "Workflow spec.templates[0].dag.tasks[0]: templates.main.tasks.s01-create failed to "
        "resolve {{steps.a.outputs.result",
    )
    assert kv.argo_tags("{{a}} {{b.c }}") == ["a", "b.c "]
    with pytest.raises(ValueError, match="cannot find end tag"):
        kv.argo_tags("{{a}} {{b")


def test_a_task_output_of_a_task_that_is_no_ancestor():
    document = workflow()
    del tasks(document)[1]["dependencies"]
    tasks(document)[2]["dependencies"] = ["s02-train"]
    assert validate(document) == [
        "Workflow spec.templates[0].dag.tasks[2].arguments.parameters[0]: missing dependency "
        "'s01-create' for parameter 'ir'"
    ]


def test_a_task_that_omits_a_required_argument():
    document = workflow()
    del tasks(document)[0]["arguments"]
    assert validate(document) == [
        "Workflow spec.templates[0].dag.tasks[0].arguments: inputs.parameters.ir was not "
        "supplied: template 'sql' needs it (no value, default or valueFrom) and "
        "spec.templates[0].dag.tasks[0] does not give it"
    ]


def test_an_undefined_template_and_entrypoint():
    document = workflow()
    tasks(document)[0]["template"] = "nope"
    document["spec"]["entrypoint"] = "start"
    assert_reports(
        document,
        "Workflow spec.templates[0].dag.tasks[0].template: template name 'nope' undefined",
        "Workflow spec.entrypoint: template name 'start' undefined",
    )


def test_invalid_template_and_task_names():
    document = workflow()
    template(document, "literal")["name"] = "Bad_Name"
    assert validate(document) == [
        "Workflow spec.templates[3].name: must match the pattern '^[a-zA-Z0-9][-a-zA-Z0-9]*$': "
        "'Bad_Name'",
        "Workflow spec.templates[3].name: Invalid template name 'Bad_Name': name must consist of "
        "alpha-numeric characters or '-', and must start with an alpha-numeric character (e.g. "
        "My-name1-2, 123-NAME)",
    ]
    document = workflow()
    tasks(document)[0]["name"] = "s01_create"
    assert_reports(
        document,
        "Workflow spec.templates[0].dag.tasks[0].name: Invalid task name 's01_create'",
        "dependency 's01-create' not defined",
    )
    document = workflow()
    template(document, "sql")["name"] = "x" * 129
    tasks(document)[0]["template"] = tasks(document)[2]["template"] = "x" * 129
    assert_reports(document, "spec.templates[1].name: must be no more than 128 characters")


def test_a_digit_leading_task_name_with_dependencies():
    document = workflow()
    tasks(document)[1]["name"] = "2-train"
    tasks(document)[2]["dependencies"] = ["2-train", "s01-create"]
    assert_reports(
        document,
        "Workflow spec.templates[0].dag.tasks[1]: task name cannot begin with a digit",
        "Workflow spec.templates[0].dag.tasks[1].name: templates.main.tasks.2-train name cannot "
        "begin with a digit",
    )


def test_resource_conditions_must_parse_as_label_selectors():
    document = workflow()
    tasks(document)[1]["arguments"]["parameters"][1]["value"] = "status.conditions.#(type==Failed)"
    assert_reports(
        document,
        "Workflow spec.templates[0].dag.tasks[1].arguments.parameters[1].value: successCondition "
        "'status.conditions.#(type==Failed)' failed to parse",
    )
    document = workflow()
    tasks(document)[1]["arguments"]["parameters"][2]["value"] = "status.conditions.#(type==Failed)"
    assert validate(document) == [
        "Workflow spec.templates[0].dag.tasks[1].arguments.parameters[2].value: failureCondition "
        "'status.conditions.#(type==Failed)' failed to parse: unable to parse requirement: key "
        "'status.conditions.#': name part must consist of alphanumeric characters, '-', '_' or "
        "'.', and must start and end with an alphanumeric character"
    ]
    document = workflow()
    template(document, "literal")["resource"]["successCondition"] = "status.phase === Done"
    assert_reports(
        document, "Workflow spec.templates[3].resource.successCondition: successCondition"
    )


@pytest.mark.parametrize(
    ("selector", "valid"),
    [
        ("status.completionTime", True),
        ("status.succeeded > 0", True),
        ("status.phase in (Succeeded, Failed), !status.error", True),
        ("x notin (), y = ", True),
        (FAILED, True),
        ("", True),
        ("status.conditions.#(type==Failed)", False),
        ("status.phase === Done", False),
        ("status.succeeded > one", False),
        ("a in b", False),
        ("a, ", False),
        ("status.phase == " + "x" * 64, False),
        ("-a", False),
    ],
)
def test_label_selectors(selector, valid):
    assert (kv.label_selector_errors(selector) == []) == valid


def test_an_embedded_manifest_with_an_unknown_field():
    job = tfjob()
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelectors"] = {"a": "b"}
    assert validate(workflow(job)) == [
        "Workflow spec.templates[0].dag.tasks[1].arguments.parameters[0].value: TFJob "
        "spec.tfReplicaSpecs.Worker.template.spec.nodeSelectors: unknown field"
    ]
    document = workflow()
    literal = json.loads(template(document, "literal")["resource"]["manifest"])
    literal["spec"]["bogus"] = 1
    template(document, "literal")["resource"]["manifest"] = json.dumps(literal)
    assert validate(document) == [
        "Workflow spec.templates[3].resource.manifest: TFJob spec.bogus: unknown field"
    ]


def test_an_unknown_api_version():
    assert validate({"apiVersion": "example.com/v1", "kind": "Thing"}) == [
        "no schema for example.com/v1 Thing"
    ]
    assert validate(workflow({"apiVersion": "kubeflow.org/v1", "kind": "JAXJob"})) == [
        "Workflow spec.templates[0].dag.tasks[1].arguments.parameters[0].value: "
        "no schema for kubeflow.org/v1 JAXJob"
    ]


# -- negative controls: names of the controllers and webhooks ----------------------------


def test_a_digit_leading_tfjob_name():
    assert_reports(
        tfjob("1-train"), "TFJob metadata.name: Invalid name '1-train': a DNS-1035 label"
    )


def test_a_tfjob_name_whose_services_are_too_long():
    name = "t" * 55
    assert validate(tfjob("t" * 54)) == []
    assert validate(tfjob(name)) == [
        f"TFJob metadata: TFJob name '{name}' gives the Worker pods and Services names such as "
        f"'{name}-worker-0' that are not valid DNS-1035 labels: must be no more than 63 "
        "characters (is 64)"
    ]


def test_a_generated_name_is_checked_at_its_longest():
    job = tfjob()
    job["metadata"] = {"generateName": "t" * 60 + "-"}
    assert_reports(
        job,
        "TFJob metadata: TFJob name '" + "t" * 58 + "xxxxx' gives the Worker pods",
    )


def test_experiment_names():
    assert validate(experiment("e" * 40)) == []
    assert_reports(
        experiment("e" * 41),
        "Experiment metadata.name: Invalid name '" + "e" * 41 + "'",
        "may not be longer than 40 characters (is 41)",
    )
    assert_reports(experiment("1search"), "Experiment metadata.name: Invalid name '1search'")


def test_mpijob_v2beta1_rules():
    job = mpijob_v2()
    job["metadata"] = {"name": "m" * 55}
    job["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "ExitCode"
    assert_reports(
        job,
        "MPIJob metadata.name: will not be able to create pod and service with invalid DNS label "
        "'" + "m" * 55 + "-worker-3'",
        "MPIJob spec.mpiReplicaSpecs.Worker.restartPolicy: Unsupported value: 'ExitCode'",
    )


def test_training_webhook_rules():
    job = tfjob()
    job["spec"]["tfReplicaSpecs"]["Master"] = copy.deepcopy(job["spec"]["tfReplicaSpecs"]["Chief"])
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] = "tf"
    assert_reports(
        job,
        "TFJob spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role",
        "TFJob spec.tfReplicaSpecs.Worker.template.spec.containers: Required value: must have at "
        "least one container with name tensorflow",
    )


def test_experiment_webhook_rules():
    search = experiment()
    search["spec"]["parallelTrialCount"] = 5
    trial = search["spec"]["trialTemplate"]
    trial["trialSpec"]["metadata"] = {"name": "trial"}
    assert validate(search) == [
        "Experiment spec.parallelTrialCount: 5 should be less than or equal to spec.maxTrialCount",
        "Experiment spec.trialTemplate.trialSpec: metadata.name and metadata.namespace in "
        "spec.trialTemplate must be omitted",
    ]
    search = experiment()
    search["spec"]["trialTemplate"]["trialParameters"].append({"name": "lr", "reference": "lr"})
    assert validate(search) == [
        "Experiment spec.trialTemplate.trialParameters[2].reference: parameter reference lr does "
        "not exist in spec.parameters",
        "Experiment spec.trialTemplate.trialParameters[2].name: parameter name: lr in "
        "spec.trialParameters not found in spec.trialTemplate",
    ]
    search = experiment()
    del search["spec"]["parallelTrialCount"]
    search["spec"]["maxTrialCount"] = 2
    assert validate(search) == [
        "Experiment spec.parallelTrialCount: 3 (the default) should be less than or equal to "
        "spec.maxTrialCount"
    ]
    search = experiment()
    search["spec"]["trialTemplate"]["primaryContainerName"] = "main"
    assert validate(search) == [
        "Experiment spec.trialTemplate.primaryContainerName: 'main' is not a container of the "
        "trial's pods (training-container)"
    ]


def test_a_batch_job_must_not_restart_its_pods_in_place():
    job = copy.deepcopy(experiment()["spec"]["trialTemplate"]["trialSpec"])
    job["metadata"] = {"name": "j"}
    del job["spec"]["template"]["spec"]["restartPolicy"]
    job["spec"]["template"]["spec"]["containers"][0]["args"] = []
    assert validate(job) == [
        "Job spec.template.spec.restartPolicy: Unsupported value: 'Always': supported values: "
        "'OnFailure', 'Never'"
    ]


def test_pod_rules_no_schema_says():
    job = tfjob()
    spec = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    tensorflow = spec["containers"][0]
    tensorflow["resources"] = {"requests": {"memory": "4Gi"}, "limits": {"memory": "2Gi"}}
    tensorflow["env"].append({"name": "1ST", "value": "x"})
    tensorflow["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    spec["serviceAccountName"] = "Runner"
    assert_reports(
        job,
        "resources.requests.memory: must be less than or equal to memory limit of 2Gi",
        "env[1].name: Invalid environment variable name '1ST'",
        "volumeMounts[0].name: Not found: 'data'",
        "spec.serviceAccountName: Invalid value 'Runner'",
    )


def test_labels_must_be_valid():
    job = tfjob()
    job["metadata"]["labels"] = {"bad key!": "x", "ok": "not valid!"}
    assert_reports(
        job,
        'TFJob metadata.labels["bad key!"]: Invalid label key',
        "TFJob metadata.labels.ok: Invalid label value 'not valid!'",
    )


# -- CEL rules ---------------------------------------------------------------------------


def test_every_cel_rule_of_the_vendored_schemas_has_an_evaluation():
    rules = list(kv.schema_cel_rules())
    texts = {rule["rule"] for _, _, rule in rules}
    assert len(rules) == 42  # 38 in the Argo CRD, 1 in each training operator CRD
    assert len(texts) == 11
    assert texts == set(kv.CEL_RULES)
    for relative in kv.CRD_FILES:
        for entry in kv.crd_document(relative)["spec"]["versions"]:
            kv.crd_schema(relative, entry["name"])  # compiles: no rule without an evaluation


_FIELD = re.compile(r"\b(?:self|t)\.([A-Za-z]+)")
_SAMPLES = {
    "realtime": [True, False],
    "value": ["resourcesDuration.cpu", "x"],
    "timeout": ["", "10s"],
    "name": ["1-task", "task-1"],
    "count": ["3", 2],
    "end": ["4"],
    "depends": ["a && b"],
    "dependencies": [["a"], []],
    "continueOn": [{"failed": True}],
    "manifest": ["{}"],
    "manifestFrom": [{"artifact": {"name": "m"}}],
    "activeDeadlineSeconds": [10, "{{x}}"],
}


def _samples(rule: str, rng: random.Random, count: int) -> list[Any]:
    fields = sorted(set(_FIELD.findall(rule)))

    def one() -> dict[str, Any]:
        sample = {}
        for field in fields:
            choice = rng.random()
            if choice < 0.45:
                continue
            if choice < 0.5:
                sample[field] = None  # pruned by the API server: absent
            else:
                sample[field] = rng.choice(_SAMPLES.get(field, [{"key": "k"}, {}]))
        return sample

    if rule.startswith("self.all("):
        return [[one() for _ in range(rng.randrange(4))] for _ in range(count)]
    return [one() for _ in range(count)]


@pytest.mark.parametrize("rule", [r for r, f in kv.CEL_RULES.items() if f is not kv._TRANSITION])
def test_each_cel_translation_agrees_with_cel_python(rule):
    pytest.importorskip("celpy")
    rng = random.Random(rule)
    exhaustive = []
    fields = sorted(set(_FIELD.findall(rule)))
    if len(fields) <= 4 and not rule.startswith("self.all("):
        for present in itertools.product([False, True], repeat=len(fields)):
            exhaustive.append(
                {f: _SAMPLES.get(f, [{}])[0] for f, p in zip(fields, present, strict=True) if p}
            )
    for value in exhaustive + _samples(rule, rng, 30):
        assert kv.cel_evaluate(rule, value) == kv.celpy_evaluate(rule, value), value


def test_cel_rules_cross_checked_with_cel_python_on_a_workflow(monkeypatch):
    pytest.importorskip("celpy")
    monkeypatch.setattr(kv, "CEL_CROSSCHECK", True)
    document = workflow()
    tasks(document)[2]["depends"] = "s02-train"
    template(document, "main")["timeout"] = "1h"
    assert_reports(document, "cannot use both 'depends' and 'dependencies'")
    assert validate(workflow()) == []


# -- scale -------------------------------------------------------------------------------


def test_a_thousand_tasks_with_their_manifests_validate_quickly():
    document = workflow()
    sql, resource = tasks(document)[0], tasks(document)[1]
    parts = []
    for part in range(5):
        part_tasks = []
        for i in range(200):
            task = copy.deepcopy(resource if i % 2 else sql)
            task["name"] = f"s{part}-{i}"
            task.pop("dependencies", None)
            if i % 2:
                job = tfjob(f"p-s{part}-{i}")
                task["arguments"]["parameters"][0]["value"] = json.dumps(job)
                task["dependencies"] = [f"s{part}-{i - 1}"]
            part_tasks.append(task)
        parts.append({"name": f"part-{part}", "dag": {"tasks": part_tasks}})
    template(document, "main")["dag"]["tasks"] = [
        {"name": p["name"], "template": p["name"]} for p in parts
    ]
    document["spec"]["templates"] += parts
    validate(workflow())  # the schemas are compiled once, before the clock starts
    start = time.process_time()  # this process's: other processes' load left out
    assert validate(document) == []
    assert time.process_time() - start < 5
