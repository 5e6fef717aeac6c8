"""What a run tells as it goes: its record in the datasource (and a recorded run's states file
beside its logs), notes on the progress stream, and each statement step's outcome, passed on
in the workflow's order."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import IO

from sqlml.backends.local import record as rec
from sqlml.backends.local.run_file import StatesFile, describe, write_run_file
from sqlml.local_files import reason, warn_once
from sqlml.runtime.outcome import Outcome
from sqlml.workflow.core import Step, Workflow

StatementDone = Callable[[Step, Outcome], None]


class Unrecorded:
    """A run record that keeps nothing, for runs no one resumes or looks up: a shell entry,
    a notebook cell (they cost no writes, and a user who may only read can query)."""

    def start_run(self, run_id: str, workflow: str, resumed: str | None, at: float) -> None:
        """Nothing is kept."""

    def end_run(self, run_id: str, state: str, at: float) -> None:
        """Nothing is kept."""

    def start_step(self, run_id: str, step: str, content_hash: str, at: float) -> None:
        """Nothing is kept."""

    def end_step(self, run_id: str, step: rec.StepRecord, new: bool = False) -> None:
        """Nothing is kept."""


class RunLog:
    """The run ``run_id`` of ``workflow`` (resuming the run ``resumed``): it writes ``record``,
    prints notes to ``progress`` and calls ``on_done`` (each if given)."""

    def __init__(
        self,
        record: rec.RunRecord | Unrecorded,
        run_id: str,
        workflow: Workflow,
        resumed: str | None,
        progress: IO[str] | None,
        on_done: StatementDone | None,
    ) -> None:
        self.run_id = run_id
        self.states: dict[str, str] = {}  # each ended step's
        self.records: dict[str, rec.StepRecord] = {}  # as written to the run record
        self._record, self._workflow, self._resumed = record, workflow, resumed
        self._progress, self._on_done = progress, on_done
        self._outcomes: dict[str, Outcome] = {}
        self._reported = 0  # the workflow's steps whose outcomes were passed on
        self._states: StatesFile | None = None  # a recorded run's, in its folder

    def start(self, run_dir: Path, source: str | None, base_dir: Path) -> None:
        """Make ``run_dir`` for the step logs, record the run's start and say where it is
        (once its folder and its record can be read: whoever reads the run id finds the run);
        a recorded run's folder also gets its description (of the program ``source``, whose
        relative paths start from ``base_dir``) and its states file."""
        resumed = f" (resuming {self._resumed})" if self._resumed else ""
        steps = len(self._workflow.steps)
        try:
            run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # no logs, but the run record in the database keeps all
            logs, problem = "no logs", error
        else:
            logs, problem = f"logs in {run_dir}", None
            if isinstance(self._record, rec.RunRecord):
                with suppress(OSError):
                    description = describe(
                        self.run_id, self._workflow, self._resumed, source, base_dir
                    )
                    write_run_file(run_dir, description)
                self._states = StatesFile(run_dir)
        self._record.start_run(self.run_id, self._workflow.name, self._resumed, time.time())
        self.note(f"run {self.run_id}{resumed}: {steps} steps, {logs}")
        if problem is not None:
            warn_once("logs", f"step logs are not kept: {run_dir} ({reason(problem)})")

    def start_step(self, name: str, content_hash: str, started_at: float) -> None:
        if self._states is not None:  # first: a record write may wait for its server
            self._states.write({"step": name, "state": rec.RUNNING, "started_at": started_at})
        self._record.start_step(self.run_id, name, content_hash, started_at)

    def end_step(
        self, step: rec.StepRecord, outcome: Outcome | None = None, new: bool = False
    ) -> None:
        """Record ``step``'s end (``new``: it never started) and pass on the outcomes of the
        statements that ended in order."""
        if outcome is not None:
            self._outcomes[step.step] = outcome
        self.records[step.step] = step
        if self._states is not None:
            self._states.write(
                {"step": step.step, "state": step.state, "attempts": step.attempts,
                 "started_at": step.started_at, "ended_at": step.ended_at, "error": step.error}
            )  # fmt: skip
        self._record.end_step(self.run_id, step, new)
        self.states[step.step] = step.state
        if step.state == rec.CACHED:
            self.note(f"step {step.step} skipped: unchanged since run {self._resumed}")
        self._report()

    def end(self, state: str) -> None:
        ended_at = time.time()
        if self._states is not None:
            self._states.write({"run": state, "ended_at": ended_at})
            self._states.close()
        self._record.end_run(self.run_id, state, ended_at)

    def note(self, message: str) -> None:
        if self._progress is not None:
            print(f"sqlml: {message}", file=self._progress, flush=True)

    def _report(self) -> None:
        steps = self._workflow.steps
        while self._reported < len(steps) and steps[self._reported].name in self.states:
            step = steps[self._reported]
            self._reported += 1
            if step.name in self._outcomes and self._on_done is not None:
                self._on_done(step, self._outcomes[step.name])
