"""The state of a run and of its steps, from the local run record or from Argo."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlml.runtime.datasource import ResultSet, connect
from sqlml.workflow.kube import Cluster, Kube
from sqlml.workflow.record import RunRecord

COLUMNS = ["step", "state", "started", "finished", "message"]


def local_status(datasource_url: str | None, run_id: str) -> tuple[str, ResultSet]:
    """A local run's state and steps, read from the run record in its datasource."""
    datasource = connect(datasource_url)
    try:
        record = RunRecord(datasource)
        state, steps = record.state(run_id), record.steps(run_id)
    finally:
        datasource.close()
    rows = [
        (s.step, s.state, _time(s.started_at), _time(s.ended_at), s.error or "")
        for s in sorted(steps.values(), key=lambda s: (s.started_at or float("inf"), s.step))
    ]
    return state, ResultSet(COLUMNS, rows)


def argo_status(cluster: Cluster, name: str) -> tuple[str, ResultSet]:
    """An Argo run's phase and steps (their attempts, when retried), read from its Workflow."""
    from sqlml.workflow.argo_backend import status

    phase, nodes = status(Kube(cluster), name)
    rows = [(n.label, n.phase, n.started, n.finished, n.message) for n in nodes]
    return phase, ResultSet(COLUMNS, rows)


def _time(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
