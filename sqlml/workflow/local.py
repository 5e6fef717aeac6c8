"""The local backend: runs a workflow's steps on this machine, independent ones in parallel.

A pool of ``jobs`` worker threads runs the steps whose dependencies are done; each worker
opens its own connection to the datasource (an in-memory database has one connection, and
SQLite one writer at a time: their steps run one at a time on one connection). The
coordinating thread keeps the run record: every step's content hash, state, attempts, times
and error. A failed step's downstream steps are ``omitted``; the others still run, and the
run fails. Exit handlers run last, whatever the outcome.

Resuming a run (``resume``) skips each step that succeeded in it when its content hash (its
definition plus the fingerprints of the tables it reads) is unchanged, no step it waits for
ran again and the models and tables it wrote still exist; the others run.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlml import ir
from sqlml.errors import DatasourceError
from sqlml.local_files import cache_folder, reason, warn_once
from sqlml.runtime import cancel
from sqlml.runtime.datasource import Datasource, connect, parse_url, source_class
from sqlml.runtime.model_store import ModelStore
from sqlml.runtime.outcome import Outcome
from sqlml.tables import MODEL_VERSIONS
from sqlml.workflow import record as rec
from sqlml.workflow.core import (
    CONTAINER,
    RESOURCE,
    SCRIPT,
    Ref,
    Retry,
    Step,
    Workflow,
    WorkflowError,
)
from sqlml.workflow.tasks import Task, TaskResult, holds, run_task

StatementDone = Callable[[Step, Outcome], None]


@dataclass
class RunResult:
    """How a run ended: its id, each step's state, the first error and each step's record."""

    run_id: str
    states: dict[str, str]
    error: BaseException | None = None
    steps: dict[str, rec.StepRecord] = field(default_factory=dict)

    @property
    def succeeded(self) -> bool:
        return self.error is None


@dataclass
class _Mapped:
    """A step being run as several instances: their results as they come."""

    step: Step
    results: list[TaskResult | None]
    hash: str
    started_at: float = field(default_factory=time.time)


class LocalExecutor:
    """Run workflows against the datasource at ``url`` with ``jobs`` workers.

    ``retry`` and ``timeout`` apply to steps without their own. ``run_dir`` receives each
    run's step logs and artifacts (``RUN_DIR/RUN_ID/STEP.log``). ``on_done`` is called with
    each statement step's outcome, in the workflow's order; ``progress`` (if given) gets the
    run id at the start and the steps a resumed run skips.
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
    ) -> None:
        self._url = url
        self._base_dir = (base_dir or Path.cwd()).resolve()
        parsed = parse_url(url)  # one writer at a time (SQLite): no parallel connections
        self._shared = source_class(parsed).single_writer or parsed.path == ":memory:"
        self._jobs = 1 if self._shared else max(1, jobs or os.cpu_count() or 1)
        self._retry = retry or Retry(limit=0)
        self._timeout = timeout
        self._run_dir = run_dir or default_run_dir()
        self._on_done = on_done
        self._progress = progress
        self._running: _Run | None = None

    def run(self, workflow: Workflow, resume: str | None = None) -> RunResult:
        """Run ``workflow`` (resuming the run ``resume``); SqlmlErrors end up in the result."""
        datasource = connect(self._url, self._base_dir)
        try:
            self._running = _Run(self, workflow, datasource, resume)
            return self._running.run()
        finally:
            self._running = None
            datasource.close()

    def cancel(self, reason: str) -> None:
        """Stop the run going on (from another thread, or a signal handler): its running
        statements stop at their next check and commit nothing, no further step starts, and
        the run and those steps are recorded as cancelled."""
        running = self._running
        if running is not None:
            running.cancel(reason)


def default_run_dir() -> Path:
    """``$SQLML_RUN_DIR``, else ``runs`` in sqlml's cache folder (``$SQLML_CACHE_DIR``, else
    ``~/.cache/sqlml``)."""
    if os.environ.get("SQLML_RUN_DIR"):
        return Path(os.environ["SQLML_RUN_DIR"])
    return cache_folder() / "runs"


class _Run:
    """One run of a workflow: the scheduling loop and its bookkeeping."""

    def __init__(
        self, executor: LocalExecutor, workflow: Workflow, ds: Datasource, resume: str | None
    ) -> None:
        self.x, self.workflow, self.ds = executor, workflow, ds
        self.record = rec.RunRecord(ds)
        self.previous = self.record.steps(resume) if resume else {}
        self.resume = resume
        self.run_id = time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        self.run_dir = executor._run_dir / self.run_id
        self.states: dict[str, str] = {}
        self.outputs: dict[str, dict[str, str]] = {}
        self.outcomes: dict[str, Outcome] = {}
        self.records: dict[str, rec.StepRecord] = {}  # as written to the run record
        self.error: BaseException | None = None
        self.token = cancel.Token()  # the run's: Ctrl-C cancels it
        self._reported = 0
        self._local = threading.local()
        self._connections: list[Datasource] = []
        self._lock = threading.Lock()

    def run(self) -> RunResult:
        resumed = f" (resuming {self.resume})" if self.resume else ""
        steps = len(self.workflow.steps)
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # no logs, but the run record in the database keeps all
            self._note(f"run {self.run_id}{resumed}: {steps} steps, no logs")
            warn_once("logs", f"step logs are not kept: {self.run_dir} ({reason(error)})")
        else:
            self._note(f"run {self.run_id}{resumed}: {steps} steps, logs in {self.run_dir}")
        self.record.start_run(self.run_id, self.workflow.name, self.resume, time.time())
        pool = _InlinePool() if self.x._jobs == 1 else ThreadPoolExecutor(self.x._jobs)
        try:
            self._schedule(self.workflow.steps, pool)
            status = "Succeeded" if self.error is None else "Failed"
            for handler in self.workflow.exit_handlers:
                self._schedule([handler], pool, {"workflow.status": status})
        finally:
            pool.shutdown(wait=True)
            for connection in self._connections:
                connection.close()
        state = rec.SUCCEEDED if self.error is None else rec.FAILED
        if self.token.stopped:
            state = rec.CANCELLED
        self.record.end_run(self.run_id, state, time.time())
        return RunResult(self.run_id, self.states, self.error, self.records)

    def _schedule(
        self,
        steps: list[Step],
        pool: Any,
        values: dict[str, str] | None = None,
    ) -> None:
        """Run ``steps`` as their dependencies allow, until all have ended."""
        pending = list(steps)
        running: dict[Future[TaskResult], tuple[_Mapped, int]] = {}
        while pending or running:
            for step in [s for s in pending if all(d in self.states for d in s.after)]:
                pending.remove(step)
                if self.token.stopped:
                    self._finish_unrun(step, rec.OMITTED, "the run was cancelled")
                elif any(self.states[d] not in rec.DONE_STATES for d in step.after):
                    self._finish_unrun(step, rec.OMITTED, "a step it waits for failed")
                else:
                    self._start(step, pool, running, values or {})
            if running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    mapped, index = running.pop(future)
                    mapped.results[index] = future.result()
                    if all(result is not None for result in mapped.results):
                        self._finish(mapped)
            elif pending and not any(all(d in self.states for d in s.after) for s in pending):
                raise WorkflowError("the workflow's steps wait for each other in a cycle")

    def _start(self, step: Step, pool: Any, running: dict, values: dict[str, str]) -> None:
        try:
            if step.when is not None and not holds(step.when, self._resolve):
                self._finish_unrun(step, rec.SKIPPED, None)
                return
            content_hash = self._hash(step)
            before = self.previous.get(step.name)
            if (
                before is not None
                and before.state in (rec.SUCCEEDED, rec.CACHED)
                and before.content_hash == content_hash
                and not any(self.states[d] == rec.SUCCEEDED for d in step.after)
            ):
                gone = self._gone_output(step)
                if gone is None:
                    self.outputs[step.name] = before.outputs
                    self._finish_unrun(step, rec.CACHED, None, content_hash)
                    return
                self._note(f"step {step.name} runs again: its {gone} is gone")
            items = self._items(step)
        except Exception as error:
            self._fail(error)
            self._finish_unrun(step, rec.FAILED, _describe(error))
            return
        mapped = _Mapped(step, [None] * (1 if items is None else len(items)), content_hash)
        self.record.start_step(self.run_id, step.name, content_hash, mapped.started_at)
        if items == []:
            self._finish(mapped)
            return
        for index, item in enumerate([None] if items is None else items):
            task = self._task(step, index if items is not None else None, item, values)
            running[pool.submit(run_task, task, self._connection)] = (mapped, index)

    def _task(self, step: Step, index: int | None, item: Any, values: dict[str, str]) -> Task:
        values = dict(values)
        for name, value in step.inputs.items():
            values[f"inputs.parameters.{name}"] = (
                self._resolve(value) if isinstance(value, Ref) else _text(value)
            )
        if index is not None:
            values["item"] = _text(item)
            if isinstance(item, dict):
                values.update({f"item.{key}": _text(value) for key, value in item.items()})
        return Task(
            name=step.name if index is None else f"{step.name}[{index}]",
            step=step,
            values=values,
            artifacts={a.name: Path(self._resolve(a.source)) for a in step.input_artifacts},
            prerequisites=[self.workflow.prerequisites[name] for name in step.prerequisites],
            resolve=self._resolve,
            retry=step.retry or self.x._retry,
            timeout=step.timeout if step.timeout is not None else self.x._timeout,
            run_dir=self.run_dir,
            base_dir=self.x._base_dir,
            run_token=self.token,
        )

    def _finish(self, mapped: _Mapped) -> None:
        """Record a started step's end from its instances' results."""
        step, results = mapped.step, [r for r in mapped.results if r is not None]
        errors = [r.error for r in results if r.error is not None]
        if mapped.step.items is None:
            outputs = results[0].outputs
        else:
            names = {name for r in results for name in r.outputs}
            outputs = {n: json.dumps([r.outputs.get(n) for r in results]) for n in names}
            outputs.setdefault("result", "[]")
        state = rec.FAILED if errors else rec.SUCCEEDED
        if any(isinstance(error, cancel.Cancelled) for error in errors):
            state = rec.CANCELLED
        if errors:
            self._fail(errors[0])
        else:
            self.outputs[step.name] = outputs
        if results and results[0].outcome is not None and step.items is None:
            self.outcomes[step.name] = results[0].outcome
        self._end_step(
            rec.StepRecord(
                step.name,
                mapped.hash,
                state,
                sum(r.attempts for r in results),
                min((r.started_at for r in results), default=mapped.started_at),
                max((r.ended_at for r in results), default=time.time()),
                _describe(errors[0]) if errors else None,
                outputs if not errors else {},
            ),
        )
        self._set_state(step.name, state)

    def _finish_unrun(
        self, step: Step, state: str, error: str | None, content_hash: str = ""
    ) -> None:
        now = time.time()
        outputs = self.outputs.get(step.name, {}) if state == rec.CACHED else {}
        self._end_step(
            rec.StepRecord(step.name, content_hash, state, 0, now, now, error, outputs), new=True
        )
        self._set_state(step.name, state)

    def _end_step(self, step: rec.StepRecord, new: bool = False) -> None:
        self.records[step.step] = step
        self.record.end_step(self.run_id, step, new)

    def _set_state(self, name: str, state: str) -> None:
        self.states[name] = state
        if state == rec.CACHED:
            self._note(f"step {name} skipped: unchanged since run {self.resume}")
        self._report()

    def _report(self) -> None:
        """Pass finished statement outcomes on, in the workflow's order."""
        steps = self.workflow.steps
        while self._reported < len(steps) and steps[self._reported].name in self.states:
            step = steps[self._reported]
            self._reported += 1
            if step.name in self.outcomes and self.x._on_done is not None:
                self.x._on_done(step, self.outcomes[step.name])

    def _fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error

    def _resolve(self, ref: Ref) -> str:
        outputs = self.outputs.get(ref.step)
        if outputs is None or ref.name not in outputs:
            raise WorkflowError(
                f"step {ref.step} has no output {ref.name} (it was skipped, failed, or "
                "does not produce it)",
                hint="read outputs only of steps that run before, and name them right",
            )
        return outputs[ref.name]

    def _items(self, step: Step) -> list[Any] | None:
        if step.items is None:
            return None
        if not isinstance(step.items, Ref):
            return list(step.items)
        text = self._resolve(step.items)
        try:
            items = json.loads(text)
        except json.JSONDecodeError:
            items = None
        if not isinstance(items, list):
            raise WorkflowError(
                f"step {step.name} maps over {step.items.step}'s output {step.items.name}, "
                f"which is not a JSON list: {text[:80]!r}",
                hint="make that step print a JSON list, e.g. json.dumps([...])",
            )
        return items

    def _hash(self, step: Step) -> str:
        """The step's definition, the values it reads and the fingerprints of its tables."""
        content: dict[str, Any] = {
            "template": step.template,
            "params": step.params,
            "inputs": {
                name: self._resolve(value) if isinstance(value, Ref) else value
                for name, value in step.inputs.items()
            },
            "items": self._resolve(step.items) if isinstance(step.items, Ref) else step.items,
            "tables": self._fingerprints(step),
        }
        text = json.dumps(content, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def _fingerprints(self, step: Step) -> dict[str, str | None]:
        if step.template in (CONTAINER, SCRIPT, RESOURCE):
            return {}
        from sqlml.semantics.dependencies import dependencies

        statement = ir.from_dict(step.params)
        io = dependencies([statement], self.ds.dialect).io[statement.id]
        tables = set(io.reads_tables)
        if io.reads_models or io.reads_all_models:
            tables.add(MODEL_VERSIONS)  # a statement that reads a model reads it
        return {name: self.ds.table_fingerprint(name.split(".")) for name in sorted(tables)}

    def _gone_output(self, step: Step) -> str | None:
        """An output of a statement step that no longer exists ("model m", "table t"), or
        None: the model (and trials table) a TO TRAIN writes, the table a TO PREDICT, TO
        EVALUATE or TO EXPLAIN writes, the table or view a CREATE makes, each as the
        statement names it. Statements that drop or rename are not checked."""
        if step.template in (CONTAINER, SCRIPT, RESOURCE):
            return None
        statement = ir.from_dict(step.params)
        match statement:
            case ir.TrialStatement():  # the search drops its trials' models once done with them
                gone = self._gone_training(statement)
                return None if gone is None or self._trials_kept(statement) else gone
            case ir.TrainStatement():
                return self._gone_training(statement)
            case ir.PredictStatement() | ir.EvaluateStatement() | ir.ExplainStatement():
                return self._gone_table(statement.table) if statement.table else None
            case ir.SqlStatement():
                return self._gone_creation(statement.text)
        return None

    def _gone_training(self, statement: ir.TrainStatement) -> str | None:
        if not ModelStore(self.ds).list_versions(statement.model):
            return f"model {statement.model}"
        if isinstance(statement, ir.SearchStatement):
            return self._gone_table(statement.search["trials_table"])
        return None

    def _gone_table(self, table: list[str]) -> str | None:
        return None if self.ds.table_exists(table) else f"table {'.'.join(table)}"

    def _trials_kept(self, statement: ir.TrialStatement) -> bool:
        """Whether trial models of the search are stored (its last step failed)."""
        from sqlml.runtime.search import trial_model

        prefix = trial_model(statement.model, "")
        return any(name.startswith(prefix) for name, _, _ in ModelStore(self.ds).list())

    def _gone_creation(self, sql: str) -> str | None:
        """The table or view a ``CREATE TABLE`` or ``CREATE VIEW`` made if it no longer exists,
        or None. It is looked up as the statement names it (quoted or not), so the database
        applies its own rules of case."""
        try:
            tree = sqlglot.parse_one(sql, read=self.ds.dialect)
        except (SqlglotError, RecursionError):  # too deeply nested for sqlglot's parser
            return None
        kind = str(tree.args.get("kind") or "").upper()
        if not isinstance(tree, exp.Create) or kind not in ("TABLE", "VIEW"):
            return None
        table = tree.this if isinstance(tree.this, exp.Table) else tree.this.find(exp.Table)
        if table is None:
            return None
        name = table.sql(dialect=self.ds.dialect)
        try:
            self.ds.execute(f"SELECT 1 FROM {name} WHERE 1 = 0")
        except DatasourceError:
            return f"{kind.lower()} {name}"
        return None

    def cancel(self, reason: str) -> None:
        """Cancel the run's token; the statements running in the database are interrupted
        from a thread of its own (this may be a signal handler)."""
        self.token.cancel(reason)
        with self._lock:
            connections = [self.ds] if self.x._shared else list(self._connections)

        def interrupt() -> None:
            for connection in connections:
                connection.interrupt()

        threading.Thread(target=interrupt, daemon=True).start()

    def _connection(self) -> Datasource:
        """This worker thread's datasource connection (the shared one for in-memory ones)."""
        if self.x._shared:
            return self.ds
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = connect(self.x._url, self.x._base_dir)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def _note(self, message: str) -> None:
        if self.x._progress is not None:
            print(f"sqlml: {message}", file=self.x._progress, flush=True)


class _InlinePool:
    """Runs each submitted call at once in this thread: one worker, no thread switching."""

    def submit(self, fn: Callable[..., TaskResult], *args: Any) -> Future[TaskResult]:
        future: Future[TaskResult] = Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, wait: bool = True) -> None:
        """Nothing runs in the background."""


def _describe(error: BaseException) -> str:
    from sqlml.errors import SqlmlError

    return error.message if isinstance(error, SqlmlError) else repr(error)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
