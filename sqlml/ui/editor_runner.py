"""The editor's engine: statements checked as ``sqlml check`` checks them, then run as the
shell runs them, one run at a time per server, cancellable from the page.

A run opens its own connection (an embedded DuckDB file stays free between runs; with
``sqlml ui --no-file-access``, one whose statements may not use this machine's files:
:meth:`~sqlml.datasources.Datasource.forbid_file_access`), checks the
program against it (:func:`sqlml.checking.check_program`: the grammar, estimators,
attributes, tables, columns and models; TO RUN's programs too, of which only declared
modules run here, the editor having no program folder) and, if nothing is wrong, runs it on
the default backend without a run record
(:meth:`sqlml.backends.Backend.run_statements`), the connection used from one
worker thread alone. The Cancel button cancels the run as Ctrl-C
cancels the shell's: its statements stop at their next check and commit nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sqlml import ir
from sqlml.backends import DEFAULT, backend
from sqlml.backends.reports import StatementEnd
from sqlml.checking import check_program, errors_of
from sqlml.datasources import Datasource, ResultSet, connect
from sqlml.errors import SqlmlError, SqlmlWarning
from sqlml.runtime import cancel
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.progress import Recorder
from sqlml.statements import kind_of
from sqlml.statements.run import runnable
from sqlml.ui.recorded_plots import png

T = TypeVar("T")
CANCEL_BUTTON = "the Cancel button"  # what cancelled a run, as its error names it
_PLOTS = {"evaluate": "evaluate.plot", "explain": "explain.plot"}


class Busy(Exception):
    """Another run is going on: the editor runs one at a time."""


@dataclass(frozen=True)
class Plot:
    """A plot a TO EVALUATE or TO EXPLAIN statement drew: of which model, its file, its PNG."""

    kind: str
    model: str
    path: Path
    data: bytes
    version: int | None = None  # of the model: the one the statement measured


@dataclass
class StatementResult:
    """What one statement produced: its text, summary, rows, and the plot it drew."""

    text: str
    summary: str | None
    result: ResultSet | None
    plot: Plot | None = None


@dataclass
class EditorRun:
    """A run's outcome: each statement's result as it ended, the errors that stopped it (the
    check's, or a diagnostic for each statement that did not succeed: its error, or a note
    saying why it did not run), the check's warnings, whether it was cancelled."""

    results: list[StatementResult] = field(default_factory=list)
    errors: list[SqlmlError] = field(default_factory=list)
    warnings: list[SqlmlError] = field(default_factory=list)
    cancelled: bool = False
    seconds: float = 0.0


class EditorRunner:
    """Runs the editor's programs on the datasource at ``url`` (relative paths from
    ``base_dir``); without ``file_access``, on a connection that may not read or write this
    machine's files (:meth:`~sqlml.datasources.Datasource.forbid_file_access`)."""

    def __init__(self, url: str | None, base_dir: Path, file_access: bool = True) -> None:
        self._url, self._base_dir, self._file_access = url, base_dir, file_access
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="sqlml-editor")
        self._lock = threading.Lock()
        self._switch = _CancelSwitch()
        self.progress = Recorder()  # the stages of the run going on, for the page to show
        self.generation = 0  # counts the runs that may have changed tables or models

    def run(self, text: str) -> EditorRun:
        """Check and run ``text``; a :class:`Busy` if another run is going on."""
        if not self._lock.acquire(blocking=False):
            raise Busy
        started = time.perf_counter()
        try:
            self._switch.arm()
            datasource = self._call(self._connect)
            try:
                outcome = self._checked_run(text, datasource)
            finally:
                self._call(datasource.close)
        finally:
            self._switch.disarm()
            self._lock.release()
        outcome.seconds = time.perf_counter() - started
        return outcome

    def _connect(self) -> Datasource:
        """A connection of this run's (in the worker thread)."""
        datasource = connect(self._url, self._base_dir)
        if not self._file_access:
            try:
                datasource.forbid_file_access()
            except BaseException:
                datasource.close()
                raise
        return datasource

    def running(self) -> bool:
        """Whether a run is going on."""
        return self._lock.locked()

    def cancel(self) -> bool:
        """Cancel the run going on; whether there was one."""
        return self._switch.press()

    def _checked_run(self, text: str, datasource: Datasource) -> EditorRun:
        found = self._call(check_program, text, datasource.dialect, datasource)
        errors = errors_of(found)
        warnings = [each for each in found if isinstance(each, SqlmlWarning)]
        if errors:
            return EditorRun(errors=errors, warnings=warnings)
        statements = self._call(_analyzed, text, datasource.dialect)
        refused = [error for error in map(_not_runnable, statements) if error is not None]
        if not self._file_access:
            refused += [error for error in map(_reads_files, statements) if error is not None]
        if refused:
            return EditorRun(errors=refused, warnings=warnings)
        by_id = {statement.id: statement for statement in statements}
        run = EditorRun(warnings=warnings)

        def done(end: StatementEnd) -> None:
            diagnostic, outcome = end.verdict.besides_cancellation, end.outcome
            if diagnostic is not None:  # a cancellation is said once: run.cancelled
                run.errors.append(diagnostic)
            if outcome is None:
                return
            statement = by_id.get(end.step.name)
            plot = _plot(statement, datasource, outcome) if statement is not None else None
            shown = statement.text if statement is not None else end.step.name
            run.results.append(StatementResult(shown, outcome.summary, outcome.result, plot))

        self.generation += 1
        result = backend(DEFAULT).run_statements(
            statements,
            "editor",
            _Cancellable(self._pool, self._switch),
            datasource=datasource,
            on_done=done,
            sink=self.progress,
            interrupt=CANCEL_BUTTON,
        )
        self.generation += 1
        if isinstance(result.error, cancel.Cancelled):
            run.cancelled = True
        return run

    def _call(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in the worker thread, which alone uses the connection."""
        return self._pool.submit(function, *args).result()


def _analyzed(text: str, dialect: str) -> list[ir.Statement]:
    from sqlml.grammar import parse
    from sqlml.semantics import analyze

    return analyze(parse(text), dialect)


def _not_runnable(statement: ir.Statement) -> SqlmlError | None:
    """The error of a TO RUN whose program the editor may not run: it has no program folder,
    so only the modules ``$SQLML_RUNNABLE`` declares run (:mod:`sqlml.statements.run.runnable`)."""
    if statement.kind != "run":
        return None
    refused = runnable.where_found(statement.program, statement.program_kind, None)
    if refused is None:
        return None
    return SqlmlError(refused[0], line=statement.line, column=statement.column, hint=refused[1])


def _reads_files(statement: ir.Statement) -> SqlmlError | None:
    """The error of a statement that reads files of this machine (its kind's
    ``Effects.reads_files``: TO IMPORT's model file), which an editor without file access
    refuses."""
    effects = kind_of(statement).effects
    read = [str(path) for path in effects.values(statement, effects.reads_files)]
    if not read:
        return None
    return SqlmlError(
        f"this editor may not read this machine's files (sqlml ui --no-file-access), and the "
        f"statement reads {', '.join(read)}",
        line=statement.line,
        column=statement.column,
        hint="run it with sqlml run, or in a sqlml ui started without --no-file-access",
    )


def _plot(statement: ir.Statement, datasource: Datasource, outcome: Outcome) -> Plot | None:
    """The plot a TO EVALUATE or TO EXPLAIN statement drew (``evaluate.plot``,
    ``explain.plot``) of the version its ``outcome`` names, read back from its file."""
    attribute = _PLOTS.get(statement.kind)
    drawn = getattr(statement, "attributes", {}).get(attribute) if attribute else None
    model = getattr(statement, "model", None)
    if not isinstance(drawn, str) or not isinstance(model, str):
        return None
    path = datasource.program_file(drawn)
    data = png(path)
    version = outcome.model[1] if outcome.model is not None else None
    return Plot(statement.kind, model, path, data, version) if data is not None else None


class _CancelSwitch:
    """The Cancel button: wakes the wait for the running statements, which then ends in a
    ``KeyboardInterrupt`` (what :func:`run_statements` takes as Ctrl-C: it cancels the run,
    then waits for it to stop). A press while the run connects or is checked is kept for the
    wait to come."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._armed = False  # a run is going on
        self._pressed = threading.Event()
        self._waker: threading.Event | None = None  # set to wake the wait going on

    def arm(self) -> None:
        """A run begins: presses cancel it from now on."""
        with self._guard:
            self._armed = True
            self._pressed.clear()

    def disarm(self) -> None:
        """The run has ended: presses cancel nothing."""
        with self._guard:
            self._armed = False

    def press(self) -> bool:
        """Cancel the run going on; whether there was one."""
        with self._guard:
            if not self._armed:
                return False
            self._pressed.set()
            waker = self._waker
        if waker is not None:
            waker.set()
        return True

    def wait(self, future: Future[T], timeout: float | None) -> T:
        """``future``'s result, or a ``KeyboardInterrupt`` when pressed first (once a press)."""
        waker = threading.Event()
        future.add_done_callback(lambda _: waker.set())
        with self._guard:
            self._waker = waker
        try:
            if not self._pressed.is_set():
                waker.wait(timeout)
            if not future.done() and self._pressed.is_set():
                self._pressed.clear()
                raise KeyboardInterrupt
            return future.result(0 if timeout is not None else None)
        finally:
            self._waker = None


class _Cancellable(Executor):
    """The runner's worker pool, whose futures' waits the Cancel button interrupts."""

    def __init__(self, pool: Executor, switch: _CancelSwitch) -> None:
        self._pool, self._switch = pool, switch

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        return _Interruptible(self._pool.submit(fn, *args, **kwargs), self._switch)


class _Interruptible(Future[T]):
    """A future of the pool whose :meth:`result` the Cancel button interrupts."""

    def __init__(self, inner: Future[T], switch: _CancelSwitch) -> None:
        super().__init__()
        self._inner, self._switch = inner, switch

    def result(self, timeout: float | None = None) -> T:
        return self._switch.wait(self._inner, timeout)
