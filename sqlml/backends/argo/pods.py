"""What a compiled Workflow's pods may use and how long a run's objects stay: the defaults of
the Workflow's ``parallelism``, pod garbage collection, time to live and deadline (Argo
v4.1.2's ``WorkflowSpec``), and the resource requests and limits of every pod, which a
statement may change for its own pods (``train.cpu``, ``predict.memory``...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlml.datasources import Datasource, source_of_dialect
from sqlml.errors import KubernetesError
from sqlml.semantics import quantities

POD_GC_STRATEGIES = ("OnPodSuccess", "OnPodCompletion", "OnWorkflowSuccess", "OnWorkflowCompletion")
DEFAULT_POD_GC = "OnPodSuccess"
POD_GC_DELAY = "1h"  # a succeeded step's pod (and its log) stays this long
DEFAULT_TTL = 7 * 24 * 3600  # seconds a finished Workflow (and its failed pods) stays
DEFAULT_RUN_DEADLINE = 3 * 24 * 3600  # seconds a run may take
DEFAULT_REQUESTS = {"cpu": "500m", "memory": "1Gi"}
DEFAULT_LIMITS = {"memory": "4Gi"}
# A statement's attributes for its own pods, <kind>.<name> (train.cpu, predict.memory...):
# name -> (requests or limits, resource).
ATTRIBUTES = {
    "cpu": ("requests", "cpu"),
    "memory": ("requests", "memory"),
    "cpu_limit": ("limits", "cpu"),
    "memory_limit": ("limits", "memory"),
}
KINDS = ("train", "predict", "evaluate", "explain", "run", "optimize")


def parallelism(dialect: str) -> int:
    """The steps a run of a program in ``dialect`` runs at once by default, each with a
    database connection: what its datasource declares (``steps_at_once``)."""
    return (source_of_dialect(dialect) or Datasource).steps_at_once


def statement_resources(
    requests: Mapping[str, str],
    limits: Mapping[str, str],
    attributes: Mapping[str, Any],
    where: str,
    position: tuple[int | None, int | None] = (None, None),
) -> tuple[dict[str, str], dict[str, str]]:
    """The requests and limits of a statement's pods: the program's, changed by the
    statement's ``attributes`` (:func:`own_resources`); ``position``: its line and column."""
    own: dict[str, dict[str, str]] = {"requests": {}, "limits": {}}
    for name, value in own_resources(attributes).items():
        kind, resource = ATTRIBUTES[name]
        own[kind][resource] = value
    return merged(requests, limits, own["requests"], own["limits"], where, position)


def own_resources(attributes: Mapping[str, Any]) -> dict[str, str]:
    """The statement's own ``<kind>.cpu``... attributes that are set, by name (``cpu``...)."""
    own = {}
    for key, value in attributes.items():
        kind, _, name = key.partition(".")
        if kind in KINDS and name in ATTRIBUTES and value is not None:
            own[name] = value
    return own


def merged(
    requests: Mapping[str, str],
    limits: Mapping[str, str],
    own_requests: Mapping[str, str],
    own_limits: Mapping[str, str],
    where: str,
    position: tuple[int | None, int | None] = (None, None),
) -> tuple[dict[str, str], dict[str, str]]:
    """``requests`` and ``limits`` changed by ``own_requests`` and ``own_limits``. A limit
    below a request that ``own_requests`` raises is raised to it; a limit ``own_limits``
    sets below its request is an error."""
    requests = {**requests, **own_requests}
    limits = {**limits, **own_limits}
    for resource, request in requests.items():
        limit = limits.get(resource)
        if limit is None or quantities.quantity(request) <= quantities.quantity(limit):
            continue
        if resource in own_limits or resource not in own_requests:
            raise KubernetesError(
                f"{where}: the {resource} request {request} is above its limit {limit}",
                line=position[0],
                column=position[1],
                hint=f"give a {resource} limit at least as large as the request",
            )
        limits[resource] = request
    return requests, limits
