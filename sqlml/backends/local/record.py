"""The run record: every run and the state of each of its steps, in the datasource.

``sqlml_runs`` holds one row per run, ``sqlml_run_steps`` one row per step of a run: its
content hash (statement or definition plus the fingerprints of what it reads), state,
attempts, start and end times (seconds since the epoch), error and outputs (JSON).

A write to the record that fails is tried again for a few seconds, so that a database server
restarting during a run still gets its steps' states once it is back. A run's own row is
written with its first step's (one commit, one round trip fewer: ``sqlml -e`` runs one step).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sqlml.datasources import Datasource
from sqlml.errors import DatasourceError
from sqlml.tables import RUN_STEPS, RUNS
from sqlml.workflow.core import WorkflowError

STEPS = RUN_STEPS

# Step states. Done states let dependent steps start; failed ones stop the run.
RUNNING, SUCCEEDED, CACHED, SKIPPED = "running", "succeeded", "cached", "skipped"
FAILED, OMITTED = "failed", "omitted"  # omitted: not run because the run failed first
CANCELLED = "cancelled"  # stopped (Ctrl-C) before it committed anything
DONE_STATES = (SUCCEEDED, CACHED, SKIPPED)
WRITE_DELAYS = (0.5, 1.0, 2.0, 4.0)  # seconds before each new try of a failed record write


@dataclass(frozen=True)
class StepRecord:
    """One step of a run as recorded."""

    step: str
    content_hash: str
    state: str
    attempts: int
    started_at: float | None
    ended_at: float | None
    error: str | None
    outputs: dict[str, str]


class RunRecord:
    """Reads and writes the record tables through one datasource connection."""

    def __init__(self, datasource: Datasource) -> None:
        self._ds = datasource
        self._started: list[tuple[str, list[Any]]] = []  # the run's INSERT, until the next write
        self._runs = datasource.quote([RUNS])
        self._steps = datasource.quote([STEPS])
        key, text, real, integer = (datasource.types[k] for k in ("key", "text", "float", "int"))
        datasource.create_tables(
            [
                f"CREATE TABLE IF NOT EXISTS {self._runs} (run_id {key} NOT NULL, "
                f"workflow {text}, resumed_from {key}, state {key}, started_at {real}, "
                f"ended_at {real}, PRIMARY KEY (run_id))",
                f"CREATE TABLE IF NOT EXISTS {self._steps} (run_id {key} NOT NULL, "
                f"step {key} NOT NULL, content_hash {key}, state {key}, attempts {integer}, "
                f"started_at {real}, ended_at {real}, error {text}, outputs {text}, "
                "PRIMARY KEY (run_id, step))",
            ]
        )

    def start_run(
        self, run_id: str, workflow: str, resumed_from: str | None, started_at: float
    ) -> None:
        """Record the run's start: written with the next write, in its transaction (the first
        step starts at once, or the run ends)."""
        self._started = [self._insertion(RUNS, run_id=run_id, workflow=workflow,
            resumed_from=resumed_from, state=RUNNING, started_at=started_at)]  # fmt: skip

    def end_run(self, run_id: str, state: str, ended_at: float) -> None:
        self._write(
            f"UPDATE {self._runs} SET state = {self._ds.param}, ended_at = {self._ds.param} "
            f"WHERE run_id = {self._ds.param}",
            [state, ended_at, run_id],
        )

    def start_step(self, run_id: str, step: str, content_hash: str, started_at: float) -> None:
        self._insert(STEPS, run_id=run_id, step=step, content_hash=content_hash,
                     state=RUNNING, attempts=0, started_at=started_at)  # fmt: skip

    def end_step(self, run_id: str, step: StepRecord, new: bool = False) -> None:
        """Write ``step``'s final state; ``new``: it has no row yet (never started)."""
        values = {
            "content_hash": step.content_hash,
            "state": step.state,
            "attempts": step.attempts,
            "started_at": step.started_at,
            "ended_at": step.ended_at,
            "error": step.error,
            "outputs": json.dumps(step.outputs, sort_keys=True),
        }
        if new:
            self._insert(STEPS, run_id=run_id, step=step.step, **values)
            return
        p = self._ds.param
        assignments = ", ".join(f"{self._ds.quote([column])} = {p}" for column in values)
        self._write(
            f"UPDATE {self._steps} SET {assignments} WHERE run_id = {p} AND step = {p}",
            [*values.values(), run_id, step.step],
        )

    def state(self, run_id: str) -> str:
        """The state of ``run_id``; a WorkflowError if there is no such run."""
        p = self._ds.param
        found = self._ds.execute(f"SELECT state FROM {self._runs} WHERE run_id = {p}", [run_id])
        if not found or not found.rows:
            raise WorkflowError(
                f"there is no run {run_id!r} in this datasource's run record ({RUNS})",
                hint="give the run id printed when the run started, with the same --datasource",
            )
        return found.rows[0][0]

    def steps(self, run_id: str) -> dict[str, StepRecord]:
        """The recorded steps of ``run_id``; a WorkflowError if there is no such run."""
        self.state(run_id)
        return recorded_steps(self._ds, run_id)

    def _insert(self, table: str, **values: Any) -> None:
        self._write(*self._insertion(table, **values))

    def _insertion(self, table: str, **values: Any) -> tuple[str, list[Any]]:
        """The INSERT of a row of ``values`` into ``table``, and its parameters."""
        columns = ", ".join(self._ds.quote([column]) for column in values)
        marks = ", ".join([self._ds.param] * len(values))
        sql = f"INSERT INTO {self._ds.quote([table])} ({columns}) VALUES ({marks})"
        return sql, list(values.values())

    def _write(self, sql: str, params: list[Any]) -> None:
        """Run a write (after the run's start, if not written yet: both in one transaction),
        tried again after each of :data:`WRITE_DELAYS` while it fails."""
        writes, self._started = [*self._started, (sql, params)], []
        for delay in WRITE_DELAYS:
            try:
                self._run(writes)
                return
            except DatasourceError:
                time.sleep(delay)
        self._run(writes)

    def _run(self, writes: list[tuple[str, list[Any]]]) -> None:
        if len(writes) == 1:
            self._ds.execute(*writes[0])
            return
        with self._ds.transaction():
            for sql, params in writes:
                self._ds.execute(sql, params)


def recorded_steps(datasource: Datasource, run_id: str) -> dict[str, StepRecord]:
    """The steps of ``run_id`` in ``datasource``'s run record, which must exist (read only:
    :class:`RunRecord` creates the tables)."""
    rows = datasource.execute(
        "SELECT step, content_hash, state, attempts, started_at, ended_at, error, outputs "
        f"FROM {datasource.quote([STEPS])} WHERE run_id = {datasource.param}",
        [run_id],
    )
    return {
        row[0]: StepRecord(*row[:7], json.loads(row[7] or "{}"))
        for row in (rows.rows if rows else [])
    }
