"""The state of a local run and of its steps, from the run record in its datasource."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlml.backends import STATUS_COLUMNS
from sqlml.backends.local.record import RunRecord
from sqlml.datasources import ResultSet, connect


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
    return state, ResultSet(list(STATUS_COLUMNS), rows)


def _time(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
