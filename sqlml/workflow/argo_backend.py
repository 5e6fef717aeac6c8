"""Run workflows on Argo Workflows: submit one, watch it, stream its logs, stop it.

The datasource URL travels only in a Secret (``data``, base64), which the workflow's pods read
through ``secretKeyRef``; it is never printed, logged or put into the Workflow. Progress goes
to stderr, the run's name and its steps' logs to stdout.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlml.errors import KubernetesError
from sqlml.runtime.datasource import parse_url
from sqlml.workflow.core import WorkflowError
from sqlml.workflow.kube import TIMEOUT, ApiError, Cluster, Kube

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
) -> int:
    """On ``cluster``, put ``url`` into the Secret ``secret`` (name, key), submit
    ``manifest``, print the run's name and, unless ``detach``, watch the run to its end;
    the exit status (0: Succeeded).

    A failed run raises a WorkflowError naming the failed step, placed at
    ``positions[step]`` (line, column) where given.
    """
    if url is not None and not parse_url(url).host:
        raise KubernetesError(
            f"the pods of an Argo run cannot open the file database {parse_url(url)}",
            hint="give --datasource a database server the pods reach: mysql://... or "
            "postgresql://...",
        )
    kube = Kube(cluster)
    put_secret(kube, *secret, url)
    name = submit(kube, manifest)
    print(name, flush=True)
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
    current.data = {**data, key: value}
    with kube.call("update", "secrets", name, redact=(url, value)):
        kube.core.replace_namespaced_secret(name, kube.namespace, current, _request_timeout=TIMEOUT)


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
    """Ask Argo to stop the run ``name``: ``Stop`` still runs exit handlers, ``Terminate`` not."""
    shutdown = "Terminate" if terminate else "Stop"
    with _on_workflows(kube, "patch", name):
        kube.custom.patch_namespaced_custom_object(
            GROUP, VERSION, kube.namespace, PLURAL, name, {"spec": {"shutdown": shutdown}},
            _request_timeout=TIMEOUT,
        )  # fmt: skip


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
    """Print the logs of the run's steps (only of ``step``), following them to the end."""
    workflow = get(kube, name)
    chosen = [node for node in nodes(workflow) if step in (None, node.task, node.label)]
    tasks = {
        task["name"]
        for template in workflow["spec"].get("templates", [])
        for task in (template.get("dag") or {}).get("tasks", [])
    }
    if step is not None and not chosen and step not in tasks:
        steps = ", ".join(sorted(tasks)) or "none"
        raise KubernetesError(f"run {name} has no step {step!r}", hint=f"its steps: {steps}")
    if follow:
        Watch(kube, name, report=False, step=step).run()
        return
    for node in chosen:
        if node.pod and node.phase in STARTED:
            try:
                for line in pod_log(kube, node.pod, follow=False):
                    _print_line(node.label if step is None else None, line)
            except ApiError as error:
                if error.missing != "object":
                    raise
                _note(f"no log of step {node.label}: its pod {node.pod} was deleted")


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


def pod_log(kube: Kube, pod: str, follow: bool) -> Iterator[str]:
    """The lines of the step container's log of ``pod``, as they come when ``follow``."""
    with kube.call("get", "pods/log", pod):
        response = kube.core.read_namespaced_pod_log(
            pod, kube.namespace, container=CONTAINER, follow=follow, _preload_content=False,
            _request_timeout=None if follow else TIMEOUT,
        )  # fmt: skip
        try:
            pending = b""
            for chunk in response.stream(4096):
                *lines, pending = (pending + chunk).split(b"\n")
                yield from (line.decode(errors="replace") for line in lines)
            if pending:
                yield pending.decode(errors="replace")
        finally:
            response.release_conn()


class Watch:
    """Read a run every :data:`POLL_SECONDS` until it ends, reporting its steps' phase
    changes (``report``) and streaming the logs of its steps (only of ``step``)."""

    def __init__(self, kube: Kube, name: str, report: bool, step: str | None = None) -> None:
        self.kube, self.name, self.report, self.step = kube, name, report, step
        self.phases: dict[str, str] = {}
        self.streams: dict[str, threading.Thread] = {}
        self.finished = threading.Event()

    def run(self) -> dict[str, Any]:
        """Watch until the run ends; the finished Workflow, once its logs are printed."""
        try:
            workflow = self._poll()
        finally:
            self.finished.set()  # log streams still waiting for a container give up
        deadline = time.monotonic() + LOG_GRACE_SECONDS
        for thread in self.streams.values():
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
            for node in nodes(workflow):
                self._changed(node.id, f"step {node.label}", node.phase, node.message)
                if (
                    node.pod
                    and node.phase in STARTED
                    and node.id not in self.streams
                    and self.step in (None, node.task, node.label)
                ):
                    self._stream(node)
            self._changed(self.name, f"run {self.name}", phase, "")
            if phase in DONE:
                return workflow
            time.sleep(POLL_SECONDS)

    def _changed(self, key: str, what: str, phase: str, message: str) -> None:
        if self.report and self.phases.get(key) != phase:
            _note(f"{what}: {phase}" + (f" ({message})" if message else ""))
        self.phases[key] = phase

    def _stream(self, node: Node) -> None:
        label = node.label if self.step is None else None
        thread = threading.Thread(target=self._follow, args=(node.pod, label), daemon=True)
        self.streams[node.id] = thread
        thread.start()

    def _follow(self, pod: str, label: str | None) -> None:
        """Stream the pod's log; retry while its container has not started (HTTP 400)."""
        while True:
            last = self.finished.is_set()
            try:
                for line in pod_log(self.kube, pod, follow=not last):
                    _print_line(label, line)
                return
            except ApiError as error:
                if error.status != 400 or last:
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
