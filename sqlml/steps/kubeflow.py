"""Distributed training jobs for the Kubeflow training operator: TFJob, PyTorchJob,
XGBoostJob and MPIJob.

Each function returns a ``resource`` step: its parameters hold the job's manifest (built
with the Kubeflow training SDK's models, ``kubeflow-training``) and the conditions on the
job's status that end the step. A backend creates the job and waits for one of them.

System dependencies: a Kubernetes cluster with the Kubeflow training operator (v1 API,
``kubeflow.org/v1``) installed; the Python package ``kubeflow-training`` (the
``kubernetes`` extra) to build the manifests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlml.errors import KubernetesError
from sqlml.workflow.core import Step
from sqlml.workflow.templates import run_job

API_VERSION = "kubeflow.org/v1"
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
        backoff_limit: retries before the job is marked failed.
        scheduling_policy: gang scheduling settings.
        suspend: create the job suspended (no pods until resumed).
    """

    clean_pod_policy: str = "None"
    ttl_seconds_after_finished: int | None = None
    active_deadline_seconds: int | None = None
    backoff_limit: int | None = None
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
    container_name: str = "tensorflow",
    labels: Mapping[str, str] | None = None,
    after: Sequence[Step] = (),
) -> Step:
    """A TFJob: TensorFlow training on Chief, Worker, PS and Evaluator pods.

    The operator sets ``TF_CONFIG`` in every pod. The step succeeds when the chief (or,
    without one, a worker) succeeds and fails when one of those pods fails.

    Args:
        name: the job's name (a DNS label) and the step's.
        workers: the Worker pods.
        chief: the Chief pod (one replica), which also decides success when present.
        ps: the parameter-server pods.
        evaluator: the Evaluator pod.
        namespace: the job's namespace (default: the workflow's).
        run_policy: the job's RunPolicy (default: the operator's defaults).
        success_policy: ``""`` (chief or worker 0 done) or ``AllWorkers``.
        enable_dynamic_worker: let workers join and leave (elastic training).
        container_name: the container the operator configures; TFJob expects ``tensorflow``.
        labels: labels on the job.
        after: steps that must finish first.

    System dependencies: the training operator with TFJob support.
    """
    roles = {"Chief": chief, "Worker": workers, "PS": ps, "Evaluator": evaluator}
    primary = "Chief" if chief else "Worker"
    return _job_step(
        "TFJob",
        name,
        namespace,
        labels,
        lambda m, specs: m.KubeflowOrgV1TFJobSpec(
            tf_replica_specs=specs,
            run_policy=_run_policy(m, run_policy or RunPolicy()),
            success_policy=success_policy,
            enable_dynamic_worker=enable_dynamic_worker,
        ),
        roles,
        container_name,
        primary,
        after,
    )


def pytorch_train(
    name: str,
    *,
    master: Replica,
    workers: Replica | None = None,
    namespace: str | None = None,
    run_policy: RunPolicy | None = None,
    nproc_per_node: str | None = None,
    container_name: str = "pytorch",
    labels: Mapping[str, str] | None = None,
    after: Sequence[Step] = (),
) -> Step:
    """A PyTorchJob: ``torch.distributed`` training on a Master and Worker pods.

    The operator sets ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK``. The step
    ends with the master.

    Args:
        name: the job's name (a DNS label) and the step's.
        master: the Master pod (one replica).
        workers: the Worker pods.
        namespace: the job's namespace (default: the workflow's).
        run_policy: the job's RunPolicy (default: the operator's defaults).
        nproc_per_node: processes per pod (``auto``, ``cpu``, ``gpu`` or a number).
        container_name: the container the operator configures; PyTorchJob expects ``pytorch``.
        labels: labels on the job.
        after: steps that must finish first.

    System dependencies: the training operator with PyTorchJob support.
    """
    return _job_step(
        "PyTorchJob",
        name,
        namespace,
        labels,
        lambda m, specs: m.KubeflowOrgV1PyTorchJobSpec(
            pytorch_replica_specs=specs,
            run_policy=_run_policy(m, run_policy or RunPolicy()),
            nproc_per_node=nproc_per_node,
        ),
        {"Master": master, "Worker": workers},
        container_name,
        "Master",
        after,
    )


def xgboost_train(
    name: str,
    *,
    master: Replica,
    workers: Replica | None = None,
    namespace: str | None = None,
    run_policy: RunPolicy | None = None,
    container_name: str = "xgboost",
    labels: Mapping[str, str] | None = None,
    after: Sequence[Step] = (),
) -> Step:
    """An XGBoostJob: XGBoost's collective (Rabit) training on a Master and Worker pods.

    The operator sets ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` and ``RANK``. The step
    ends with the master.

    Args:
        name: the job's name (a DNS label) and the step's.
        master: the Master pod (one replica), the collective's tracker.
        workers: the Worker pods.
        namespace: the job's namespace (default: the workflow's).
        run_policy: the job's RunPolicy (default: the operator's defaults).
        container_name: the container the operator configures; XGBoostJob expects ``xgboost``.
        labels: labels on the job.
        after: steps that must finish first.

    System dependencies: the training operator with XGBoostJob support.
    """
    return _job_step(
        "XGBoostJob",
        name,
        namespace,
        labels,
        lambda m, specs: m.KubeflowOrgV1XGBoostJobSpec(
            xgb_replica_specs=specs, run_policy=_run_policy(m, run_policy or RunPolicy())
        ),
        {"Master": master, "Worker": workers},
        container_name,
        "Master",
        after,
    )


def mpi_train(
    name: str,
    *,
    launcher: Replica,
    workers: Replica,
    namespace: str | None = None,
    run_policy: RunPolicy | None = None,
    slots_per_worker: int | None = None,
    container_name: str = "mpi",
    labels: Mapping[str, str] | None = None,
    after: Sequence[Step] = (),
) -> Step:
    """An MPIJob: an ``mpirun`` launcher pod driving Worker pods (Horovod and the like).

    The step ends with the launcher.

    Args:
        name: the job's name (a DNS label) and the step's.
        launcher: the Launcher pod (one replica), which runs ``mpirun``.
        workers: the Worker pods, which run the MPI processes.
        namespace: the job's namespace (default: the workflow's).
        run_policy: the job's RunPolicy (default: the operator's defaults).
        slots_per_worker: MPI slots (processes) per worker pod.
        container_name: the job's main container, named in ``mainContainer``.
        labels: labels on the job.
        after: steps that must finish first.

    System dependencies: the training operator with MPIJob (v1) support; an image with MPI.
    """
    return _job_step(
        "MPIJob",
        name,
        namespace,
        labels,
        lambda m, specs: m.KubeflowOrgV1MPIJobSpec(
            mpi_replica_specs=specs,
            run_policy=_run_policy(m, run_policy or RunPolicy()),
            slots_per_worker=slots_per_worker,
            main_container=container_name,
        ),
        {"Launcher": launcher, "Worker": workers},
        container_name,
        "Launcher",
        after,
    )


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
    """An SDK model as the JSON values of its manifest (camelCase keys, no empty fields)."""
    from kubeflow.training.api_client import ApiClient

    return ApiClient().sanitize_for_serialization(model)


def _job_step(
    kind: str,
    name: str,
    namespace: str | None,
    labels: Mapping[str, str] | None,
    make_spec: Any,
    roles: Mapping[str, Replica | None],
    container_name: str,
    primary: str,
    after: Sequence[Step],
) -> Step:
    check_name(name)
    m = training_models()
    specs = {
        role: _replica_spec(m, role, replica, container_name)
        for role, replica in roles.items()
        if replica is not None
    }
    job = getattr(m, f"KubeflowOrgV1{kind}")(
        api_version=API_VERSION,
        kind=kind,
        metadata=m.V1ObjectMeta(
            name=name, namespace=namespace, labels=dict(labels) if labels else None
        ),
        spec=make_spec(m, specs),
    )
    status = f"status.replicaStatuses.{primary}"
    return run_job(name, to_plain(job), f"{status}.succeeded > 0", f"{status}.failed > 0", after)


def _replica_spec(m: Any, role: str, replica: Replica, container_name: str) -> Any:
    if replica.replicas < 1:
        raise KubernetesError(
            f"the {role} replicas of a job must be at least 1, not {replica.replicas}",
            hint="leave the replica type out instead",
        )
    if role in ("Chief", "Master", "Launcher") and replica.replicas != 1:
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
            node_selector=dict(replica.node_selector) or None,
            security_context=m.V1PodSecurityContext(
                run_as_non_root=True,
                run_as_user=replica.run_as_user,
                run_as_group=replica.run_as_group,
                seccomp_profile=m.V1SeccompProfile(type="RuntimeDefault"),
            ),
        )
    )


def _run_policy(m: Any, policy: RunPolicy) -> Any:
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


def check_name(name: str) -> None:
    """Kubernetes object names: DNS labels (lower-case letters, digits, '-'), 63 at most."""
    ok = 0 < len(name) <= 63 and name[0].isalnum() and name[-1].isalnum()
    if not ok or any(not (c.isdigit() or "a" <= c <= "z" or c == "-") for c in name):
        raise KubernetesError(
            f"{name!r} is not a valid Kubernetes object name",
            hint="use at most 63 lower-case letters, digits and '-', "
            "starting and ending with a letter or digit",
        )
