"""A loopback stand-in for the Kubernetes API server, for tests. It is NOT a cluster.

An ``http.server`` on 127.0.0.1 (a random port, served by a thread) that records every request
(method, path, query, headers, body) and answers from a script: it stores the Secrets and
Workflows it is sent, hands out the scripted workflow statuses one per read, serves scripted
pod logs (chunked, as a stream, when ``follow=true``), applies merge patches, and returns
scripted failures. No pod runs and no Argo controller exists: the statuses are the test's.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "standin-token"
_SECRET = re.compile(r"/api/v1/namespaces/([^/]+)/secrets(?:/([^/]+))?$")
_WORKFLOW = re.compile(r"/apis/argoproj.io/v1alpha1/namespaces/([^/]+)/workflows(?:/([^/]+))?$")
_LOG = re.compile(r"/api/v1/namespaces/([^/]+)/pods/([^/]+)/log$")


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
class KubeStandin:
    """The scripted API server; ``with KubeStandin() as api:`` serves it."""

    namespaces: set[str] = field(default_factory=lambda: {"default", "ml"})
    argo_installed: bool = True
    statuses: list[dict[str, Any]] = field(default_factory=list)  # handed out in turn
    logs: dict[str, list[str]] = field(default_factory=dict)  # pod name -> its lines
    secrets: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    workflows: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    _reads: int = 0

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

    def fail(self, method: str, path: str, status: int, body: Any = None, times: int | None = None):
        """Answer requests matching ``method`` and ``path`` (a regex) with ``status``."""
        if body is None:
            body = {"kind": "Status", "status": "Failure", "code": status, "message": "scripted"}
        self.failures.append(Failure(method, path, status, body, times))

    def requests_to(self, method: str, pattern: str) -> list[Request]:
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]

    # -- serving

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
        self.requests.append(request)
        for failure in self.failures:
            if failure.method == request.method and re.search(failure.path, request.path):
                if failure.times is not None:
                    if failure.times == 0:
                        continue
                    failure.times -= 1
                return _send(handler, failure.status, failure.body)
        status, body = self._answer(request, handler)
        if status:
            _send(handler, status, body)

    def _answer(self, r: Request, handler: BaseHTTPRequestHandler) -> tuple[int, Any]:
        if match := _SECRET.match(r.path):
            return self._secret(r, *match.groups())
        if (match := _WORKFLOW.match(r.path)) and self.argo_installed:
            return self._workflow(r, *match.groups())
        if match := _LOG.match(r.path):
            lines = self.logs.get(match.group(2))
            if lines is None:
                return _not_found("pods", match.group(2))
            if r.query.get("follow", [""])[0].lower() == "true":  # the client sends True
                _stream(handler, lines)
                return 0, None
            return 200, "".join(f"{line}\n" for line in lines)
        return 404, "404 page not found\n"  # what a real server says of an unserved path

    def _secret(self, r: Request, namespace: str, name: str | None) -> tuple[int, Any]:
        if r.method == "POST":
            if namespace not in self.namespaces:
                return _not_found("namespaces", namespace)
            stored = {**r.body, "metadata": {**r.body["metadata"], "resourceVersion": "1"}}
            self.secrets[namespace, stored["metadata"]["name"]] = stored
            return 201, stored
        if (namespace, name) not in self.secrets:
            return _not_found("secrets", name)
        if r.method == "PUT":
            self.secrets[namespace, name] = r.body
        return 200, self.secrets[namespace, name]

    def _workflow(self, r: Request, namespace: str, name: str | None) -> tuple[int, Any]:
        if r.method == "POST":
            if namespace not in self.namespaces:
                return _not_found("namespaces", namespace)
            name = r.body["metadata"]["generateName"] + f"x{len(self.workflows) + 1:04d}"
            stored = {**r.body, "metadata": {**r.body["metadata"], "name": name}}
            self.workflows[namespace, name] = stored
            return 201, stored
        if (namespace, name) not in self.workflows:
            return _not_found("workflows", name, "argoproj.io")
        workflow = self.workflows[namespace, name]
        if r.method == "PATCH":
            workflow["spec"] = {**workflow["spec"], **r.body["spec"]}
            return 200, workflow
        if self.statuses:
            workflow["status"] = self.statuses[min(self._reads, len(self.statuses) - 1)]
            self._reads += 1
        return 200, workflow


def _not_found(kind: str, name: str | None, group: str = "") -> tuple[int, Any]:
    details = {"name": name, "kind": kind, **({"group": group} if group else {})}
    return 404, {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": f'{kind} "{name}" not found',
        "reason": "NotFound",
        "details": details,
        "code": 404,
    }


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
