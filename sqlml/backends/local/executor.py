"""The local backend: runs a workflow's steps on this machine, independent ones in parallel.

A pool of ``jobs`` worker threads runs the steps whose dependencies are done; each worker
opens its own connection to the datasource (an in-memory database has one connection, and
SQLite one writer at a time: their steps run one at a time on one connection). The
coordinating thread keeps the run record: every step's content hash, state, attempts, times
and error. A failed step's downstream steps are ``omitted``; the others still run, and the
run fails. Exit handlers run last, whatever the outcome.

Resuming a run (``resume``) skips each step that succeeded in it when its content hash (its
definition plus the fingerprints of the tables and models it reads) is unchanged, no step it
waits for ran again and what its statement kind declares it writes still exists; the others
run.

A run's parts: :mod:`scheduler` (when each step starts, on which pool), :mod:`tasks` (one step
instance), :mod:`resume` (content hashes, what a resumed run skips), :mod:`connections` (the
workers'), :mod:`outputs` (what steps read from each other) and :mod:`run_log` (the run
record, notes and outcomes).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import IO, Any

from sqlml.backends.local import record as rec
from sqlml.backends.local.connections import Connections, one_at_a_time
from sqlml.backends.local.outputs import Outputs, gathered
from sqlml.backends.local.resume import Resume
from sqlml.backends.local.run_log import RunLog, StatementDone, Unrecorded
from sqlml.backends.local.scheduler import Instance, Scheduler
from sqlml.backends.local.tasks import Task, TaskResult, holds, reported, run_task
from sqlml.backends.reports import Verdict
from sqlml.datasources import Datasource, connect
from sqlml.errors import SqlmlError
from sqlml.local_files import default_run_dir
from sqlml.runtime import cancel
from sqlml.runtime.bounds import clipped
from sqlml.runtime.context import RunStep
from sqlml.runtime.progress import Sink
from sqlml.workflow.core import Ref, Retry, Step, Workflow


@dataclass
class RunResult:
    """How a run ended: its id, each step's state, the first error (a bug too is a
    :class:`SqlmlError`: an :class:`~sqlml.errors.InternalError`), each step's record and
    the verdict on each statement (by the name of its step)."""

    run_id: str
    states: dict[str, str]
    error: SqlmlError | None = None
    steps: dict[str, rec.StepRecord] = field(default_factory=dict)
    verdicts: dict[str, Verdict] = field(default_factory=dict)

    @property
    def succeeded(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class _Settings:
    """What an executor was given, for each of its runs."""

    url: str | None
    base_dir: Path
    shared: bool  # one connection for all steps: the datasource takes one at a time
    jobs: int
    retry: Retry
    timeout: float | None
    run_dir: Path
    on_done: StatementDone | None
    progress: IO[str] | None
    sink: Sink | None
    recorded: bool
    resumable: bool  # its steps' content hashes are recorded, for a resumed run to compare
    source: str | None  # the program's file (or <-e>), for the run file


class LocalExecutor:
    """Run workflows against the datasource at ``url`` with ``jobs`` workers.

    ``retry`` and ``timeout`` apply to steps without their own. ``run_dir`` receives each
    run's step logs and artifacts (``RUN_DIR/RUN_ID/STEP.log``). ``on_done`` is called with
    each statement's end (its verdict, and its outcome if it ran), in the workflow's order;
    ``progress`` (if given) gets the run id at the start and the steps a resumed run skips.
    ``sink`` (if given) shows the progress of the statements' reading, training and
    predicting, each statement with a reporter of its own. ``recorded``: whether runs are
    kept in the datasource's run record, for resuming and ``sqlml status`` (a front end's
    entries are not: no one resumes them); ``resumable``: whether a recorded run may be
    resumed (not ``sqlml -e``'s), the only use of its steps' content hashes (which read the
    tables of each step's SQL and fingerprint them); ``source`` names the program's file in
    a recorded run's description (``run.json``).
    """

    def __init__(
        self,
        url: str | None = None,
        base_dir: Path | None = None,
        *,
        jobs: int | None = None,
        retry: Retry | None = None,
        timeout: float | None = None,
        run_dir: Path | None = None,
        on_done: StatementDone | None = None,
        progress: IO[str] | None = None,
        sink: Sink | None = None,
        recorded: bool = True,
        resumable: bool = True,
        source: str | None = None,
    ) -> None:
        shared = one_at_a_time(url)
        self._settings = _Settings(
            url=url,
            base_dir=(base_dir or Path.cwd()).resolve(),
            shared=shared,
            jobs=1 if shared else max(1, jobs or os.cpu_count() or 1),
            retry=retry or Retry(limit=0),
            timeout=timeout,
            run_dir=run_dir or default_run_dir(),
            on_done=on_done,
            progress=progress,
            sink=sink,
            recorded=recorded,
            resumable=resumable,
            source=source,
        )
        self._running: _Run | None = None
        self._cancelled: str | None = None  # the reason of a cancel before the run started

    def run(
        self, workflow: Workflow, resume: str | None = None, datasource: Datasource | None = None
    ) -> RunResult:
        """Run ``workflow`` (resuming the run ``resume``); SqlmlErrors end up in the result.

        Its steps run on ``datasource`` when given (an open connection the caller keeps, as
        the shell does: one step at a time), else on connections of the run's own.
        """
        settings = self._settings
        if datasource is not None:
            settings = replace(settings, shared=True, jobs=1)
        connection = datasource or connect(settings.url, settings.base_dir)
        try:
            self._running = running = _Run(workflow, connection, resume, settings)
            if self._cancelled is not None:  # before the run was there to hear it
                running.cancel(self._cancelled)
            return running.run()
        finally:
            self._running, self._cancelled = None, None
            if datasource is None:
                connection.close()

    def cancel(self, reason: str) -> None:
        """Stop the run going on (from another thread, or a signal handler): its running
        statements stop at their next check and commit nothing, no further step starts, and
        the run and those steps are recorded as cancelled. A run still starting (connecting,
        opening its record) is cancelled as it starts: no step runs."""
        self._cancelled = reason
        running = self._running
        if running is not None:
            running.cancel(reason)


class _Run:
    """One run of a workflow: what each step does at its start and end (the scheduler's
    :class:`~sqlml.backends.local.scheduler.StepHandler`), and the run's first error."""

    def __init__(
        self, workflow: Workflow, ds: Datasource, resume: str | None, settings: _Settings
    ) -> None:
        self._workflow, self._settings = workflow, settings
        record = rec.RunRecord(ds) if settings.recorded else Unrecorded()
        previous = record.steps(resume) if resume and isinstance(record, rec.RunRecord) else {}
        run_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        self._run_dir = settings.run_dir / run_id
        self._identity = ds.url.identity()  # the run's folder names its datasource so
        self._log = RunLog(record, run_id, workflow, resume, settings.progress, settings.on_done)
        hashed = settings.recorded and settings.resumable
        self._resume = Resume(ds, previous, self._log.note, hashed=hashed)
        self._connections = Connections(
            settings.url, settings.base_dir, ds if settings.shared else None
        )
        self._outputs = Outputs()
        self._started: dict[str, tuple[str, float]] = {}  # step -> its content hash, start
        self._error: SqlmlError | None = None
        self._token = cancel.Token()  # the run's: Ctrl-C cancels it

    def run(self) -> RunResult:
        self._log.start(
            self._run_dir, self._settings.source, self._settings.base_dir, self._identity
        )
        scheduler = Scheduler(self._settings.jobs, self, self._log.states, self._token)
        try:
            scheduler.run(self._workflow.steps, {})
            status = "Succeeded" if self._error is None else "Failed"
            for handler in self._workflow.exit_handlers:
                scheduler.run([handler], {"workflow.status": status})
        finally:
            scheduler.shutdown()
            self._connections.close()
        left_out = any(state not in rec.DONE_STATES for state in self._log.states.values())
        if self._token.stopped and self._error is None and left_out:
            self._error = cancel.stopped_error(self._token)  # cancelled between two steps
        state = rec.SUCCEEDED if self._error is None else rec.FAILED
        if self._token.stopped and self._error is not None:
            state = rec.CANCELLED  # a run cancelled after its last step ended succeeded
        self._log.end(state)
        log = self._log
        return RunResult(log.run_id, log.states, self._error, log.records, log.verdicts)

    def cancel(self, reason: str) -> None:
        """Cancel the run's token and interrupt the statements running in the database."""
        self._token.cancel(reason)
        self._connections.interrupt()

    def start(self, step: Step, values: dict[str, str]) -> list[Instance] | None:
        try:
            if step.when is not None and not holds(step.when, self._outputs.resolve):
                self._end_unrun(step, rec.SKIPPED, None)
                return None
            content_hash = self._resume.content_hash(step, self._outputs.resolve)
            kept = self._resume.kept_outputs(step, content_hash, self._log.states)
            if kept is not None:
                self._outputs.set(step.name, kept)
                self._end_unrun(step, rec.CACHED, None, content_hash, kept)
                return None
            items = self._outputs.items(step)
        except Exception as error:
            failure = reported(error, step, step.name)
            self._fail(failure)
            self._end_unrun(step, rec.FAILED, failure)
            return None
        started_at = time.time()
        self._started[step.name] = (content_hash, started_at)
        self._log.start_step(step.name, content_hash, started_at)
        tasks = (
            [self._task(step, None, None, values)]
            if items is None
            else [self._task(step, index, item, values) for index, item in enumerate(items)]
        )
        return [partial(run_task, task, self._connections.get) for task in tasks]

    def finish(self, step: Step, results: list[TaskResult]) -> None:
        content_hash, started_at = self._started.pop(step.name)
        errors = [r.error for r in results if r.error is not None]
        outputs = gathered(step, results)
        state = rec.FAILED if errors else rec.SUCCEEDED
        if any(isinstance(error, cancel.Cancelled) for error in errors):
            state = rec.CANCELLED
        if errors:
            self._fail(errors[0])
        else:
            self._outputs.set(step.name, outputs)
        self._log.end_step(
            rec.StepRecord(
                step.name,
                content_hash,
                state,
                sum(r.attempts for r in results),
                min((r.started_at for r in results), default=started_at),
                max((r.ended_at for r in results), default=time.time()),
                _describe(errors[0]) if errors else None,
                outputs if not errors else {},
            ),
            results[0].outcome if results and step.items is None else None,
            error=errors[0] if errors else None,
        )

    def omit(self, step: Step, why: str) -> None:
        self._end_unrun(step, rec.OMITTED, why)

    def _end_unrun(
        self,
        step: Step,
        state: str,
        why: str | SqlmlError | None,
        content_hash: str = "",
        outputs: dict[str, str] | None = None,
    ) -> None:
        """End a step that did not run: ``why`` is the reason it was left out or the error
        that kept it from starting."""
        now = time.time()
        error, text = (why, _describe(why)) if isinstance(why, SqlmlError) else (None, why)
        self._log.end_step(
            rec.StepRecord(step.name, content_hash, state, 0, now, now, text, outputs or {}),
            new=True,
            error=error,
        )

    def _task(self, step: Step, index: int | None, item: Any, values: dict[str, str]) -> Task:
        values = dict(values)
        for name, value in step.inputs.items():
            values[f"inputs.parameters.{name}"] = (
                self._outputs.resolve(value) if isinstance(value, Ref) else _text(value)
            )
        if index is not None:
            values["item"] = _text(item)
            if isinstance(item, dict):
                values.update({f"item.{key}": _text(value) for key, value in item.items()})
        return Task(
            name=step.name if index is None else f"{step.name}[{index}]",
            step=step,
            values=values,
            artifacts={a.name: Path(self._outputs.resolve(a.source)) for a in step.input_artifacts},
            prerequisites=[self._workflow.prerequisites[name] for name in step.prerequisites],
            resolve=self._outputs.resolve,
            retry=step.retry or self._settings.retry,
            timeout=step.timeout if step.timeout is not None else self._settings.timeout,
            run_dir=self._run_dir,
            base_dir=self._settings.base_dir,
            run_token=self._token,
            sink=self._settings.sink,
            run=self._run_step(step),
        )

    def _run_step(self, step: Step) -> RunStep:
        """What a statement of ``step`` records of its run: none for a run kept in no record."""
        if not self._settings.recorded:
            return RunStep()
        source = self._settings.source
        program = source if source and not source.startswith("<") else None
        return RunStep(self._log.run_id, step.name, program)

    def _fail(self, error: SqlmlError) -> None:
        if self._error is None:
            self._error = error


def _describe(error: SqlmlError) -> str:
    """A step's error as the run record keeps it: its message, and its hint on a line of its
    own (``sqlml status`` and ``sqlml ui`` show both), each cut at ``MESSAGE_LIMIT``."""
    rest = "the step's log keeps it"
    message, hint = clipped(error.message, rest=rest), clipped(error.hint or "", rest=rest)
    return message + (f"\n  hint: {hint}" if hint else "")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
