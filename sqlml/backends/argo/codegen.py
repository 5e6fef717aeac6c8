"""Emit a program as an Argo Workflow, built with hera's typed Argo models.

One template per kind of step, not per statement: every statement step is a DAG task that
passes the statement's IR, as JSON, to its kind's container template, which runs
``python -m sqlml.runtime.step`` (each ``$`` doubled: the kubelet expands ``$(VAR)`` and
turns ``$$`` into ``$`` in container arguments). Argo v4 accepts at most 200 tasks in a DAG
and 200 templates: a larger program's statements are split into nested DAG templates
(``part-N``) of at most 200 tasks, statements that do not depend on each other kept in
parallel parts. A TO TRAIN with ``train.distributed`` (or worker counts)
becomes a TFJob (Keras) or XGBoostJob (XGBoost) named after the Workflow's uid and applied
by the ``resource-apply`` template, so that a retried step adopts the job it created.
A TO TRAIN with candidates (a hyperparameter search) becomes a Katib Experiment, created by
the same template, then a ``search`` step that keeps the best trial.
Tasks depend on each other as the program's dependency analysis says. The datasource URL
reaches every pod from a Kubernetes Secret, never from the workflow.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

import sqlml
from sqlml import ir, steps
from sqlml.backends.argo import pods
from sqlml.codegen.workflow import add_step, build
from sqlml.datasources.url import DEFAULT_DIALECT
from sqlml.errors import KubernetesError
from sqlml.plan import PlannedStatement, plan
from sqlml.runtime.context import RUN_ENV
from sqlml.steps import kubeflow
from sqlml.steps.naming import GENERATED_SUFFIX, MAX_NAME, dns_label, job_name_limit
from sqlml.workflow.core import RESOURCE, Step, Workflow

STEP_COMMAND = ("python", "-m", "sqlml.runtime.step")
DATASOURCE_ENV = "SQLML_DATASOURCE"
# The run a statement step's pod is part of (lineage), which Argo fills in. Not given to the
# pods of training jobs and Katib's trials: their manifests are passed on unexpanded.
WORKFLOW_NAME = "{{workflow.name}}"
DEFAULT_WORKERS = 2  # worker pods of a distributed TO TRAIN that gives no count
DEFAULT_JOB_DEADLINE = 24 * 3600  # seconds a distributed TO TRAIN may run
# Retries of a step whose pod was deleted (a node drained, a preemption): Argo's "pod
# deleted" is an Error, which only the retry policies OnError and Always retry (v4.1.2).
ERROR_RETRIES = 3
# Distributed TO TRAINs are resource steps of their own template: Argo applies (``kubectl
# apply``) the job, named ``<statement>-<workflow uid>``, so that a retry adopts the job its
# first attempt created instead of creating a second one.
JOB_RESOURCE = "resource_apply"
WORKFLOW_UID = "{{workflow.uid}}"
_UID_SLOT = "sqlml-workflow-uid-placeholder-00000"  # a uid's 36 characters while building
MAX_DAG_TASKS = 200  # Argo v4's CRD: at most 200 tasks in a DAG, 200 templates
# A Workflow's name is the `workflows.argoproj.io/workflow` label of its pods: a label value
# of at most 63 characters, 5 of them generated.
MAX_WORKFLOW_PREFIX = MAX_NAME - GENERATED_SUFFIX - 1


@dataclass(frozen=True)
class ArgoOptions:
    """Where and how the workflow's pods run.

    Args:
        image: the step image (see the Dockerfile), named in full: an unqualified name is
            resolved by each container runtime's own registries configuration.
        namespace: the workflow's namespace (default: the one it is submitted to).
        service_account: the service account of the workflow's pods.
        secret: the Secret holding the datasource URL.
        secret_key: the key of the URL in that Secret.
        requests: resource requests of every step container, job and trial pod (a TO
            statement's ``<kind>.cpu``/``<kind>.memory`` change its own).
        limits: resource limits of the same (``<kind>.cpu_limit``/``<kind>.memory_limit``).
        run_as_user: the non-root user id every container runs as.
        retries: retries of a failed step (with exponential backoff, any failure); 0: only
            a step whose pod was deleted is retried, up to :data:`ERROR_RETRIES` times.
        image_pull_policy: ``Always``, ``IfNotPresent`` or ``Never`` (default: the cluster's).
        job_run_policy: the RunPolicy of distributed training jobs (default: a backoff
            limit of 3 and a deadline of 24 hours).
        parallelism: steps running at once (default: the dialect's, :func:`pods.parallelism`).
        pod_gc: when Argo deletes step pods (one of :data:`pods.POD_GC_STRATEGIES`, None:
            never); a succeeded pod :data:`pods.POD_GC_DELAY` after it ends.
        ttl_seconds: seconds a finished Workflow stays (with its pods and the objects it owns).
        deadline_seconds: seconds a run may take before Argo fails it.
    """

    image: str = f"docker.io/library/sqlml:{sqlml.__version__}"
    namespace: str | None = None
    service_account: str | None = None
    secret: str = "sqlml-datasource"
    secret_key: str = "url"
    requests: Mapping[str, str] = field(default_factory=lambda: dict(pods.DEFAULT_REQUESTS))
    limits: Mapping[str, str] = field(default_factory=lambda: dict(pods.DEFAULT_LIMITS))
    run_as_user: int = 1000
    retries: int = 0
    image_pull_policy: str | None = None
    job_run_policy: kubeflow.RunPolicy = field(
        default_factory=lambda: kubeflow.RunPolicy(active_deadline_seconds=DEFAULT_JOB_DEADLINE)
    )
    parallelism: int | None = None
    pod_gc: str | None = pods.DEFAULT_POD_GC
    ttl_seconds: int | None = pods.DEFAULT_TTL
    deadline_seconds: int | None = pods.DEFAULT_RUN_DEADLINE


def to_argo_yaml(
    statements: Sequence[ir.Statement],
    name: str,
    options: ArgoOptions | None = None,
    dialect: str = DEFAULT_DIALECT,
) -> str:
    """The Argo Workflow of ``statements`` as YAML."""
    document = to_argo(statements, name, options, dialect).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(document, Dumper=dumper, sort_keys=False, width=1 << 20)


def to_argo(
    statements: Sequence[ir.Statement],
    name: str,
    options: ArgoOptions | None = None,
    dialect: str = DEFAULT_DIALECT,
) -> Any:
    """The Argo Workflow of ``statements`` (a hera ``Workflow`` model)."""
    options = options or ArgoOptions()
    if options.parallelism is None:
        options = replace(options, parallelism=pods.parallelism(dialect))
    return render(program_workflow(statements, name, options, dialect), options)


def program_workflow(
    statements: Sequence[ir.Statement], name: str, options: ArgoOptions, dialect: str
) -> Workflow:
    """One step per statement of the program's plan, each after the statements it waits for."""

    images: dict[str, str] = {}  # model -> the model zoo image its TO TRAIN named

    def add(workflow: Workflow, planned: PlannedStatement, after: list[Step]) -> Step:
        planned = _zoo_image(planned, images)
        statement = planned.statement
        if isinstance(statement, ir.SearchStatement):  # a Katib Experiment, then the best kept
            replica = _replica(_statement_options(statement, options), ())
            return steps.katib_search(
                workflow, statement, f"{workflow.name}-{statement.id}", replica,
                options.namespace, after,
            )  # fmt: skip
        if _distributed(statement):
            return workflow.add(_training_job(statement, options, after))
        return add_step(workflow, planned, after)

    return build(plan(statements, dialect), dns_label(name, MAX_WORKFLOW_PREFIX), add)


def _zoo_image(planned: PlannedStatement, images: dict[str, str]) -> PlannedStatement:
    """``planned``, a TO PREDICT of a model trained from a model zoo image earlier in the
    program given that image (its step runs in it, as SQLFlow's does); ``images`` follows
    the models trained."""
    statement = planned.statement
    if isinstance(statement, ir.TrainStatement):
        image = statement.image or statement.base_image
        if image:
            images[statement.model] = image
        else:
            images.pop(statement.model, None)
    elif isinstance(statement, ir.PredictStatement) and statement.model in images:
        return replace(planned, statement=replace(statement, image=images[statement.model]))
    return planned


def render(workflow: Workflow, options: ArgoOptions) -> Any:
    """A workflow of statement and resource steps as a hera ``Workflow`` model."""
    try:
        from hera.workflows import models as m
    except ImportError:
        raise KubernetesError(
            "emitting Argo Workflows needs hera's Argo models, which are not installed",
            hint="install them with: pip install 'sqlml[kubernetes]'",
        ) from None

    if options.run_as_user == 0:
        raise KubernetesError(
            "workflow pods run as a non-root user; --run-as-user is 0 (root)",
            hint="give the image's non-root user id, e.g. 1000",
        )
    kinds = sorted(
        {(step.template, _image(step) or "", _own(step, options)) for step in workflow.steps}
    )
    templates = [
        *_dags(m, workflow.steps, options),
        *(_template(m, kind, options, image or None, own) for kind, image, own in kinds),
    ]
    if len(templates) > MAX_DAG_TASKS:
        raise KubernetesError(
            f"the program needs {len(templates)} Argo templates; Argo accepts {MAX_DAG_TASKS}",
            hint="split the program into several files, run one after the other",
        )
    return m.Workflow(
        api_version="argoproj.io/v1alpha1",
        kind="Workflow",
        metadata=m.ObjectMeta(generate_name=f"{workflow.name}-", namespace=options.namespace),
        spec=m.WorkflowSpec(
            entrypoint="main",
            service_account_name=options.service_account,
            security_context=m.PodSecurityContext(
                run_as_non_root=True,
                run_as_user=options.run_as_user,
                run_as_group=options.run_as_user,
                seccomp_profile=m.SeccompProfile(type="RuntimeDefault"),
            ),
            templates=templates,
            **_lifetime(m, options),
        ),
    )


def _lifetime(m: Any, options: ArgoOptions) -> dict[str, Any]:
    """The Workflow's steps at once, pod garbage collection, time to live and deadline, and
    its service-account token: mounted only in Argo's executor containers (a step's
    ``wait``, a resource step's ``main``, which create, read and report through the API
    server: Argo v4.1.2 ``workflowpod.go``, ``setupServiceAccount``), never in a container
    running sqlml, which needs none."""
    pod_gc = options.pod_gc
    return {
        "parallelism": options.parallelism,
        "pod_gc": None
        if pod_gc is None
        else m.PodGC(strategy=pod_gc, delete_delay_duration=pods.POD_GC_DELAY),
        "ttl_strategy": None
        if options.ttl_seconds is None
        else m.TTLStrategy(seconds_after_completion=options.ttl_seconds),
        "active_deadline_seconds": options.deadline_seconds,
        "automount_service_account_token": False,
        "executor": m.ExecutorConfig(service_account_name=options.service_account or "default"),
    }


def _dags(m: Any, workflow_steps: Sequence[Step], options: ArgoOptions) -> list[Any]:
    """The ``main`` DAG of the steps or, beyond :data:`MAX_DAG_TASKS`, of ``part-N`` DAGs,
    each after the parts holding its steps' prerequisites."""
    if len(workflow_steps) <= MAX_DAG_TASKS:
        return [_dag(m, "main", [_task(m, step, step.after, options) for step in workflow_steps])]
    parts = _parts(workflow_steps)
    part_of = {step.name: index for index, part in enumerate(parts) for step in part}
    names = [f"part-{index + 1}" for index in range(len(parts))]
    main = []
    templates = []
    for index, part in enumerate(parts):
        inside = {step.name for step in part}
        before = sorted({part_of[name] for step in part for name in step.after} - {index})
        main.append(
            m.DAGTask(
                name=names[index],
                template=names[index],
                dependencies=[names[other] for other in before] or None,
            )
        )
        tasks = [_task(m, step, [n for n in step.after if n in inside], options) for step in part]
        templates.append(_dag(m, names[index], tasks))
    return [_dag(m, "main", main), *templates]


def _parts(workflow_steps: Sequence[Step]) -> list[list[Step]]:
    """The steps in parts of at most :data:`MAX_DAG_TASKS`: steps connected by dependencies
    kept together where they fit, so that parts that do not depend on each other run in
    parallel; a larger group cut in program order (dependencies only point back)."""
    group = {step.name: step.name for step in workflow_steps}

    def root(name: str) -> str:
        while group[name] != name:
            group[name] = group[group[name]]
            name = group[name]
        return name

    for step in workflow_steps:
        for name in step.after:
            group[root(name)] = root(step.name)
    groups: dict[str, list[Step]] = {}
    for step in workflow_steps:
        groups.setdefault(root(step.name), []).append(step)
    pieces = [
        members[start : start + MAX_DAG_TASKS]
        for members in groups.values()
        for start in range(0, len(members), MAX_DAG_TASKS)
    ]
    parts: list[list[Step]] = []
    for piece in pieces:
        if parts and len(parts[-1]) + len(piece) <= MAX_DAG_TASKS:
            parts[-1].extend(piece)
        else:
            parts.append(list(piece))
    return parts


def _dag(m: Any, name: str, tasks: list[Any]) -> Any:
    return m.Template(name=name, dag=m.DAGTemplate(tasks=tasks))


def _task(m: Any, step: Step, after: Sequence[str], options: ArgoOptions) -> Any:
    return m.DAGTask(
        name=step.name,
        template=_template_name(step.template, _image(step), _own(step, options)),
        dependencies=list(after) or None,
        arguments=m.Arguments(
            parameters=[
                m.Parameter(name=key, value=value) for key, value in _arguments(step).items()
            ]
        ),
    )


def _arguments(step: Step) -> dict[str, str]:
    if step.template in (RESOURCE, JOB_RESOURCE):
        return {
            "manifest": literal_json(step.params["manifest"]).replace(_UID_SLOT, WORKFLOW_UID),
            "success-condition": step.params["success_condition"],
            "failure-condition": step.params["failure_condition"],
        }
    return {"ir": literal_json(step.params).replace("$", "$$")}


def _template(
    m: Any, kind: str, options: ArgoOptions, image: str | None = None, own: str = ""
) -> Any:
    """The template of a kind's steps, in the step image or, for the statements naming a
    model zoo image, in that image; ``own``: the requests and limits of statements that
    set their own (:func:`_own`)."""
    if own:
        requests, limits = json.loads(own)
        options = replace(options, requests=requests, limits=limits)
    retry = _retry(m, options, kind)
    if kind in (RESOURCE, JOB_RESOURCE):
        return m.Template(
            name=_template_name(kind),
            inputs=_inputs(m, "manifest", "success-condition", "failure-condition"),
            resource=m.ResourceTemplate(
                action="apply" if kind == JOB_RESOURCE else "create",
                manifest="{{inputs.parameters.manifest}}",
                success_condition="{{inputs.parameters.success-condition}}",
                failure_condition="{{inputs.parameters.failure-condition}}",
                set_owner_reference=True,
            ),
            retry_strategy=retry,
        )
    if kind not in steps.STEP_FOR_KIND:
        raise KubernetesError(
            f"steps of kind {kind!r} have no Argo template",
            hint="compile programs of sqlml statements and Kubeflow job steps",
        )
    return m.Template(
        name=_template_name(kind, image, own),
        inputs=_inputs(m, "ir"),
        container=m.Container(
            name="main",
            image=image or options.image,
            image_pull_policy=options.image_pull_policy,
            command=list(STEP_COMMAND),
            args=["{{inputs.parameters.ir}}"],
            env=[
                m.EnvVar(
                    name=DATASOURCE_ENV,
                    value_from=m.EnvVarSource(
                        secret_key_ref=m.SecretKeySelector(
                            name=options.secret, key=options.secret_key
                        )
                    ),
                ),
                m.EnvVar(name=RUN_ENV, value=WORKFLOW_NAME),
            ],
            resources=_resources(m, options),
            security_context=m.SecurityContext(
                allow_privilege_escalation=False,
                run_as_non_root=True,
                capabilities=m.Capabilities(drop=["ALL"]),
            ),
        ),
        retry_strategy=retry,
    )


def _retry(m: Any, options: ArgoOptions, kind: str) -> Any:
    """The retry strategy of a kind's template (Argo v4.1.2's retry policies).

    ``--retries N``: any failure or error, N times (``Always``). Otherwise only an error
    (``OnError``: the pod deleted by a node drain or a preemption, not a statement that
    failed), :data:`ERROR_RETRIES` times, where a second attempt is safe: statement steps
    and training jobs, which a retry adopts, but not the ``create`` of a Katib Experiment
    (its ``generateName`` would start a second search).
    """
    backoff = m.Backoff(duration="10s", factor=m.IntOrString(2))
    if options.retries:
        return m.RetryStrategy(
            limit=m.IntOrString(options.retries), retry_policy="Always", backoff=backoff
        )
    if kind == RESOURCE:
        return None
    return m.RetryStrategy(
        limit=m.IntOrString(ERROR_RETRIES), retry_policy="OnError", backoff=backoff
    )


def _inputs(m: Any, *names: str) -> Any:
    return m.Inputs(parameters=[m.Parameter(name=name) for name in names])


def _resources(m: Any, options: ArgoOptions) -> Any:
    if not (options.requests or options.limits):
        return None
    return m.ResourceRequirements(
        requests={key: m.Quantity(value) for key, value in options.requests.items()} or None,
        limits={key: m.Quantity(value) for key, value in options.limits.items()} or None,
    )


def _distributed(statement: ir.Statement) -> bool:
    """A TO TRAIN runs as a Kubeflow job when ``train.distributed`` says so or, unset, when
    it asks for workers or parameter servers; one whose job would be one process (XGBoost's
    ``train.workers = 1``) trains in its step's own process."""
    if not isinstance(statement, ir.TrainStatement):
        return False
    from sqlml.models import family

    attributes = statement.attributes
    if family(statement.family).job_head_is_worker and attributes.get("train.workers") == 1:
        return False
    flag = attributes.get("train.distributed")
    if flag is None:
        return "train.workers" in attributes or "train.ps" in attributes
    return bool(flag)


def _training_job(
    statement: ir.TrainStatement, options: ArgoOptions, after: Sequence[Step]
) -> Step:
    """The Kubeflow job of the statement's model family (a TFJob for Keras, an XGBoostJob
    for XGBoost) whose pods run the statement's step, named ``<statement>-<workflow uid>``.

    Replicas restart ``OnFailure``: the kubelet restarts a container that exits non-zero (a
    failed statement, an out-of-memory kill) in its pod, and training-operator v1.9 fails the
    job when the restarts of its running pods reach the run policy's backoff limit
    (``PastBackoffLimit``). Under ``ExitCode`` a killed pod is deleted and created again,
    which no backoff limit counts: only the deadline would end it.
    """
    from sqlml.models import family  # the one place codegen meets the families

    attributes = statement.attributes
    args = (ir.to_argument(statement.to_dict()),)
    image = statement.image or statement.base_image
    if image:  # a model zoo's image: the job's pods run in it
        options = replace(options, image=image)
    options = _statement_options(statement, options)

    def replica(count: int = 1) -> kubeflow.Replica:
        return _replica(options, args, count, restart_policy="OnFailure")

    model_family = family(statement.family)
    workers = attributes.get("train.workers", DEFAULT_WORKERS)
    ps = attributes.get("train.ps") if model_family.parameter_servers else None
    counts = {"Master": 1, "Chief": 1, "Worker": workers, **({"PS": ps} if ps else {})}
    # Many runs of one workflow coexist, and a retried step must find its job: the name ends
    # with the Workflow's uid, which Argo substitutes (the slot keeps its length meanwhile).
    # The statement's id, cut, keeps its unique place in the program (``s03-train-...``).
    limit = job_name_limit(counts) - len(_UID_SLOT) - 1
    name = f"{dns_label(statement.id)[:limit].rstrip('-')}-{_UID_SLOT}"
    common = {"namespace": options.namespace, "run_policy": options.job_run_policy}
    step = model_family.training_job(kubeflow, name, replica, workers, ps, **common, after=after)
    return Step(statement.id, JOB_RESOURCE, step.params, step.after)


def _statement_options(statement: ir.Statement, options: ArgoOptions) -> ArgoOptions:
    """``options`` with the requests and limits the statement's attributes give its pods."""
    requests, limits = pods.statement_resources(
        options.requests,
        options.limits,
        statement.attributes,
        f"statement {statement.id}",
        (statement.line, statement.column),
    )
    return replace(options, requests=requests, limits=limits)


def _replica(
    options: ArgoOptions, args: Sequence[str], count: int = 1, restart_policy: str = "Never"
) -> kubeflow.Replica:
    """Pods running the step image's statement command with ``args``, as ``options`` say."""
    return kubeflow.Replica(
        image=options.image,
        command=STEP_COMMAND,
        args=tuple(args),
        replicas=count,
        restart_policy=restart_policy,
        secret_env={DATASOURCE_ENV: (options.secret, options.secret_key)},
        requests=options.requests,
        limits=options.limits,
        service_account=options.service_account,
        run_as_user=options.run_as_user,
        run_as_group=options.run_as_user,
        image_pull_policy=options.image_pull_policy,
    )


def literal_json(value: Any) -> str:
    """``value`` as compact JSON that Argo passes on unchanged.

    Argo expands ``{{...}}`` in parameter values. Outside strings JSON never has two
    braces in a row, so escaping every ``{`` followed by another as ``\\u007b`` (inside a
    string, where it decodes to the same text) leaves nothing for Argo to expand.
    """
    return re.sub(r"\{(?=\{)", r"\\u007b", json.dumps(value, separators=(",", ":")))


def _template_name(kind: str, image: str | None = None, own: str = "") -> str:
    """A kind's template name; with a model zoo image, one per image: ``train-image-<hash>``;
    with a statement's own requests and limits, one per set of them: ``...-pod-<hash>``."""
    name = kind.replace("_", "-").replace(".", "-")
    if image is not None:
        name = f"{name}-image-{hashlib.sha256(image.encode()).hexdigest()[:10]}"
    if own:
        name = f"{name}-pod-{hashlib.sha256(own.encode()).hexdigest()[:10]}"
    return name


def _own(step: Step, options: ArgoOptions) -> str:
    """The requests and limits of a statement step that sets its own (``train.cpu``...), as
    JSON; ``""`` for the program's."""
    attributes = {} if step.template == RESOURCE else step.params.get("attributes") or {}
    if not pods.own_resources(attributes):
        return ""
    position = (step.params.get("line"), step.params.get("column"))
    own = pods.statement_resources(
        options.requests, options.limits, attributes, f"statement {step.name}", position
    )
    return json.dumps(own, sort_keys=True)


def _image(step: Step) -> str | None:
    """The model zoo image of a statement step (TO TRAIN <image>/<estimator>, USING a model
    zoo's model, the estimator's first; a TO PREDICT of a model trained from one)."""
    if step.template in (RESOURCE, JOB_RESOURCE):
        return None
    return step.params.get("image") or step.params.get("base_image")
