"""Steps of a hyperparameter search (a TO TRAIN with candidate values).

Locally: a map over the planned trials (each a ``trial`` statement step) and a fan-in step
(``search``) that keeps the best trial as the model and writes the trials table. On
Kubernetes: a Katib Experiment whose trials run the same ``trial`` statement in a batch Job,
then the same fan-in step.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence

from sqlml import ir
from sqlml.errors import KubernetesError
from sqlml.search_space import as_text, plan
from sqlml.steps import katib
from sqlml.steps.kubeflow import Replica, pod_template, to_plain, training_models
from sqlml.steps.naming import GENERATED_SUFFIX, MAX_EXPERIMENT_NAME, dns_label
from sqlml.workflow.core import Step, Workflow, names

TRIAL_CONTAINER = "training-container"


def hyperparameter_search(
    workflow: Workflow, statement: ir.SearchStatement, after: Sequence[Step] = ()
) -> Step:
    """Add the search's trials, run in parallel as a map, and the step that keeps the best.

    Args:
        workflow: the workflow the steps are added to.
        statement: the search's IR.
        after: steps that must finish first.

    Returns:
        The last step, named as the statement: the one later statements wait for.
    """
    placeholders = {name: f"{{{{item.{name}}}}}" for name in ["trial", *statement.space]}
    trials = workflow.map(
        Step(
            f"{statement.id}-trials",
            ir.TrialStatement.kind,
            _trial(statement, placeholders),
            names(after),
        ),
        trial_items(statement),
    )
    return workflow.add(_finish(statement, trials))


def trial_items(statement: ir.SearchStatement) -> list[dict[str, str]]:
    """Each trial's number and values, as text: the items the trials are mapped over."""
    settings = statement.search
    planned = plan(statement.space, settings["algorithm"], settings["trials"], settings["seed"])
    return [
        {"trial": str(number), **{name: as_text(value) for name, value in values.items()}}
        for number, values in enumerate(planned)
    ]


def katib_search(
    workflow: Workflow,
    statement: ir.SearchStatement,
    name: str,
    replica: Replica,
    namespace: str | None = None,
    after: Sequence[Step] = (),
) -> Step:
    """Add a Katib Experiment running the search's trials, then the step keeping the best.

    Each trial is a batch Job whose container runs ``replica.command`` with the trial's
    statement (in base64: Katib's metrics collector runs the command through ``sh -c``) as
    its argument and the trial's values in ``$SQLML_TRIAL``; Katib reads its ``name=value``
    metric lines.

    Args:
        workflow: the workflow the steps are added to.
        statement: the search's IR; its ``search.metric`` must be known.
        name: the text the Experiment's name is made from (Kubernetes completes it, so runs
            of one program coexist).
        replica: image, command, Secret environment and resources of the trial pods.
        namespace: the Experiment's namespace.
        after: steps that must finish first.
    """
    settings = statement.search
    if settings["metric"] is None:
        raise KubernetesError(
            f"the search for {statement.model} ranks trials by a metric the data decides",
            hint="set search.metric (and an objective) so that Katib knows what to optimise",
        )
    keys = {attribute: re.sub(r"\W", "_", attribute) for attribute in statement.space}
    placeholders = {"trial": "${trialParameters.trialName}"}
    placeholders |= {attribute: f"${{trialParameters.{key}}}" for attribute, key in keys.items()}
    trial = dataclasses.replace(
        replica,
        args=(ir.to_argument(_trial(statement, {})),),
        env={**replica.env, ir.TRIAL_ENV: json.dumps(placeholders, separators=(",", ":"))},
        restart_policy="Never",
    )
    prefix = dns_label(name, MAX_EXPERIMENT_NAME - GENERATED_SUFFIX - 1)
    experiment = katib.run(
        prefix,
        trial_spec=_job(trial),
        parameters=[
            _parameter(keys[a], a, entry, settings["algorithm"])
            for a, entry in statement.space.items()
        ],
        trial_parameters={"trialName": "${trialSpec.Name}"} | {key: key for key in keys.values()},
        objective_metric=f"validation_{settings['metric']}",
        goal=settings["goal"],
        algorithm=settings["algorithm"],
        algorithm_settings={"random_state": settings["seed"]}
        if settings["algorithm"] == "random"
        else None,
        early_stopping=settings.get("early_stopping", {}).get("algorithm"),
        early_stopping_settings=settings.get("early_stopping", {}).get("settings"),
        parallel_trial_count=settings["parallel"],
        max_trial_count=settings["trials"],
        max_failed_trial_count=settings["trials"],
        primary_container_name=TRIAL_CONTAINER,
        namespace=namespace,
        after=after,
    )
    # Many runs of one workflow coexist: the Experiment's name is a prefix Kubernetes completes.
    manifest = experiment.params["manifest"]
    metadata = {**manifest["metadata"], "generateName": f"{prefix}-"}
    del metadata["name"]
    params = {**experiment.params, "manifest": {**manifest, "metadata": metadata}}
    added = workflow.add(
        dataclasses.replace(experiment, name=f"{statement.id}-trials", params=params)
    )
    return workflow.add(_finish(statement, added))


def _trial(statement: ir.SearchStatement, values: dict[str, str]) -> dict:
    """The trial statement's IR, its key and values given by ``values``' placeholders."""
    fields = {field.name: getattr(statement, field.name) for field in dataclasses.fields(statement)}
    fields["id"] = f"{statement.id}-trial"
    return ir.TrialStatement(**fields, trial=values).to_dict()


def _finish(statement: ir.SearchStatement, trials: Step) -> Step:
    return Step(statement.id, statement.kind, statement.to_dict(), (trials.name,))


def _parameter(key: str, attribute: str, entry: dict, algorithm: str) -> katib.Parameter:
    """A searched attribute as Katib's: CHOICE as categorical (its values' text forms, each
    ``$`` doubled: the kubelet turns ``$$`` back into ``$`` in the trial's environment)."""
    kind = entry["kind"]
    if kind == "choice":
        texts = [as_text(value) for value in entry["values"]]
        unsafe = [text for text in texts if re.search(r'["\\\x00-\x1f]', text)]
        if unsafe:
            raise KubernetesError(
                f"candidate {unsafe[0]!r} of {attribute} has quotes, backslashes or control "
                "characters, which Katib cannot pass to a trial",
                hint="search plain candidates",
            )
        return katib.Parameter(key, "categorical", values=[t.replace("$", "$$") for t in texts])
    if kind == "int_range":
        step = 1 if algorithm == "grid" else None
        return katib.Parameter(key, "int", min=entry["low"], max=entry["high"], step=step)
    distribution = "logUniform" if kind == "log_uniform" else "uniform"
    return katib.Parameter(
        key, "double", min=entry["low"], max=entry["high"], distribution=distribution
    )


def _job(replica: Replica) -> dict:
    """A batch Job running one pod of ``replica``, never restarted (Katib retries trials)."""
    m = training_models()
    template = pod_template(m, replica, TRIAL_CONTAINER)
    template.spec.restart_policy = replica.restart_policy
    job = m.V1Job(
        api_version="batch/v1",
        kind="Job",
        spec=m.V1JobSpec(backoff_limit=0, template=template),
    )
    return to_plain(job)
