"""A loopback stand-in for the Kubernetes API server, for tests. It is NOT a cluster.

An ``http.server`` on 127.0.0.1 (a random port, served by a thread) that records every request
(method, path, query, headers, body) and answers as the API server would, from what the test
put in it:

- Secrets, and the custom objects of the operators sqlml drives (Workflows; TFJobs,
  PyTorchJobs, XGBoostJobs and MPIJobs; Katib Experiments) under
  ``/apis/<group>/<version>/namespaces/<ns>/<plural>[/<name>]``: create (``generateName``
  completed as the API server does, ``uid``, ``resourceVersion``, ``creationTimestamp``; 409
  AlreadyExists on a taken name), get, list (with equality and existence label selectors),
  merge patch, replace (409 Conflict on a stale ``metadata.resourceVersion``) and delete. A
  plural whose operator is not installed (not in ``served``) answers ``404 page not found``.
- Every object created or replaced (also the result of a patch) is checked with
  ``tests.k8s_validation.validate``; violations answer 422 Invalid with a Status listing them,
  as the API server does for an object its schema or webhooks refuse.
- Scripted statuses: ``script(plural, [status, ...])`` hands them out one per GET of an object
  of that plural, the last one repeated (``statuses`` is the script of Workflows).
- Pods (``pods``): listed with label selectors; their containers' logs (``logs``, keyed by
  pod and container), honouring the ``container`` query parameter as the API server and the
  kubelet do (400 for a container the pod does not have, or one waiting to start; an empty
  log for a pod not yet scheduled), chunked as a stream when ``follow=true``.
- Scripted failures (``fail``).

No controller runs here unless a test plugs one in (``controllers``: models of the operators
written from their source, in tests/controllers/: the training operator's, Katib's);
otherwise no Argo controller moves a Workflow, no operator creates pods or updates a job, no
garbage collector deletes dependents.
A test that wants an object the controllers would create (a job created by Argo's resource
step, a replica pod) adds it with ``create`` or ``add_pod``, as those controllers would.
"""

from __future__ import annotations

import copy
import json
import random
import re
import threading
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "standin-token"

# The API server's generateName (k8s.io/apiserver, storage/names): the prefix cut to 58
# characters, then 5 characters of utilrand's alphabet (no vowels, no 0, 1 or 3).
MAX_NAME = 63
SUFFIX_LENGTH = 5
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

# plural -> (group, kind, versions a CRD of that name may serve)
RESOURCES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "workflows": ("argoproj.io", "Workflow", ("v1alpha1",)),
    "tfjobs": ("kubeflow.org", "TFJob", ("v1",)),
    "pytorchjobs": ("kubeflow.org", "PyTorchJob", ("v1",)),
    "xgboostjobs": ("kubeflow.org", "XGBoostJob", ("v1",)),
    "mpijobs": ("kubeflow.org", "MPIJob", ("v2beta1", "v1")),  # mpi-operator / training operator
    "experiments": ("kubeflow.org", "Experiment", ("v1beta1",)),
}
# What a cluster with Argo Workflows v4, the training operator v1.9, mpi-operator (v2beta1)
# and Katib serves: plural -> version.
EVERY_OPERATOR = {
    "workflows": "v1alpha1",
    "tfjobs": "v1",
    "pytorchjobs": "v1",
    "xgboostjobs": "v1",
    "mpijobs": "v2beta1",
    "experiments": "v1beta1",
}

_SECRET = re.compile(r"/api/v1/namespaces/([^/]+)/secrets(?:/([^/]+))?$")
_CUSTOM = re.compile(r"/apis/([^/]+)/([^/]+)/namespaces/([^/]+)/([^/]+)(?:/([^/]+))?$")
_PODS = re.compile(r"/api/v1/namespaces/([^/]+)/pods$")
_LOG = re.compile(r"/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$")
_SELECTOR = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<absent>[^\s!=,()]+)"
    r"|(?P<key>[^\s!=,()]+)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[^\s,()]*)"
    r"|\s+(?P<set>in|notin)\s*\((?P<values>[^)]*)\))?)\s*$"
)


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names in lower case
    body: Any


@dataclass
class Failure:
    method: str
    path: str  # a regular expression searched in the request path
    status: int
    body: Any  # a Status object (JSON) or plain text
    times: int | None = None  # None: every time


@dataclass
class Pod:
    """A pod as a controller would have created it. No container runs: ``waiting`` log reads
    find its containers still starting (the kubelet answers 400), then they have started;
    ``-1``: they never start. An unscheduled pod (``node`` None) has an empty log."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    containers: tuple[str, ...] = ("main",)
    init_containers: tuple[str, ...] = ()
    waiting: int = 0
    node: str | None = "node-1"
    namespace: str = "ml"
    phase: str = "Running"
    owner: dict[str, Any] | None = None  # an ownerReference
    created: str = "2026-01-01T00:00:00Z"
    appears: int = 0  # pod lists it would be in that do not show it yet (not created yet)

    def to_json(self) -> dict[str, Any]:
        started = self.waiting == 0 and self.node is not None
        state = (
            {"running": {"startedAt": self.created}}
            if started
            else {"waiting": {"reason": "ContainerCreating"}}
        )
        metadata: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, self.name)),
            "labels": dict(self.labels),
            "creationTimestamp": self.created,
        }
        if self.owner:
            metadata["ownerReferences"] = [self.owner]
        spec: dict[str, Any] = {
            "containers": [{"name": c, "image": "img"} for c in self.containers]
        }
        if self.init_containers:
            spec["initContainers"] = [{"name": c, "image": "img"} for c in self.init_containers]
        if self.node:
            spec["nodeName"] = self.node
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": spec,
            "status": {
                "phase": self.phase if started else "Pending",
                "containerStatuses": [
                    {"name": c, "ready": started, "restartCount": 0, "image": "img", "state": state}
                    for c in self.containers
                ],
            },
        }


@dataclass
class KubeStandin:
    """The scripted API server; ``with KubeStandin() as api:`` serves it."""

    namespaces: set[str] = field(default_factory=lambda: {"default", "ml"})
    served: dict[str, str] = field(default_factory=lambda: dict(EVERY_OPERATOR))
    scripts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # plural -> statuses
    objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)  # by name
    logs: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (pod, container)
    requests: list[Request] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # tracebacks of the stand-in's own failures
    suffixes: list[str] = field(default_factory=list)  # generateName suffixes to hand out first
    seed: int = 0  # of the random suffixes after those
    # Controllers' reconciles (tests/controllers/): called with (plural, stored object) before
    # a GET of the object answers, they may change its status and the pods.
    controllers: list[Callable[[str, dict[str, Any]], None]] = field(default_factory=list)
    _reads: dict[str, int] = field(default_factory=dict)
    _version: int = 100
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        for plural in (*RESOURCES, "secrets"):
            self.objects.setdefault(plural, {})

    # -- what tests set and read

    @property
    def secrets(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Secrets by (namespace, name)."""
        return self.objects["secrets"]

    @property
    def workflows(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Workflows by (namespace, name)."""
        return self.objects["workflows"]

    @property
    def statuses(self) -> list[dict[str, Any]]:
        """The scripted statuses of Workflows."""
        return self.scripts.setdefault("workflows", [])

    @statuses.setter
    def statuses(self, statuses: list[dict[str, Any]]) -> None:
        self.script("workflows", statuses)

    @property
    def argo_installed(self) -> bool:
        return "workflows" in self.served

    @argo_installed.setter
    def argo_installed(self, installed: bool) -> None:
        if installed:
            self.served["workflows"] = EVERY_OPERATOR["workflows"]
        else:
            self.served.pop("workflows", None)

    def script(self, plural: str, statuses: list[dict[str, Any]]) -> None:
        """Hand out ``statuses`` one per GET of an object of ``plural``, the last repeated."""
        self.scripts[plural] = list(statuses)
        self._reads[plural] = 0

    def create(self, plural: str, obj: dict[str, Any], namespace: str = "ml") -> dict[str, Any]:
        """Create ``obj`` as a client would (a controller, Argo's executor): the stored object,
        or AssertionError with the API server's answer if it refuses."""
        status, answer = self._create(plural, namespace, copy.deepcopy(obj))
        assert status == 201, (status, answer)
        return answer

    def add_pod(self, pod: Pod, logs: dict[str, list[str]] | None = None) -> Pod:
        """Add ``pod`` with its containers' ``logs`` (container -> lines)."""
        self.pods[pod.name] = pod
        for container, lines in (logs or {}).items():
            self.logs[pod.name, container] = lines
        return pod

    def fail(self, method: str, path: str, status: int, body: Any = None, times: int | None = None):
        """Answer requests matching ``method`` and ``path`` (a regex) with ``status``."""
        if body is None:
            body = {"kind": "Status", "status": "Failure", "code": status, "message": "scripted"}
        self.failures.append(Failure(method, path, status, body, times))

    def requests_to(self, method: str, pattern: str) -> list[Request]:
        """The requests of ``method`` whose path matches ``pattern`` (searched)."""
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]

    def calls(self) -> list[tuple[str, str]]:
        """(method, path) of every request, in order."""
        return [(r.method, r.path) for r in self.requests]

    # -- serving

    def __enter__(self) -> KubeStandin:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                standin._serve(self)

            do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def kubeconfig(self, path: Path) -> Path:
        """Write a kubeconfig whose current context is this server (namespace ``ml``), with
        a bearer token."""
        context = {"cluster": "standin", "user": "tester", "namespace": "ml"}
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "standin", "cluster": {"server": self.url}}],
            "users": [{"name": "tester", "user": {"token": TOKEN}}],
            "contexts": [{"name": "standin", "context": context}],
            "current-context": "standin",
        }
        path.write_text(json.dumps(config))
        return path

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        request = Request(
            handler.command,
            parts.path,
            parse_qs(parts.query),
            {key.lower(): value for key, value in handler.headers.items()},
            json.loads(raw) if raw else None,
        )
        with self._lock:
            self.requests.append(request)
            for failure in self.failures:
                if failure.method == request.method and re.search(failure.path, request.path):
                    if failure.times is not None:
                        if failure.times == 0:
                            continue
                        failure.times -= 1
                    return _send(handler, failure.status, failure.body)
            try:
                status, body = self._answer(request)
            except Exception as error:  # a bug of the stand-in or of a test: say it, loudly
                self.errors.append(traceback.format_exc())
                status, body = 500, _status(500, "InternalError", f"stand-in: {error!r}")
        if status == -1:  # a followed log: streamed outside the lock
            _stream(handler, body)
        else:
            _send(handler, status, body)

    def _answer(self, r: Request) -> tuple[int, Any]:
        if match := _SECRET.match(r.path):
            return self._secret(r, *match.groups())
        if match := _CUSTOM.match(r.path):
            group, version, namespace, plural, name = match.groups()
            known = RESOURCES.get(plural)
            if known and known[0] == group and self.served.get(plural) == version:
                return self._custom(r, plural, namespace, name)
        if match := _PODS.match(r.path):
            return self._list_pods(r, match.group(1))
        if match := _LOG.match(r.path):
            return self._log(r, *match.groups())
        return 404, "404 page not found\n"  # what a real server says of an unserved path

    # -- objects

    def _secret(self, r: Request, namespace: str, name: str | None) -> tuple[int, Any]:
        if r.method == "POST":
            return self._create("secrets", namespace, r.body)
        if name is None:
            return 405, _status(405, "MethodNotAllowed", "the server does not allow this method")
        return self._one(r, "secrets", namespace, name)

    def _custom(self, r: Request, plural: str, namespace: str, name: str | None) -> tuple[int, Any]:
        if name is None:
            if r.method == "POST":
                return self._create(plural, namespace, r.body, self.served[plural])
            if r.method == "GET":
                return self._list(r, plural, namespace)
            return 405, _status(405, "MethodNotAllowed", "the server does not allow this method")
        return self._one(r, plural, namespace, name)

    def _create(
        self, plural: str, namespace: str, body: Any, version: str | None = None
    ) -> tuple[int, Any]:
        if namespace not in self.namespaces:
            return _not_found("namespaces", namespace)
        if not isinstance(body, dict):
            return 400, _status(400, "BadRequest", "the body of the request was not an object")
        expected = _api_version(plural, version or self.served.get(plural, "v1"))
        if body.get("apiVersion") != expected:
            return 400, _status(
                400,
                "BadRequest",
                f"the API version in the data ({body.get('apiVersion')}) does not match the "
                f"expected API version ({expected})",
            )
        metadata = dict(body.get("metadata") or {})
        if not metadata.get("name"):
            if not metadata.get("generateName"):
                return _invalid(
                    plural, "", ["metadata.name: Required value: name or generateName is required"]
                )
            metadata["name"] = self.generate_name(metadata["generateName"])
        name = metadata["name"]
        if metadata.get("namespace", namespace) != namespace:
            return 400, _status(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the "
                "request",
            )
        if (namespace, name) in self.objects[plural]:
            group = RESOURCES[plural][0] if plural in RESOURCES else ""
            return 409, _status(
                409,
                "AlreadyExists",
                f'{_qualified(plural)} "{name}" already exists',
                {"name": name, "group": group, "kind": plural},
            )
        metadata.update(
            namespace=namespace,
            uid=str(uuid.UUID(int=self._random.getrandbits(128), version=4)),
            resourceVersion=self._next_version(),
            creationTimestamp=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
        if plural in RESOURCES:
            metadata["generation"] = 1
        stored = {**body, "metadata": metadata}
        if violations := _violations(stored):
            return _invalid(plural, name, violations)
        self.objects[plural][namespace, name] = stored
        return 201, stored

    def generate_name(self, prefix: str) -> str:
        """A name for ``generateName: prefix`` as the API server makes it."""
        if self.suffixes:
            suffix = self.suffixes.pop(0)
            assert len(suffix) == SUFFIX_LENGTH and set(suffix) <= set(SUFFIX_ALPHABET), suffix
        else:
            suffix = "".join(self._random.choice(SUFFIX_ALPHABET) for _ in range(SUFFIX_LENGTH))
        return prefix[: MAX_NAME - SUFFIX_LENGTH] + suffix

    def _one(self, r: Request, plural: str, namespace: str, name: str) -> tuple[int, Any]:
        store = self.objects[plural]
        if (namespace, name) not in store:
            return _not_found(plural, name, RESOURCES[plural][0] if plural in RESOURCES else "")
        current = store[namespace, name]
        if r.method == "GET":
            for reconcile in self.controllers:
                reconcile(plural, current)
            if self.scripts.get(plural):
                statuses = self.scripts[plural]
                reads = self._reads.get(plural, 0)
                current["status"] = copy.deepcopy(statuses[min(reads, len(statuses) - 1)])
                self._reads[plural] = reads + 1
            return self._checked(current)
        if r.method == "DELETE":
            options = r.body or {}
            policy = (r.query.get("propagationPolicy") or [options.get("propagationPolicy")])[0]
            del store[namespace, name]
            gone = copy.deepcopy(current)
            gone["metadata"]["deletionTimestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            if policy == "Foreground":
                gone["metadata"]["finalizers"] = ["foregroundDeletion"]
            return 200, gone
        if r.method == "PUT":
            replacement = r.body
        elif r.method == "PATCH":
            kind = r.headers.get("content-type", "").split(";")[0].strip()
            if kind != "application/merge-patch+json" and not (
                kind == "application/strategic-merge-patch+json" and plural == "secrets"
            ):
                message = (
                    "the body of the request was in an unknown format - accepted media types "
                    "include: application/merge-patch+json"
                )
                return 415, _status(415, "UnsupportedMediaType", message)
            replacement = _merge_patch(copy.deepcopy(current), r.body)
        else:
            return 405, _status(405, "MethodNotAllowed", "the server does not allow this method")
        given = (replacement.get("metadata") or {}).get("resourceVersion")
        if given and given != current["metadata"]["resourceVersion"]:
            return 409, _status(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {_qualified(plural)} "{name}": the object has '
                "been modified; please apply your changes to the latest version and try again",
                {"name": name, "group": RESOURCES.get(plural, ("",))[0], "kind": plural},
            )
        kept = {
            key: current["metadata"][key]
            for key in ("name", "namespace", "uid", "creationTimestamp", "generation")
            if key in current["metadata"]
        }
        metadata = {**(replacement.get("metadata") or {}), **kept}
        metadata["resourceVersion"] = self._next_version()
        stored = {**replacement, "metadata": metadata}
        if violations := _violations(stored):
            return _invalid(plural, name, violations)
        store[namespace, name] = stored
        return 200, stored

    def _list(self, r: Request, plural: str, namespace: str) -> tuple[int, Any]:
        try:
            selector = _selector(r.query.get("labelSelector", [""])[0])
        except ValueError as error:
            return 400, _status(400, "BadRequest", f"unable to parse requirement: {error}")
        items = [
            obj
            for (ns, _), obj in sorted(self.objects[plural].items())
            if ns == namespace and selector((obj.get("metadata") or {}).get("labels") or {})
        ]
        for obj in items:
            if (problem := self._checked(obj))[0] != 200:
                return problem
        group, kind, _ = RESOURCES[plural]
        return 200, {
            "apiVersion": f"{group}/{self.served[plural]}",
            "kind": f"{kind}List",
            "metadata": {"resourceVersion": str(self._version)},
            "items": items,
        }

    def _checked(self, obj: dict[str, Any]) -> tuple[int, Any]:
        """``obj`` to send, unless its status (the test's) is not one its controller's schema
        allows: then the test fails (``errors``) and the client gets a 500."""
        if problems := _status_violations(obj):
            message = f"stand-in: a status no controller would write: {problems}"
            self.errors.append(message)
            return 500, _status(500, "InternalError", message)
        return 200, obj

    def _next_version(self) -> str:
        self._version += 1
        return str(self._version)

    # -- pods and logs

    def _list_pods(self, r: Request, namespace: str) -> tuple[int, Any]:
        if namespace not in self.namespaces:
            return _not_found("namespaces", namespace)
        try:
            selector = _selector(r.query.get("labelSelector", [""])[0])
        except ValueError as error:
            return 400, _status(400, "BadRequest", f"unable to parse requirement: {error}")
        items = []
        for pod in sorted(self.pods.values(), key=lambda pod: pod.name):
            if pod.namespace != namespace or not selector(pod.labels):
                continue
            if pod.appears > 0:
                pod.appears -= 1
                continue
            items.append(pod.to_json())
        return 200, {
            "apiVersion": "v1",
            "kind": "PodList",
            "metadata": {"resourceVersion": str(self._version)},
            "items": items,
        }

    def _log(self, r: Request, namespace: str, name: str) -> tuple[int, Any]:
        pod = self.pods.get(name)
        if pod is None or pod.namespace != namespace or pod.appears > 0:
            return _not_found("pods", name)
        container = r.query.get("container", [""])[0]
        if not container:  # the API server's validateContainer
            if len(pod.containers) != 1:
                choices = f"[{' '.join(pod.containers)}]"
                if pod.init_containers:
                    choices += f" or one of the init containers: [{' '.join(pod.init_containers)}]"
                return 400, _status(
                    400,
                    "BadRequest",
                    f"a container name must be specified for pod {name}, choose one of: {choices}",
                )
            container = pod.containers[0]
        if container not in (*pod.containers, *pod.init_containers):
            message = f"container {container} is not valid for pod {name}"
            return 400, _status(400, "BadRequest", message)
        if pod.node is None:  # no kubelet to ask: the API server answers an empty log
            return 200, ""
        if pod.waiting:  # the kubelet's validateContainerLogStatus
            if pod.waiting > 0:
                pod.waiting -= 1
            message = (
                f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
            )
            return 400, _status(400, "BadRequest", message)
        lines = self.logs.get((name, container), [])
        if r.query.get("follow", [""])[0].lower() == "true":  # the client sends True
            return -1, list(lines)
        return 200, "".join(f"{line}\n" for line in lines)


def _api_version(plural: str, version: str) -> str:
    return "v1" if plural == "secrets" else f"{RESOURCES[plural][0]}/{version}"


def _qualified(plural: str) -> str:
    return f"{plural}.{RESOURCES[plural][0]}" if plural in RESOURCES else plural


def _violations(obj: dict[str, Any]) -> list[str]:
    """``tests.k8s_validation.validate(obj)``: what the API server's schemas and the
    controllers' webhooks refuse in the object, its ``status`` aside (controllers write it,
    through the status subresource). A kind the validator has no schema for (a Secret) is
    taken as it is."""
    try:
        from tests.k8s_validation import validate
    except ModuleNotFoundError as error:
        if error.name not in ("tests.k8s_validation", "tests"):
            raise
        return []
    unknown = f"no schema for {obj.get('apiVersion')} {obj.get('kind')}"
    violations = list(validate({key: value for key, value in obj.items() if key != "status"}))
    return [] if violations == [unknown] and obj.get("kind") == "Secret" else violations


def _status_violations(obj: dict[str, Any]) -> list[str]:
    """What the schema says against the object's ``status``: a test's scripted status must be
    one its controller could have written."""
    try:
        from tests.k8s_validation import validate
    except ModuleNotFoundError as error:
        if error.name not in ("tests.k8s_validation", "tests"):
            raise
        return []
    if "status" not in obj:
        return []
    kind = f"{obj.get('kind')} "
    return [v for v in validate(obj) if v.removeprefix(kind).startswith("status")]


def _invalid(plural: str, name: str, violations: list[str]) -> tuple[int, Any]:
    """The API server's 422 for an object its validation refuses (``NewInvalid``): the
    violations ("<Kind> <path>: <message>") as causes with their fields."""
    group, kind = (RESOURCES[plural][:2]) if plural in RESOURCES else ("", "Secret")
    qualified = f"{kind}.{group}" if group else kind
    causes = []
    for violation in violations:
        where, _, what = violation.removeprefix(f"{kind} ").partition(": ")
        causes.append(
            {"reason": "FieldValueInvalid", "message": what, "field": where}
            if what and " " not in where
            else {"reason": "FieldValueInvalid", "message": violation}
        )
    said = [v.removeprefix(f"{kind} ") for v in violations]
    listed = said[0] if len(said) == 1 else f"[{', '.join(said)}]"
    details = {"name": name, "group": group, "kind": kind, "causes": causes}
    return 422, _status(422, "Invalid", f'{qualified} "{name}" is invalid: {listed}', details)


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = _merge_patch(target.get(key), value)
    return target


def _selector(text: str):
    """A label selector (equality, set-based and existence requirements) as a predicate."""
    requirements = []
    for part in re.split(r",(?![^(]*\))", text) if text.strip() else []:
        match = _SELECTOR.fullmatch(part)
        if not match:
            raise ValueError(repr(part))
        requirements.append(match.groupdict())

    def matches(labels: dict[str, str]) -> bool:
        for req in requirements:
            if req["absent"]:
                ok = req["absent"] not in labels
            elif req["op"] in ("=", "=="):
                ok = labels.get(req["key"]) == req["value"]
            elif req["op"] == "!=":
                ok = labels.get(req["key"]) != req["value"]
            elif req["set"]:
                values = {value.strip() for value in req["values"].split(",")}
                ok = (labels.get(req["key"]) in values) == (req["set"] == "in") and (
                    req["set"] == "notin" or req["key"] in labels
                )
            else:
                ok = req["key"] in labels
            if not ok:
                return False
        return True

    return matches


def _status(code: int, reason: str, message: str, details: Any = None) -> dict[str, Any]:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        status["details"] = details
    return status


def _not_found(kind: str, name: str | None, group: str = "") -> tuple[int, Any]:
    details = {"name": name, "kind": kind, **({"group": group} if group else {})}
    qualified = f"{kind}.{group}" if group else kind
    return 404, _status(404, "NotFound", f'{qualified} "{name}" not found', details)


def _send(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
    text = body if isinstance(body, str) else json.dumps(body)
    data = text.encode()
    handler.send_response(status)
    handler.send_header(
        "Content-Type", "text/plain" if isinstance(body, str) else "application/json"
    )
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _stream(handler: BaseHTTPRequestHandler, lines: list[str]) -> None:
    """A followed log: its lines, then the end (as when the container exits)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    for line in lines:  # in two chunks each, as a line may come cut
        data = f"{line}\n".encode()
        for chunk in filter(None, (data[: len(data) // 2], data[len(data) // 2 :])):
            handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            handler.wfile.flush()
    handler.wfile.write(b"0\r\n\r\n")
