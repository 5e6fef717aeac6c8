"""Distributed training jobs for the Kubeflow training operator: TFJob, PyTorchJob and
MPIJob here, and the kinds model families declare (XGBoost's XGBoostJob).

Each function returns a ``resource`` step: its parameters hold the job's manifest and the
conditions on the job's status that end the step. A backend creates the job and waits for
one of them. One builder makes every kind of job from the kind's :class:`JobKind`
declaration (:func:`job_builder`, for a family's kind); the replica specs, pod templates and
run policy are the Kubeflow training SDK's models (``kubeflow-training``).

A step succeeds when its job has a ``completionTime`` and fails when the job has the
operator's ``Failed`` condition (Argo checks the failure condition first, and the operators
set both in one status update). ``RunPolicy`` gives every job a backoff limit by default, so
that a replica restarting ``OnFailure`` again and again fails the job instead of restarting
forever.

System dependencies: a Kubernetes cluster with the Kubeflow training operator v1.9
(``kubeflow.org/v1``: TFJob, PyTorchJob, XGBoostJob) and, for MPIJob, mpi-operator
(``kubeflow.org/v2beta1``); the Python package ``kubeflow-training`` (the ``kubernetes``
extra) to build the manifests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlml.errors import KubernetesError
from sqlml.steps.naming import check_label, job_name_limit
from sqlml.workflow.core import Step
from sqlml.workflow.templates import run_job

API_VERSION = "kubeflow.org/v1"
MPI_API_VERSION = "kubeflow.org/v2beta1"  # mpi-operator v0.6+; the training operator's v1 is gone
DEFAULT_BACKOFF_LIMIT = 3
# The operators keep one condition per type and append each new one last (training-operator
# v1.9 pkg/util/status.go setCondition, mpi-operator's likewise), so Failed may sit at any
# index below the number of types: Created, Running or Restarting, Succeeded, Suspended,
# Failed.
JOB_CONDITION_TYPES = 5
JOB_SUCCEEDED = "status.completionTime"  # set with Succeeded, and with Failed (checked first)
CLEAN_POD_POLICIES = ("None", "Running", "All")
RESTART_POLICIES = ("Always", "OnFailure", "Never", "ExitCode")


@dataclass(frozen=True)
class SchedulingPolicy:
    """Gang scheduling of a job's pods (Volcano or the scheduler plugins).

    Args:
        min_available: pods that must be schedulable together before any starts.
        queue: the scheduler queue the job goes to.
        priority_class: the PriorityClass of the job's pod group.
        min_resources: resources (``{"cpu": "4"}``) the group needs before it starts.
        schedule_timeout_seconds: how long the group may wait to be scheduled.
    """

    min_available: int | None = None
    queue: str | None = None
    priority_class: str | None = None
    min_resources: Mapping[str, str] = field(default_factory=dict)
    schedule_timeout_seconds: int | None = None


@dataclass(frozen=True)
class RunPolicy:
    """How the operator runs a job and cleans up after it.

    Args:
        clean_pod_policy: pods deleted when the job ends: ``None``, ``Running`` or ``All``.
        ttl_seconds_after_finished: delete the finished job after this many seconds.
        active_deadline_seconds: fail the job when it runs longer than this.
        backoff_limit: the container restarts, added up over the job's running pods,
            at which the operator fails the job (training-operator v1.9 ``PastBackoffLimit``).
            Only restarts in place count (``OnFailure``, ``Always``): an ``ExitCode`` pod
            (``restartPolicy: Never``) killed is created again, which nothing counts.
            ``None`` leaves it to the operator, which never fails a job whose replica keeps
            crashing.
        scheduling_policy: gang scheduling settings.
        suspend: create the job suspended (no pods until resumed).
    """

    clean_pod_policy: str = "None"
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = DEFAULT_BACKOFF_LIMIT
    scheduling_policy: SchedulingPolicy | None = None
    suspend: bool | None = None


@dataclass(frozen=True)
class Replica:
    """The pods of one replica type (Chief, Worker, PS, Master, Launcher...).

    Args:
        image: the container image.
        command: the container's entry point.
        args: its arguments.
        replicas: how many pods of this type.
        restart_policy: ``Always``, ``OnFailure``, ``Never`` or ``ExitCode``.
        env: plain environment variables (never credentials).
        secret_env: environment variables read from Secrets: name -> (secret, key).
        requests: resource requests, e.g. ``{"cpu": "1", "memory": "2Gi"}``.
        limits: resource limits.
        service_account: the pods' service account (default: the namespace's default).
        node_selector: node labels the pods must run on.
        run_as_user: the non-root user id the containers run as.
        run_as_group: the group id the containers run as.
        image_pull_policy: ``Always``, ``IfNotPresent`` or ``Never`` (default: the cluster's).
        service_account_token: mount the service account's API token (only for a program
            that talks to the API server itself; sqlml's statements do not).
    """

    image: str
    command: Sequence[str] = ()
    args: Sequence[str] = ()
    replicas: int = 1
    restart_policy: str = "OnFailure"
    env: Mapping[str, str] = field(default_factory=dict)
    secret_env: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    requests: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, str] = field(default_factory=dict)
    service_account: str | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    run_as_user: int = 1000
    run_as_group: int = 1000
    image_pull_policy: str | None = None
    service_account_token: bool = False


@dataclass(frozen=True)
class JobKind:
    """What sets one kind of training job apart; :func:`_manifest` builds every kind from it.

    Args:
        kind: the object's kind, e.g. ``TFJob``.
        api_version: its API version.
        replica_specs: the spec's field holding the replica specs, e.g. ``tfReplicaSpecs``.
        roles: the replica types, in the order the manifest lists them.
        head: the replica type that has exactly one pod.
        container: the container the operator configures (the default container name).
        spec_order: the spec's fields, in the order the manifest lists them.
        manifest_order: the manifest's top-level fields, in the order it lists them.
        plural: a model family's kind: its resource's plural, e.g. ``xgboostjobs``.
        operator: a model family's kind: its pods' ``training.kubeflow.org/operator-name``.
        zoo: a model family's kind: its name in the step zoo (``sqlml.steps.<zoo>.train``).
    """

    kind: str
    api_version: str
    replica_specs: str
    roles: tuple[str, ...]
    head: str
    container: str
    spec_order: tuple[str, ...]
    manifest_order: tuple[str, ...] = ("apiVersion", "kind", "spec", "metadata")
    plural: str | None = None
    operator: str | None = None
    zoo: str | None = None


TFJOB = JobKind(
    "TFJob",
    API_VERSION,
    "tfReplicaSpecs",
    roles=("Chief", "Worker", "PS", "Evaluator"),
    head="Chief",
    container="tensorflow",
    spec_order=("enableDynamicWorker", "runPolicy", "successPolicy", "tfReplicaSpecs"),
)
PYTORCHJOB = JobKind(
    "PyTorchJob",
    API_VERSION,
    "pytorchReplicaSpecs",
    roles=("Master", "Worker"),
    head="Master",
    container="pytorch",
    spec_order=("nprocPerNode", "pytorchReplicaSpecs", "runPolicy"),
)
MPIJOB = JobKind(
    "MPIJob",
    MPI_API_VERSION,
    "mpiReplicaSpecs",
    roles=("Launcher", "Worker"),
    head="Launcher",
    container="mpi",
    spec_order=("slotsPerWorker", "mpiImplementation", "runPolicy", "mpiReplicaSpecs"),
    manifest_order=("apiVersion", "kind", "metadata", "spec"),
)


def tensorflow_train(
    name: str,
    *,
    workers: Replica,
    chief: Replica | None = None,
    ps: Replica | None = None,
    evaluator: Replica | None = None,
    namespace: str | None = None,
    run_policy: RunPolicy | None = None,
    success_policy: str | None = None,
    enable_dynamic_worker: bool | None = None,
    container_name: str = TFJOB.container,
    labels: Mapping[str, str] | None = None,
    after: Sequence[Step] = (),
) -> Step:
    """A TFJob: TensorFlow training on Chief, Worker, PS and Evaluator pods.

    The operator sets ``TF_CONFIG`` in every pod. The job succeeds when the chief (or,
    without one, worker 0) succeeds; it fails when a replica fails for good (its restart
    policy, the backoff limit or the deadline), and so does the step.

    Args:
        name: the job's name (a DNS label) and the step's.
        workers: the Worker pods.
        chief: the Chief pod (one replica), which also decides success when present.
        ps: the parameter-server pods.
        evaluator: the Evaluator pod.
        namespace: the job's namespace (default: the workflow's).
        run_policy: the job's RunPolicy (default: :class:`RunPolicy`'s).
        success_policy: ``""`` (chief or worker 0 done) or ``AllWorkers``.
        enable_dynamic_worker: let workers join and leave (elastic training).
        container_name: the container the operator configures; TFJob expects ``tensorflow``.
        labels: labels on the job.
        after: steps that must finish first.

    System dependencies: the training operator with TFJob support.
    """
    roles = {"Chief": chief, "Worker": workers, "PS": ps, "Evaluator": evaluator}
    options = {"successPolicy": success_policy, "enableDynamicWorker": enable_dynamic_worker}
    job = _manifest(TFJOB, name, namespace, labels, roles, options, run_policy, container_name)
    return _waited(name, job, after)


def pytorch_train(
    name: str,
    *,
    master: Replica,
    workers: Replica | None = None,
    namespace: str | None = None,
    run_policy: RunPolicy | None = None,
    nproc_per_node: str | None = None,
    container_name: str = PYTORCHJOB.container,
    labels: Mapping[str, str] | None = None,
    after: Sequence[Step] = (),
) -> Step:
    """A PyTorchJob: ``torch.distributed`` training on a Master and Worker pods.

    The operator sets ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK``. The job
    (and the step) succeeds with the master and fails when a replica fails for good.

    Args:
        name: the job's name (a DNS label) and the step's.
        master: the Master pod (one replica).
        workers: the Worker pods.
        namespace: the job's namespace (default: the workflow's).
        run_policy: the job's RunPolicy (default: :class:`RunPolicy`'s).
        nproc_per_node: processes per pod (``auto``, ``cpu``, ``gpu`` or a number).
        container_name: the container the operator configures; PyTorchJob expects ``pytorch``.
        labels: labels on the job.
        after: steps that must finish first.

    System dependencies: the training operator with PyTorchJob support.
    """
    roles = {"Master": master, "Worker": workers}
    options = {"nprocPerNode": nproc_per_node}
    job = _manifest(PYTORCHJOB, name, namespace, labels, roles, options, run_policy, container_name)
    return _waited(name, job, after)


def job_builder(job: JobKind) -> Callable[..., Step]:
    """The step zoo's ``train`` of a kind without spec fields of its own (a model family's):
    ``train(name, *, <replicas>, namespace, run_policy, container_name, labels, after)``,
    each replica type's pods a keyword, ``workers`` for the Worker pods and the others' in
    lower case (``master=``); the head's are needed.

    The operator of the kind runs the pods; the job (and the step) succeeds with the head
    and fails when a replica fails for good.
    """

    def train(
        name: str,
        *,
        namespace: str | None = None,
        run_policy: RunPolicy | None = None,
        container_name: str = job.container,
        labels: Mapping[str, str] | None = None,
        after: Sequence[Step] = (),
        **replicas: Replica | None,
    ) -> Step:
        keywords = {role: "workers" if role == "Worker" else role.lower() for role in job.roles}
        unknown = sorted(set(replicas) - set(keywords.values()))
        if unknown or replicas.get(keywords[job.head]) is None:
            wrong = f"unexpected {', '.join(unknown)}" if unknown else f"no {keywords[job.head]}"
            raise TypeError(f"a {job.kind}'s train() got {wrong}")
        roles = {role: replicas.get(keyword) for role, keyword in keywords.items()}
        manifest = _manifest(job, name, namespace, labels, roles, {}, run_policy, container_name)
        return _waited(name, manifest, after)

    return train


def mpi_train(
    name: str,
    *,
    launcher: Replica,
    workers: Replica,
    namespace: str | None = None,
    run_policy: RunPolicy | None = None,
    slots_per_worker: int | None = None,
    mpi_implementation: str | None = None,
    container_name: str = MPIJOB.container,
    labels: Mapping[str, str] | None = None,
    after: Sequence[Step] = (),
) -> Step:
    """An MPIJob (mpi-operator, ``kubeflow.org/v2beta1``): an ``mpirun`` launcher pod driving
    Worker pods (Horovod and the like).

    mpi-operator serves only ``v2beta1``, whose CRD has the same name as the training
    operator's old ``v1`` MPIJob: the two operators cannot both serve MPIJobs.

    Args:
        name: the job's name (a DNS label) and the step's.
        launcher: the Launcher pod (one replica), which runs ``mpirun``.
        workers: the Worker pods, which run the MPI processes.
        namespace: the job's namespace (default: the workflow's).
        run_policy: the job's RunPolicy (default: :class:`RunPolicy`'s).
        slots_per_worker: MPI slots (processes) per worker pod.
        mpi_implementation: ``OpenMPI``, ``Intel`` or ``MPICH`` (default: OpenMPI).
        container_name: the name of the pods' container.
        labels: labels on the job.
        after: steps that must finish first.

    System dependencies: mpi-operator v0.6 or later; an image with MPI.
    """
    roles = {"Launcher": launcher, "Worker": workers}
    options = {"slotsPerWorker": slots_per_worker, "mpiImplementation": mpi_implementation}
    job = _manifest(MPIJOB, name, namespace, labels, roles, options, run_policy, container_name)
    return _waited(name, job, after)


def training_models() -> Any:
    """The Kubeflow training SDK's models module; a KubernetesError without the extra."""
    try:
        from kubeflow.training import models
    except ImportError:
        raise KubernetesError(
            "building Kubeflow jobs needs the Kubeflow training SDK (kubeflow-training)",
            hint="install it with: pip install 'sqlml[kubernetes]'",
        ) from None
    return models


def to_plain(model: Any) -> Any:
    """An SDK model (or a dict holding some) as JSON values: camelCase keys, no empty fields."""
    from kubeflow.training.api_client import ApiClient

    return ApiClient().sanitize_for_serialization(model)


def _manifest(
    job: JobKind,
    name: str,
    namespace: str | None,
    labels: Mapping[str, str] | None,
    roles: Mapping[str, Replica | None],
    options: Mapping[str, Any],
    run_policy: RunPolicy | None,
    container_name: str,
) -> dict[str, Any]:
    """The manifest of a ``job`` named ``name``: the pods of ``roles`` (type -> replica, None
    for none) and the kind's own spec fields ``options`` (None: left out)."""
    replicas = {role: roles[role] for role in job.roles if roles[role] is not None}
    _check_job_name(job.kind, name, replicas)
    m = training_models()
    specs = {
        role: _replica_spec(m, role, replica, container_name, role == job.head)
        for role, replica in replicas.items()
    }
    spec = {**options, job.replica_specs: specs, "runPolicy": _run_policy(m, run_policy)}
    manifest = {
        "apiVersion": job.api_version,
        "kind": job.kind,
        "metadata": _metadata(name, namespace, labels),
        "spec": _ordered(spec, job.spec_order),
    }
    return to_plain(_ordered(manifest, job.manifest_order))


def _ordered(fields: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    """``fields`` in ``order``, without those that are None."""
    return {key: fields[key] for key in order if fields.get(key) is not None}


def _waited(name: str, manifest: dict[str, Any], after: Sequence[Step]) -> Step:
    """The step creating the job ``manifest`` and waiting for the operator to end it."""
    return run_job(name, manifest, JOB_SUCCEEDED, failed_condition(JOB_CONDITION_TYPES), after)


def failed_condition(types: int) -> str:
    """Argo's failure condition for an object whose ``status.conditions`` holds at most
    ``types`` conditions, one per type: a ``Failed`` one at any index.

    Argo's conditions are label selectors over gjson paths, which cannot search a list; its
    failure condition holds when any of its requirements does, so one per index.
    """
    return ", ".join(f"status.conditions.{index}.type == Failed" for index in range(types))


def _metadata(name: str, namespace: str | None, labels: Mapping[str, str] | None) -> dict[str, Any]:
    metadata = {"name": name, "namespace": namespace, "labels": dict(labels or {}) or None}
    return {key: value for key, value in metadata.items() if value is not None}


def _check_job_name(kind: str, name: str, replicas: Mapping[str, Replica]) -> None:
    """Job names are DNS-1035 labels short enough for their ``<job>-<type>-<index>``
    Services (the training operator's and mpi-operator's webhooks and controllers)."""
    counts = {role: replica.replicas for role, replica in replicas.items()}
    check_label(name, f"a {kind} with these replicas", job_name_limit(counts))


def _replica_spec(m: Any, role: str, replica: Replica, container_name: str, head: bool) -> Any:
    """The replica spec of ``role``; the ``head`` replica type has exactly one pod."""
    if replica.replicas < 1:
        raise KubernetesError(
            f"the {role} replicas of a job must be at least 1, not {replica.replicas}",
            hint="leave the replica type out instead",
        )
    if head and replica.replicas != 1:
        raise KubernetesError(
            f"a job has exactly one {role}, not {replica.replicas}",
            hint=f"set replicas=1 for the {role}",
        )
    if replica.restart_policy not in RESTART_POLICIES:
        raise KubernetesError(
            f"unknown restart policy {replica.restart_policy!r} for the {role} replicas",
            hint=f"use one of {', '.join(RESTART_POLICIES)}",
        )
    return m.KubeflowOrgV1ReplicaSpec(
        replicas=replica.replicas,
        restart_policy=replica.restart_policy,
        template=pod_template(m, replica, container_name),
    )


def pod_template(m: Any, replica: Replica, container_name: str) -> Any:
    """The pod template of ``replica``: one container, non-root, no privilege escalation."""
    if replica.run_as_user == 0:
        raise KubernetesError(
            "job pods run as a non-root user; run_as_user is 0 (root)",
            hint="give the image's non-root user id, e.g. 1000",
        )
    env = [m.V1EnvVar(name=key, value=value) for key, value in replica.env.items()]
    env += [
        m.V1EnvVar(
            name=key,
            value_from=m.V1EnvVarSource(
                secret_key_ref=m.V1SecretKeySelector(name=secret, key=secret_key)
            ),
        )
        for key, (secret, secret_key) in replica.secret_env.items()
    ]
    container = m.V1Container(
        name=container_name,
        image=replica.image,
        image_pull_policy=replica.image_pull_policy,
        command=list(replica.command) or None,
        args=list(replica.args) or None,
        env=env or None,
        resources=m.V1ResourceRequirements(
            requests=dict(replica.requests) or None, limits=dict(replica.limits) or None
        )
        if replica.requests or replica.limits
        else None,
        security_context=m.V1SecurityContext(
            allow_privilege_escalation=False,
            run_as_non_root=True,
            capabilities=m.V1Capabilities(drop=["ALL"]),
        ),
    )
    return m.V1PodTemplateSpec(
        spec=m.V1PodSpec(
            containers=[container],
            service_account_name=replica.service_account,
            automount_service_account_token=replica.service_account_token,
            node_selector=dict(replica.node_selector) or None,
            security_context=m.V1PodSecurityContext(
                run_as_non_root=True,
                run_as_user=replica.run_as_user,
                run_as_group=replica.run_as_group,
                seccomp_profile=m.V1SeccompProfile(type="RuntimeDefault"),
            ),
        )
    )


def _run_policy(m: Any, policy: RunPolicy | None) -> Any:
    """The SDK's run policy for ``policy`` (default: :class:`RunPolicy`'s)."""
    policy = policy or RunPolicy()
    if policy.clean_pod_policy not in CLEAN_POD_POLICIES:
        raise KubernetesError(
            f"unknown clean pod policy {policy.clean_pod_policy!r}",
            hint=f"use one of {', '.join(CLEAN_POD_POLICIES)}",
        )
    scheduling = policy.scheduling_policy
    return m.KubeflowOrgV1RunPolicy(
        clean_pod_policy=policy.clean_pod_policy,
        ttl_seconds_after_finished=policy.ttl_seconds_after_finished,
        active_deadline_seconds=policy.active_deadline_seconds,
        backoff_limit=policy.backoff_limit,
        suspend=policy.suspend,
        scheduling_policy=None
        if scheduling is None
        else m.KubeflowOrgV1SchedulingPolicy(
            min_available=scheduling.min_available,
            queue=scheduling.queue,
            priority_class=scheduling.priority_class,
            min_resources=dict(scheduling.min_resources) or None,
            schedule_timeout_seconds=scheduling.schedule_timeout_seconds,
        ),
    )
