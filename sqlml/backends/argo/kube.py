"""A connection to a Kubernetes API server, whose failures become sqlml errors with hints.

The official ``kubernetes`` client (the ``kubernetes`` extra) is imported only here, and only
when a command talks to a cluster.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlml.errors import KubernetesError

DEFAULT_KUBECONFIG = "~/.kube/config"
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
TIMEOUT = (10, 60)  # seconds to connect and to read an answer (log streams: no read limit)


@dataclass(frozen=True)
class Cluster:
    """Which cluster and namespace: a kubeconfig file (default: ``$KUBECONFIG``, else
    ``~/.kube/config``, else the pod's in-cluster service account), its context, a namespace
    (default: the context's, else ``default``)."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None


# What serves each custom resource sqlml uses: named when a cluster does not serve it.
OPERATORS = {
    "workflows.argoproj.io": "Argo Workflows",
    "tfjobs.kubeflow.org": "the Kubeflow training operator",
    "pytorchjobs.kubeflow.org": "the Kubeflow training operator",
    "xgboostjobs.kubeflow.org": "the Kubeflow training operator",
    "mpijobs.kubeflow.org": "mpi-operator (kubeflow.org/v2beta1)",
    "experiments.kubeflow.org": "Katib",
}


class ApiError(KubernetesError):
    """The API server could not be reached or refused a request.

    ``status``: the HTTP status; ``missing``: on 404, what is missing (``object``,
    ``namespace`` or ``resource``, the last when the API itself is not served); ``reason``
    and ``detail``: the reason and message of the server's Status, if it sent one (with the
    ``redact`` texts of :meth:`Kube.call` masked).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        missing: str | None = None,
        hint: str | None = None,
        reason: str = "",
        detail: str = "",
    ) -> None:
        super().__init__(message, hint=hint)
        self.status, self.missing = status, missing
        self.reason, self.detail = reason, detail


class Kube:
    """The core and custom-object APIs of one cluster, and the namespace to work in."""

    def __init__(self, cluster: Cluster) -> None:
        client = _client()
        api_client, namespace = _connect(cluster)
        self.namespace = cluster.namespace or namespace
        self.server = api_client.configuration.host
        self.core = client.CoreV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)

    @contextmanager
    def call(
        self, verb: str, resource: str, name: str | None = None, redact: Sequence[str] = ()
    ) -> Iterator[None]:
        """Turn the failures of requests made inside into :class:`ApiError`.

        ``verb`` and ``resource`` (RBAC's words, e.g. ``create`` and ``secrets``) name the
        request in messages; ``redact``: texts never to repeat from the server's answer.
        """
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            yield
        except ApiException as error:
            raise self._refused(error, verb, resource, name, redact) from None
        except (HTTPError, OSError) as error:
            reason = re.sub(r"<[^>]*>: ", "", str(getattr(error, "reason", None) or error))
            raise ApiError(
                f"cannot reach the Kubernetes API server at {self.server}: {reason}",
                hint="check that the cluster is running and that --kubeconfig/--context "
                "(or $KUBECONFIG) name it",
            ) from None

    def _refused(
        self, error: Any, verb: str, resource: str, name: str | None, redact: Sequence[str]
    ) -> ApiError:
        status = error.status
        if not status:  # the client's own failure, e.g. TLS
            reason = error.reason
            return ApiError(f"cannot reach the Kubernetes API server at {self.server}: {reason}")
        where = f"in namespace {self.namespace!r}"
        rbac = f"the RBAC verb {verb!r} on {resource!r} {where}"
        if status == 401:
            return ApiError(
                f"the Kubernetes API server at {self.server} did not accept your credentials",
                status=status,
                hint="renew them (log in to the cluster again) or pick another --context",
            )
        if status == 403:
            return ApiError(
                f"you may not {verb} {resource} {where}",
                status=status,
                hint=f"ask for a Role granting {rbac} (docs/kubernetes.md lists what sqlml needs)",
            )
        body = _status_body(error.body)
        details = body.get("details") or {}
        if status == 404 and details.get("kind") == "namespaces":
            return ApiError(
                f"namespace {self.namespace!r} does not exist",
                status=status,
                missing="namespace",
                hint=f"create it (kubectl create namespace {self.namespace}) or give --namespace",
            )
        if status == 404 and not details and "." in resource.split("/")[0]:
            # No Status at all, "404 page not found": the API server serves no such resource.
            operator = OPERATORS.get(resource, f"the operator that defines {resource}")
            return ApiError(
                f"the cluster at {self.server} does not serve {resource}: "
                f"{operator} is not installed",
                status=status,
                missing="resource",
                hint=f"install {operator.split(' (')[0]} (docs/kubernetes.md, section 1)",
            )
        if status == 404:
            return ApiError(
                f"there is no {resource} {name!r} {where}", status=status, missing="object"
            )
        message = _one_line(body.get("message") or error.reason or "", redact)
        reason = body.get("reason") or ""
        if status == 422:  # the object's schema, or an admission webhook, refused it
            causes = [
                f"{cause['field']}: {cause.get('message', '')}" if cause.get("field") else
                cause.get("message", "")
                for cause in details.get("causes") or []
            ]  # fmt: skip
            what = _one_line("; ".join(filter(None, causes)), redact) or message
            return ApiError(
                f"the Kubernetes API server refused the {resource} "
                f"{details.get('name') or name or ''!r} {where} as invalid: {what}",
                status=status,
                reason=reason,
                detail=message,
                hint="fix the option that set that field (--memory, --cpu, --image...); if "
                "none did, check that the cluster runs the versions docs/kubernetes.md "
                "(section 1) names, and if it does, report this as a bug of sqlml",
            )
        return ApiError(
            f"the Kubernetes API server refused to {verb} {resource} {where}: "
            f"{status} {message}".rstrip(),
            status=status,
            reason=reason,
            detail=message,
        )


def _client() -> Any:
    try:
        from kubernetes import client
    except ImportError:
        raise KubernetesError(
            "talking to Kubernetes needs the official kubernetes client, which is not installed",
            hint="pip install 'sqlml[kubernetes]'",
        ) from None
    return client


def _connect(cluster: Cluster) -> tuple[Any, str]:
    """An API client for ``cluster`` and the namespace its configuration defaults to."""
    import yaml
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    path = cluster.kubeconfig or os.environ.get("KUBECONFIG")
    if path or Path(DEFAULT_KUBECONFIG).expanduser().exists():
        path = path or DEFAULT_KUBECONFIG
        try:
            config.load_kube_config(
                config_file=path,
                context=cluster.context,
                client_configuration=configuration,
                persist_config=False,
            )
            contexts, active = config.list_kube_config_contexts(path)
        except (ConfigException, OSError, yaml.YAMLError) as error:
            raise KubernetesError(
                f"cannot use the Kubernetes configuration {path}: {error}",
                hint="give a valid --kubeconfig PATH and --context NAME (kubectl config "
                "get-contexts lists them)",
            ) from None
        chosen = next((c for c in contexts if c["name"] == cluster.context), active)
        namespace = (chosen or {}).get("context", {}).get("namespace") or "default"
    elif os.environ.get("KUBERNETES_SERVICE_HOST"):
        try:
            config.load_incluster_config(client_configuration=configuration)
        except ConfigException as error:
            raise KubernetesError(f"cannot use this pod's service account: {error}") from None
        account = SERVICE_ACCOUNT_NAMESPACE
        namespace = (account.read_text().strip() if account.exists() else "") or "default"
    else:
        raise KubernetesError(
            "no Kubernetes configuration: no --kubeconfig, no $KUBECONFIG, no "
            f"{DEFAULT_KUBECONFIG}, and not running in a pod",
            hint="give --kubeconfig PATH, or set up access with your cluster's tools "
            "(they write ~/.kube/config)",
        )
    return client.ApiClient(configuration), namespace


def _one_line(text: str, redact: Sequence[str] = ()) -> str:
    """``text`` on one line, with each of ``redact`` replaced by ``***``."""
    for secret in redact:
        if secret:
            text = text.replace(secret, "***")
    return " ".join(text.split())


def _status_body(body: Any) -> dict[str, Any]:
    """The Kubernetes ``Status`` object of an error answer, or {} if it is none."""
    try:
        status = json.loads(body or "")
    except (TypeError, ValueError):
        return {}
    return status if isinstance(status, dict) else {}
