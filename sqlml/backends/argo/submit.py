"""Run workflows on Argo Workflows: submit one, watch it, stream its logs, stop it.

The datasource URL travels only in a Secret (``data``, base64), which the workflow's pods read
through ``secretKeyRef``; it is never printed, logged or put into the Workflow. Progress goes
to stderr, the run's name and its steps' logs to stdout.

A step that trains on a Kubeflow job or searches with a Katib Experiment is an Argo resource
step: Argo creates the object (owned by the Workflow: ``metadata.ownerReferences`` names the
Workflow's uid) and waits for it; the training runs in the pods its operator creates. So the
logs shown for such a step are also those of its job's replica pods, found by the training
operator's labels (``training.kubeflow.org/job-name`` and ``.../operator-name``; labelled by
``.../replica-type`` or, for mpi-operator, ``.../job-role``, and ``.../replica-index``), and of
its Experiment's trial pods, found by Katib's (``katib.kubeflow.org/experiment`` and the
``katib.kubeflow.org/trial`` label Katib's pod webhook adds), read from the collector container
Katib injects, which prints the trial's output. Stopping a run deletes the jobs
and Experiments it created that still run: Argo deletes owned objects only with the Workflow.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import yaml

from sqlml.backends.argo.kube import TIMEOUT, ApiError, Cluster, Kube
from sqlml.datasources import parse_url, registry, source_class
from sqlml.errors import KubernetesError
from sqlml.workflow.core import WorkflowError

GROUP, VERSION, PLURAL = "argoproj.io", "v1alpha1", "workflows"
WORKFLOWS = f"{PLURAL}.{GROUP}"
POLL_SECONDS = 2.0  # between two reads of a watched workflow
LOG_GRACE_SECONDS = 30.0  # how long a finished run waits for its log streams to end
READ_RETRIES = 5  # reads of a watched run that may fail in a row (unreachable, 5xx)
DONE = ("Succeeded", "Failed", "Error")
STARTED = ("Running", *DONE)
CONTAINER = "main"  # the step container of Argo's pods (beside "init" and "wait")
POD_NAME_FORMAT = "workflows.argoproj.io/pod-name-format"
MAX_POD_PREFIX = 253 - 10 - 1  # a name's length limit, less the hash's room and a '-'
_GROUP_NODES = ("DAG", "Steps", "StepGroup", "TaskGroup", "Retry")  # nodes that are no step
SECRET_RETRIES = 3  # updates of the datasource Secret that may meet a concurrent change (409)
# Deleting a job or Experiment with Foreground propagation: the garbage collector deletes its
# dependents first (the job's pods and Services; an Experiment's Trials, their Jobs and those
# Jobs' pods), each in turn in the foreground, and the object goes last, so that nothing is
# orphaned. The API's default depends on the kind (for batch/v1 Jobs, which Katib's trials
# run as, it is Orphan: their pods would keep running); Foreground does not.
PROPAGATION = "Foreground"

# The training operator's (v1.9) and mpi-operator's (v2beta1) pod labels, and Katib's (v0.19).
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
OPERATOR_LABEL = "training.kubeflow.org/operator-name"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"  # lower case: worker, ps, master
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"  # mpi-operator: launcher, worker
EXPERIMENT_LABEL = "katib.kubeflow.org/experiment"
TRIAL_LABEL = "katib.kubeflow.org/trial"
TRIAL_CONTAINER = "training-container"  # the primaryContainerName sqlml's trials use
# Katib's StdOut collector runs the trial container's command with "1>/var/log/katib/
# metrics.log 2>&1", so that container's log is empty; the sidecar its pod webhook injects
# (pkg/webhook/v1beta1/pod, v0.19) prints each line of that file through klog.
COLLECTOR_CONTAINER = "metrics-logger-and-collector"
_KLOG_INFO = re.compile(r"I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^ \]]+:\d+\] ")


@dataclass(frozen=True)
class Kind:
    """A kind of object a run's resource steps create: where it is served, and in which pods
    and container the training runs."""

    kind: str
    group: str
    version: str
    plural: str
    container: str | None  # the container its operator expects (None: the pod template's)
    operator: str | None  # its pods' training.kubeflow.org/operator-name (None: Katib trials)

    @property
    def resource(self) -> str:
        return f"{self.plural}.{self.group}"


_KINDS = (
    Kind("TFJob", "kubeflow.org", "v1", "tfjobs", "tensorflow", "tfjob-controller"),
    Kind("PyTorchJob", "kubeflow.org", "v1", "pytorchjobs", "pytorch", "pytorchjob-controller"),
    Kind("MPIJob", "kubeflow.org", "v2beta1", "mpijobs", None, "mpi-operator"),
    Kind("Experiment", "kubeflow.org", "v1beta1", "experiments", TRIAL_CONTAINER, None),
)


def kinds() -> dict[str, Kind]:
    """The kinds by name: Kubeflow's jobs, Katib's Experiment and the model families' own
    jobs (:meth:`~sqlml.models.Family.job_kind`, as XGBoost's XGBoostJob)."""
    from sqlml.models import families
    from sqlml.steps import kubeflow

    found = {kind.kind: kind for kind in _KINDS}
    for family in families().values():
        job = family.job_kind(kubeflow)
        if job is not None and job.plural is not None:
            group, _, version = job.api_version.partition("/")
            found[job.kind] = Kind(
                job.kind, group, version, job.plural, job.container, job.operator
            )
    return found


_REPLICA_ORDER = ("chief", "master", "launcher", "worker", "ps", "evaluator")


@dataclass(frozen=True)
class Node:
    """One step (one attempt of a task) of a workflow run, from its status."""

    id: str
    label: str
    phase: str
    message: str
    started: str | None
    finished: str | None
    pod: str | None

    @property
    def task(self) -> str:
        """The DAG task, i.e. the statement id: the label without a retry's ``(N)``."""
        return re.sub(r"\(\d+\)$", "", self.label)


def run(
    cluster: Cluster,
    manifest: Mapping[str, Any],
    secret: tuple[str, str],
    url: str | None,
    *,
    detach: bool = False,
    positions: Mapping[str, tuple[int, int]] | None = None,
    submitted: Callable[[Kube, str], None] | None = None,
) -> int:
    """On ``cluster``, put ``url`` into the Secret ``secret`` (name, key), submit
    ``manifest``, print the run's name (and tell ``submitted`` it) and, unless ``detach``,
    watch the run to its end; the exit status (0: Succeeded).

    A failed run raises a WorkflowError naming the failed step, placed at
    ``positions[step]`` (line, column) where given.
    """
    if url is not None and source_class(url).file_based:
        servers = [s.schemes[0] for s in registry.sources() if not s.file_based]
        raise KubernetesError(
            f"the pods of an Argo run cannot open the file database {parse_url(url)}",
            hint="give --datasource a database server the pods reach: "
            + " or ".join(f"{scheme}://..." for scheme in servers),
        )
    kube = Kube(cluster)
    put_secret(kube, *secret, url)
    name = submit(kube, manifest)
    print(name, flush=True)
    if submitted is not None:
        submitted(kube, name)
    _note(f"run {name} submitted in namespace {kube.namespace}")
    if detach:
        _note(f"follow it with: sqlml logs {name} --follow -n {kube.namespace}")
        return 0
    try:
        workflow = Watch(kube, name, report=True).run()
    except KeyboardInterrupt:
        _note(f"stopped watching; run {name} goes on (stop it: sqlml stop {name})")
        return 130
    phase = workflow.get("status", {}).get("phase")
    if phase == "Succeeded":
        return 0
    failed = [node for node in nodes(workflow) if node.phase in ("Failed", "Error")]
    if not failed:
        message = workflow.get("status", {}).get("message") or "no step failed"
        raise WorkflowError(f"run {name} ended {phase}: {message}")
    node = failed[-1]
    error = WorkflowError(
        f"run {name} failed: step {node.task} {node.phase.lower()}: {node.message}",
        hint=f"sqlml logs {name} --step {node.task} -n {kube.namespace}",
    )
    if node.task in (positions or {}):
        error.at(*positions[node.task])
    raise error


def put_secret(kube: Kube, name: str, key: str, url: str | None) -> None:
    """Create or update the Secret ``name`` with ``url`` under ``key``; without a URL, check
    that the Secret holds the key."""
    current = _read_secret(kube, name)
    data = (current.data or {}) if current is not None else {}
    if url is None:
        if key not in data:
            missing = "does not exist" if current is None else f"has no key {key!r}"
            raise KubernetesError(
                f"the Secret {name!r} that gives the pods the datasource URL {missing} "
                f"in namespace {kube.namespace!r}",
                hint="give --datasource URL (or set $SQLML_DATASOURCE) and sqlml writes it",
            )
        return
    value = base64.b64encode(url.encode()).decode()
    if data.get(key) == value:
        return
    if current is None:
        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "sqlml"}},
            "type": "Opaque",
            "data": {key: value},
        }
        with kube.call("create", "secrets", name, redact=(url, value)):
            kube.core.create_namespaced_secret(kube.namespace, body, _request_timeout=TIMEOUT)
        return
    for attempt in range(SECRET_RETRIES):
        current.data = {**data, key: value}
        try:
            with kube.call("update", "secrets", name, redact=(url, value)):
                kube.core.replace_namespaced_secret(
                    name, kube.namespace, current, _request_timeout=TIMEOUT
                )
            return
        except ApiError as error:  # changed since it was read: read it again, keep the change
            if error.status != 409 or attempt == SECRET_RETRIES - 1:
                raise
        current = _read_secret(kube, name)
        if current is None:
            return put_secret(kube, name, key, url)
        data = current.data or {}


def _read_secret(kube: Kube, name: str) -> Any:
    try:
        with kube.call("get", "secrets", name):
            return kube.core.read_namespaced_secret(name, kube.namespace, _request_timeout=TIMEOUT)
    except ApiError as error:
        if error.missing == "object":
            return None
        raise


def submit(kube: Kube, manifest: Mapping[str, Any]) -> str:
    """Create the Workflow ``manifest``; its generated name."""
    with _on_workflows(kube, "create"):
        created = kube.custom.create_namespaced_custom_object(
            GROUP, VERSION, kube.namespace, PLURAL, manifest, _request_timeout=TIMEOUT
        )
    return created["metadata"]["name"]


def get(kube: Kube, name: str) -> dict[str, Any]:
    """The Workflow ``name`` as JSON values."""
    with _on_workflows(kube, "get", name):
        return kube.custom.get_namespaced_custom_object(
            GROUP, VERSION, kube.namespace, PLURAL, name, _request_timeout=TIMEOUT
        )


def stop(kube: Kube, name: str, terminate: bool = False) -> None:
    """Stop the run ``name``: ask Argo to (``Stop`` still runs exit handlers, ``Terminate``
    not), then delete the Kubeflow jobs and Katib Experiments the run created that have not
    ended, with their pods. A run that has ended is left as it is. Reports on stderr."""
    workflow = get(kube, name)
    phase = (workflow.get("status") or {}).get("phase") or "Pending"
    if phase in DONE:
        _note(f"run {name} already ended: {phase}; nothing to stop")
        return
    shutdown = "Terminate" if terminate else "Stop"
    with _on_workflows(kube, "patch", name):
        kube.custom.patch_namespaced_custom_object(
            GROUP, VERSION, kube.namespace, PLURAL, name, {"spec": {"shutdown": shutdown}},
            _request_timeout=TIMEOUT,
        )  # fmt: skip
    how = "terminate (no exit handlers)" if terminate else "stop"
    _note(f"asked run {name} to {how}")
    # After the shutdown, so that Argo does not fail the resource steps for their deleted
    # objects before it stops them. A kind whose operator is not installed was never created.
    for found in owned(kube, workflow):
        if _ended(found.obj):
            continue
        try:
            with kube.call("delete", found.kind.resource, found.name):
                kube.custom.delete_namespaced_custom_object(
                    found.kind.group, found.kind.version, kube.namespace, found.kind.plural,
                    found.name, propagation_policy=PROPAGATION, _request_timeout=TIMEOUT,
                )  # fmt: skip
        except ApiError as error:
            if error.missing == "object":  # deleted meanwhile
                continue
            raise
        pods = "trials" if found.kind.operator is None else "pods"
        _note(
            f"stopped {found.kind.kind} {found.name} of step {found.step}: deleted with its {pods}"
        )


@dataclass(frozen=True)
class Owned:
    """A Kubeflow job or Katib Experiment a run created, and the step that created it."""

    kind: Kind
    name: str
    step: str
    obj: dict[str, Any]


def owned(kube: Kube, workflow: Mapping[str, Any], step: str | None = None) -> list[Owned]:
    """The Kubeflow jobs and Katib Experiments the run ``workflow`` created (only those of
    ``step``): the objects of the kinds its resource steps create whose ownerReferences
    name the Workflow's uid. A kind the cluster does not serve has none."""
    uid = workflow["metadata"].get("uid")
    creators, unknown = created_by(workflow)
    if step is not None:
        creators = [(task, manifest) for task, manifest in creators if task == step]
    known = kinds()
    created = {manifest["kind"] for _, manifest in creators if manifest["kind"] in known}
    if unknown and step is None:  # a manifest sqlml cannot read: look at every kind
        created = set(known)
    found = []
    for kind in sorted(created):
        spec = known[kind]
        try:
            with kube.call("list", spec.resource):
                listed = kube.custom.list_namespaced_custom_object(
                    spec.group, spec.version, kube.namespace, spec.plural,
                    _request_timeout=TIMEOUT,
                )  # fmt: skip
        except ApiError as error:
            if error.missing == "resource":  # the operator is not installed
                continue
            raise
        for obj in listed.get("items") or []:
            metadata = obj.get("metadata") or {}
            references = metadata.get("ownerReferences") or []
            if not uid or not any(ref.get("uid") == uid for ref in references):
                continue
            task = _creator(creators, obj)
            if step is None or task == step:
                found.append(Owned(spec, metadata["name"], task or "?", obj))
    return sorted(found, key=lambda item: (item.step, item.kind.kind, item.name))


def created_by(workflow: Mapping[str, Any]) -> tuple[list[tuple[str, dict[str, Any]]], bool]:
    """The (task, manifest) of each DAG task or step that runs a resource template, its
    manifest with the task's parameters and the Workflow's uid in (a training job's name
    ends with it); and whether some manifest could not be read."""
    templates = {t["name"]: t for t in workflow.get("spec", {}).get("templates") or []}
    uid = (workflow.get("metadata") or {}).get("uid")
    found: list[tuple[str, dict[str, Any]]] = []
    unknown = False
    for template in templates.values():
        calls = [
            *((template.get("dag") or {}).get("tasks") or []),
            *(call for group in template.get("steps") or [] for call in group or []),
        ]
        for call in calls:
            target = templates.get(call.get("template") or "")
            if not target or not target.get("resource"):
                continue
            parameters = {
                p["name"]: p.get("value", "")
                for p in (call.get("arguments") or {}).get("parameters") or []
            }
            text = re.sub(
                r"\{\{\s*inputs\.parameters\.([-\w]+)\s*\}\}",
                lambda m, given=parameters: given.get(m[1], m[0]),
                target["resource"].get("manifest") or "",
            )
            if uid:
                text = text.replace("{{workflow.uid}}", uid)
            try:
                manifest = yaml.safe_load(text)
            except yaml.YAMLError:
                manifest = None
            if isinstance(manifest, dict) and isinstance(manifest.get("kind"), str):
                found.append((call["name"], manifest))
            else:
                unknown = True
    return found, unknown


def _creator(creators: list[tuple[str, dict[str, Any]]], obj: Mapping[str, Any]) -> str | None:
    """The task whose manifest ``obj`` was created from: same kind and name, or generateName."""
    metadata = obj.get("metadata") or {}
    for task, manifest in creators:
        given = manifest.get("metadata") or {}
        if manifest["kind"] != obj.get("kind"):
            continue
        if given.get("name") == metadata.get("name") or (
            given.get("generateName") and given["generateName"] == metadata.get("generateName")
        ):
            return task
    return None


def _ended(obj: Mapping[str, Any]) -> bool:
    """A job (training operator, mpi-operator) or Experiment (Katib) that has succeeded or
    failed: its ``Succeeded`` or ``Failed`` condition is ``"True"``."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(
        c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True" for c in conditions
    )


@contextmanager
def _on_workflows(kube: Kube, verb: str, name: str | None = None) -> Iterator[None]:
    """:meth:`Kube.call` for Workflows, with a hint when the run does not exist."""
    try:
        with kube.call(verb, WORKFLOWS, name):
            yield
    except ApiError as error:
        if error.missing == "object":
            error.hint = (
                "give a run name that sqlml run --backend argo printed, and its --namespace"
            )
        raise


def status(kube: Kube, name: str) -> tuple[str, list[Node]]:
    """The run's phase (with Argo's message, if any) and its steps."""
    workflow = get(kube, name)
    state = workflow.get("status", {})
    phase = state.get("phase") or "Pending"
    return (f"{phase}: {state['message']}" if state.get("message") else phase), nodes(workflow)


def logs(kube: Kube, name: str, step: str | None = None, follow: bool = False) -> None:
    """Print the logs of the run's steps (only of ``step``), following them to the end: each
    step's ``main`` container, and the pods its Kubeflow job or Katib Experiment trains in."""
    workflow = get(kube, name)
    chosen = [node for node in nodes(workflow) if step in (None, node.task, node.label)]
    tasks = {
        call["name"]
        for template in workflow["spec"].get("templates", [])
        for call in [
            *(template.get("dag") or {}).get("tasks", []),
            *(call for group in template.get("steps") or [] for call in group or []),
        ]
    }
    if step is not None and not chosen and step not in tasks:
        steps = ", ".join(sorted(tasks)) or "none"
        raise KubernetesError(f"run {name} has no step {step!r}", hint=f"its steps: {steps}")
    if follow:
        Watch(kube, name, report=False, step=step).run()
        return
    creating = {task for task, _ in created_by(workflow)[0]}
    shown: set[str] = set()
    for node in chosen:
        if node.pod and node.phase in STARTED:
            try:
                for line in pod_log(kube, node.pod, follow=False):
                    _print_line(node.label if step is None else None, line)
            except ApiError as error:
                if error.missing != "object":
                    raise
                _note(f"no log of step {node.label}: its pod {node.pod} was deleted")
        if node.task in creating and node.task not in shown and node.phase in STARTED:
            shown.add(node.task)  # once for all attempts: they are found by the run's uid
            for source in sources(kube, owned(kube, workflow, node.task)):
                _print_source(kube, source)


@dataclass(frozen=True)
class Source:
    """A container whose log belongs to a step: a training job's replica, a Katib trial."""

    pod: str
    uid: str
    container: str
    label: str  # <step>/<replica-type>-<index>, <step>/<trial>
    scheduled: bool  # on a node: the kubelet can be asked for its log


def sources(kube: Kube, found: list[Owned]) -> list[Source]:
    """The containers the training of the jobs and Experiments ``found`` runs in, by the
    labels their operators give the pods (a job's replicas in order, then trials)."""
    result = []
    for item in found:
        if item.kind.operator is not None:
            selector = f"{JOB_NAME_LABEL}={item.name},{OPERATOR_LABEL}={item.kind.operator}"
        else:  # a trial's pods; the suggestion's pods have the experiment label, not this one
            selector = f"{EXPERIMENT_LABEL}={item.name},{TRIAL_LABEL}"
        pods = list_pods(kube, selector)
        if not pods:
            continue
        keyed = []
        for pod in pods:
            metadata, spec = pod.get("metadata") or {}, pod.get("spec") or {}
            labels = metadata.get("labels") or {}
            if item.kind.operator is None:
                part, order = labels.get(TRIAL_LABEL, ""), (0, 0)
                container = _trial_container(item.obj, spec)
            else:
                replica = labels.get(REPLICA_TYPE_LABEL) or labels.get(JOB_ROLE_LABEL) or "pod"
                index = labels.get(REPLICA_INDEX_LABEL)
                part = f"{replica}-{index}" if index is not None else replica
                rank = _REPLICA_ORDER.index(replica) if replica in _REPLICA_ORDER else 99
                order = (rank, int(index) if (index or "").isdigit() else 0)
                container = item.kind.container or _replica_container(item.obj, replica, spec)
            keyed.append(
                (
                    (order, metadata.get("creationTimestamp") or "", metadata.get("name", "")),
                    Source(
                        pod=metadata.get("name", ""),
                        uid=metadata.get("uid") or metadata.get("name", ""),
                        container=container,
                        label=f"{item.step}/{part}",
                        scheduled=bool(spec.get("nodeName")),
                    ),
                )
            )
        result.extend(source for _, source in sorted(keyed, key=lambda pair: pair[0]))
    return result


def _trial_container(experiment: Mapping[str, Any], pod_spec: Mapping[str, Any]) -> str:
    """The container of a trial's pod that shows its output: Katib's collector under the
    StdOut collector (where Katib injected it), else the trial's primary container."""
    spec = experiment.get("spec") or {}
    collector = ((spec.get("metricsCollectorSpec") or {}).get("collector") or {}).get("kind")
    names = {container.get("name") for container in pod_spec.get("containers") or []}
    if collector in (None, "StdOut") and COLLECTOR_CONTAINER in names:
        return COLLECTOR_CONTAINER
    template = spec.get("trialTemplate") or {}
    return template.get("primaryContainerName") or TRIAL_CONTAINER


def _replica_container(job: Mapping[str, Any], replica: str, pod_spec: Mapping[str, Any]) -> str:
    """The container of a replica whose operator takes the pod template's first (MPIJob)."""
    specs = (job.get("spec") or {}).get("mpiReplicaSpecs") or {}
    for role, replica_spec in specs.items():
        if role.lower() == replica:
            containers = (((replica_spec or {}).get("template") or {}).get("spec") or {}).get(
                "containers"
            ) or []
            if containers and containers[0].get("name"):
                return containers[0]["name"]
    containers = pod_spec.get("containers") or [{}]
    return containers[0].get("name") or CONTAINER


def list_pods(kube: Kube, selector: str) -> list[dict[str, Any]]:
    """The pods in the namespace that ``selector`` (a label selector) picks, as JSON values."""
    with kube.call("list", "pods"):
        response = kube.core.list_namespaced_pod(
            kube.namespace, label_selector=selector, _preload_content=False,
            _request_timeout=TIMEOUT,
        )  # fmt: skip
        return json.loads(response.data).get("items") or []


def _print_source(kube: Kube, source: Source) -> None:
    """Print the log of ``source`` as it is now, or why there is none."""
    if not source.scheduled:
        _note(f"no log of {source.label} yet: its pod {source.pod} waits for a node")
        return
    try:
        for line in pod_log(kube, source.pod, follow=False, container=source.container):
            _print_line(source.label, line)
    except ApiError as error:
        if error.missing == "object":
            _note(f"no log of {source.label}: its pod {source.pod} was deleted")
        elif _waiting(error):
            _note(f"no log of {source.label} yet: {error.detail}")
        else:
            raise


def _waiting(error: ApiError) -> bool:
    """The kubelet's answer for a container that has not started (yet): 400, "container
    "main" in pod "x" is waiting to start: ContainerCreating" (or PodInitializing...)."""
    return error.status == 400 and "is waiting to start" in error.detail


def nodes(workflow: Mapping[str, Any]) -> list[Node]:
    """The steps of a workflow run in the order they started (not yet started ones last)."""
    state = workflow.get("status") or {}
    found = state.get("nodes")
    if found is None and state.get("compressedNodes"):  # large runs: gzip'ed JSON, base64
        found = json.loads(gzip.decompress(base64.b64decode(state["compressedNodes"])))
    name = workflow["metadata"]["name"]
    steps = [
        Node(
            id=node["id"],
            label=node.get("displayName") or node["name"],
            phase=node.get("phase") or "Pending",
            message=node.get("message") or "",
            started=node.get("startedAt"),
            finished=node.get("finishedAt"),
            pod=pod_name(workflow, node) if node.get("type") == "Pod" else None,
        )
        for node in (found or {}).values()
        if node.get("type") not in _GROUP_NODES and node["id"] != name
    ]
    return sorted(steps, key=lambda node: (node.started or "~", node.label))


def pod_name(workflow: Mapping[str, Any], node: Mapping[str, Any]) -> str:
    """The name of a Pod node's pod, as Argo's controller derives it (pod names v1 or v2)."""
    name = workflow["metadata"]["name"]
    annotations = workflow["metadata"].get("annotations") or {}
    template = node.get("templateName")
    if annotations.get(POD_NAME_FORMAT) == "v1" or not template:
        return node["id"]
    prefix = name if ".inline" in node["name"] else f"{name}-{template}"
    return f"{prefix[:MAX_POD_PREFIX]}-{_fnv32a(node['name'].encode())}"


def _fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def pod_log(kube: Kube, pod: str, follow: bool, container: str = CONTAINER) -> Iterator[str]:
    """The lines of the log of ``container`` (the step container) of ``pod``, as they come
    when ``follow``; Katib's collector's lines without klog's header on its info lines (the
    trial's own output)."""
    with kube.call("get", "pods/log", pod):
        response = kube.core.read_namespaced_pod_log(
            pod, kube.namespace, container=container, follow=follow, _preload_content=False,
            _request_timeout=None if follow else TIMEOUT,
        )  # fmt: skip
        try:
            pending = b""
            shown = _unprefixed if container == COLLECTOR_CONTAINER else _decoded
            for chunk in response.stream(4096):
                *lines, pending = (pending + chunk).split(b"\n")
                yield from map(shown, lines)
            if pending:
                yield shown(pending)
        finally:
            response.release_conn()


def _decoded(line: bytes) -> str:
    return line.decode(errors="replace")


def _unprefixed(line: bytes) -> str:
    text = line.decode(errors="replace")
    return text[match.end() :] if (match := _KLOG_INFO.match(text)) else text


class Watch:
    """Read a run every :data:`POLL_SECONDS` until it ends, reporting its steps' phase
    changes (``report``) and streaming the logs of its steps (only of ``step``): their
    ``main`` containers, and the training pods of their jobs and Experiments as they start."""

    def __init__(self, kube: Kube, name: str, report: bool, step: str | None = None) -> None:
        self.kube, self.name, self.report, self.step = kube, name, report, step
        self.phases: dict[str, str] = {}
        self.streams: dict[Any, threading.Thread] = {}
        self.settled: set[str] = set()  # resource steps whose training pods are all known
        self.noted: set[str] = set()
        self.finished = threading.Event()

    def run(self) -> dict[str, Any]:
        """Watch until the run ends; the finished Workflow, once its logs are printed."""
        try:
            workflow = self._poll()
        finally:
            self.finished.set()  # log streams still waiting for a container give up
        deadline = time.monotonic() + LOG_GRACE_SECONDS
        for thread in list(self.streams.values()):
            thread.join(max(0.0, deadline - time.monotonic()))
        return workflow

    def _poll(self) -> dict[str, Any]:
        failures = 0
        while True:
            try:
                workflow = get(self.kube, self.name)
            except ApiError as error:  # the API server may be briefly away in a long run
                failures += 1
                if failures > READ_RETRIES or (error.status or 500) < 500:
                    raise
                _note(f"cannot read run {self.name} ({error.message}); trying again")
                time.sleep(POLL_SECONDS)
                continue
            failures = 0
            phase = workflow.get("status", {}).get("phase") or "Pending"
            creating = {task for task, _ in created_by(workflow)[0]}
            for node in nodes(workflow):
                self._changed(node.id, f"step {node.label}", node.phase, node.message)
                chosen = self.step in (None, node.task, node.label)
                if node.pod and node.phase in STARTED and node.id not in self.streams and chosen:
                    self._stream(
                        node.id, node.pod, CONTAINER, node.label if self.step is None else None
                    )
                if chosen and node.task in creating and node.phase in STARTED:
                    self._training(workflow, node)
            self._changed(self.name, f"run {self.name}", phase, "")
            if phase in DONE:
                return workflow
            time.sleep(POLL_SECONDS)

    def _changed(self, key: str, what: str, phase: str, message: str) -> None:
        if self.report and self.phases.get(key) != phase:
            _note(f"{what}: {phase}" + (f" ({message})" if message else ""))
        self.phases[key] = phase

    def _training(self, workflow: Mapping[str, Any], node: Node) -> None:
        """Stream the logs of the training pods of ``node``'s jobs or Experiment that have
        started since the last look; after the step ended, look one last time."""
        if node.task in self.settled:
            return
        if node.phase in DONE:
            self.settled.add(node.task)
        try:
            found = sources(self.kube, owned(self.kube, workflow, node.task))
        except ApiError as error:  # logs only: say why once, and watch on
            if error.message not in self.noted:
                self.noted.add(error.message)
                hint = f" ({error.hint})" if error.hint else ""
                _note(f"no logs of step {node.task}'s training pods: {error.message}{hint}")
            return
        for source in found:
            key = (source.uid, source.container)
            if source.scheduled and key not in self.streams:
                self._stream(key, source.pod, source.container, source.label)

    def _stream(self, key: Any, pod: str, container: str, label: str | None) -> None:
        thread = threading.Thread(target=self._follow, args=(pod, container, label), daemon=True)
        self.streams[key] = thread
        thread.start()

    def _follow(self, pod: str, container: str, label: str | None) -> None:
        """Stream the container's log; retry while it has not started (the kubelet's 400)."""
        while True:
            last = self.finished.is_set()
            try:
                for line in pod_log(self.kube, pod, follow=not last, container=container):
                    _print_line(label, line)
                return
            except ApiError as error:
                if not _waiting(error) or last:
                    _note(f"no log of pod {pod}: {error.message}")
                    return
            self.finished.wait(POLL_SECONDS)


_output = threading.Lock()


def _print_line(label: str | None, line: str) -> None:
    with _output:
        print(f"[{label}] {line}" if label else line, flush=True)


def _note(text: str) -> None:
    with _output:
        print(text, file=sys.stderr, flush=True)
