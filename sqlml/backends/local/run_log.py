"""What a run tells as it goes: its record in the datasource (and a recorded run's states file
beside its logs), notes on the progress stream, and how each statement ended (its outcome
and its verdict), passed on in the workflow's order."""

from __future__ import annotations

import time
from contextlib import suppress
from pathlib import Path
from typing import IO

from sqlml.backends.local import record as rec
from sqlml.backends.local.run_file import StatesFile, describe, write_run_file
from sqlml.backends.local.verdicts import verdict
from sqlml.backends.reports import StatementDone, StatementEnd, Verdict
from sqlml.errors import SqlmlError
from sqlml.local_files import reason, warn_once
from sqlml.runtime.outcome import Outcome, model_of
from sqlml.workflow.core import Step, Workflow


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
    prints notes to ``progress`` and calls ``on_done`` (each if given) with the end of each
    statement, in the workflow's order.

    A statement's end is passed on with the step that runs it; the steps named
    ``STEP-...`` that such a step waits for (a search's trials) are parts of its statement.
    """

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
        self.errors: dict[str, SqlmlError] = {}  # each failed or cancelled step's
        self.verdicts: dict[str, Verdict] = {}  # by the name of the step of each statement
        self._record, self._workflow, self._resumed = record, workflow, resumed
        self._progress, self._on_done = progress, on_done
        self._outcomes: dict[str, Outcome] = {}
        self._parts = _parts(workflow.steps)
        self._reported = 0  # the workflow's steps whose ends were passed on
        self._states: StatesFile | None = None  # a recorded run's, in its folder

    def start(self, run_dir: Path, source: str | None, base_dir: Path, datasource: str) -> None:
        """Make ``run_dir`` for the step logs, record the run's start and say where it is
        (once its folder and its record can be read: whoever reads the run id finds the run);
        a recorded run's folder also gets its description (of the program ``source``, whose
        relative paths start from ``base_dir``, run on the datasource of identity
        ``datasource``) and its states file."""
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
                        self.run_id, self._workflow, self._resumed, source, base_dir, datasource
                    )
                    write_run_file(run_dir, description)
                self._states = StatesFile(run_dir)
        self._record.start_run(self.run_id, self._workflow.name, self._resumed, time.time())
        self.note(f"run {self.run_id}{resumed}: {steps} step{'' if steps == 1 else 's'}, {logs}")
        if problem is not None:
            warn_once("logs", f"step logs are not kept: {run_dir} ({reason(problem)})")

    def start_step(self, name: str, content_hash: str, started_at: float) -> None:
        if self._states is not None:  # first: a record write may wait for its server
            self._states.write({"step": name, "state": rec.RUNNING, "started_at": started_at})
        self._record.start_step(self.run_id, name, content_hash, started_at)

    def end_step(
        self,
        step: rec.StepRecord,
        outcome: Outcome | None = None,
        new: bool = False,
        error: SqlmlError | None = None,
    ) -> None:
        """Record ``step``'s end (``new``: it never started; ``error``: why it failed) and
        pass on the ends of the statements that ended in order."""
        if outcome is not None:
            self._outcomes[step.step] = outcome
        if error is not None:
            self.errors[step.step] = error
        self.records[step.step] = step
        if self._states is not None:
            entry = {
                "step": step.step, "state": step.state, "attempts": step.attempts,
                "started_at": step.started_at, "ended_at": step.ended_at, "error": step.error,
            }  # fmt: skip
            model = model_of(step.outputs)  # the version it trained or measured (or kept)
            self._states.write(entry if model is None else {**entry, "model": model})
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
            if step.name not in self._parts:  # a part: told with its statement's step
                continue
            records = [self.records[name] for name in [*self._parts[step.name], step.name]]
            self.verdicts[step.name] = judged = verdict(step, records, self.errors)
            if self._on_done is not None:
                outcome = self._outcomes.get(step.name)
                self._on_done(StatementEnd(self.run_id, step, judged, outcome))


def _parts(steps: list[Step]) -> dict[str, list[str]]:
    """The steps that tell a statement's end, each with its parts in order: a step named
    ``NAME-...`` is a part of the later step ``NAME`` that waits for it."""
    later = {step.name: step for step in steps}
    parts: dict[str, list[str]] = {step.name: [] for step in steps}
    for step in steps:
        del later[step.name]
        owners = (
            later[prefix]
            for prefix in (step.name[:at] for at, c in enumerate(step.name) if c == "-")
            if prefix in later
        )
        owner = next((o for o in owners if step.name in o.after), None)
        if owner is not None:
            parts[owner.name] += [*parts.pop(step.name), step.name]
    return parts
