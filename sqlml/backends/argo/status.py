"""The state of an Argo run and of its steps, read from its Workflow."""

from __future__ import annotations

from sqlml.backends import STATUS_COLUMNS
from sqlml.backends.argo.kube import Cluster, Kube
from sqlml.backends.argo.submit import status
from sqlml.datasources import ResultSet


def argo_status(cluster: Cluster, name: str) -> tuple[str, ResultSet]:
    """An Argo run's phase and steps (their attempts, when retried), read from its Workflow."""
    phase, nodes = status(Kube(cluster), name)
    rows = [(n.label, n.phase, n.started, n.finished, n.message) for n in nodes]
    return phase, ResultSet(list(STATUS_COLUMNS), rows)
