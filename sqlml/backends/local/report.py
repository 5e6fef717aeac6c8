"""Run a workflow for a person or a script: print results, report errors, return the exit status."""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlml.backends.local.executor import LocalExecutor, RunResult
from sqlml.backends.reports import ERROR, SKIPPED, StatementEnd, Verdict, WriteResult
from sqlml.errors import SqlmlError, summary_warning
from sqlml.runtime import cancel, progress
from sqlml.runtime.output import ResultStream
from sqlml.workflow.core import Retry, Step, Workflow

CANCELLED_STATUS = 130  # a run cancelled with Ctrl-C, as shells report SIGINT
_STOP_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}  # each cancels the run


# Keeps a statement's result, given its step id: prints it, writes it to a file of its own...
def run_and_report(
    workflow: Workflow,
    datasource: str | None,
    base_dir: Path | None,
    fmt: str = "table",
    source: str | None = None,
    *,
    jobs: int | None = None,
    resume: str | None = None,
    retries: int = 0,
    timeout: float | None = None,
    resumable: bool = True,
    announce: bool = True,
    on_result: Callable[[RunResult], None] | None = None,
    write_result: WriteResult | None = None,
) -> int:
    """Run ``workflow`` locally; results go to ``write_result`` in program order (by
    default: to stdout, see :class:`ResultStream`), the run id, summaries, one diagnostic
    for each statement that did not succeed and (on a terminal) progress bars to stderr.

    Returns 0 on success and 1 on a user error (reported as ``source:line:col: message``),
    such as a result that ``write_result`` could not keep (the run goes on; its statement's
    verdict is then an error). ``on_result`` gets the run's result when it ran (for reports
    such as JUnit). A run that is not ``resumable`` is recorded without its steps' content
    hashes.
    """
    shown = _Shown(source, write_result or ResultStream(fmt).write, announce)
    executor = LocalExecutor(
        datasource,
        base_dir,
        jobs=jobs,
        retry=Retry(limit=retries),
        timeout=timeout,
        resumable=resumable,
        on_done=shown.end,
        progress=sys.stderr if announce else None,
        sink=progress.terminal(sys.stderr),
        source=source,
    )
    heard: list[int] = []  # the signals that cancelled the run
    try:
        with _ctrl_c_cancels(executor, heard):
            result = executor.run(workflow, resume)
    except SqlmlError as error:
        print(error.render(source), file=sys.stderr)
        return 1
    shown.ended(result)
    result.verdicts.update(shown.unkept)  # a statement whose result was lost is an error
    if on_result is not None:
        on_result(result)
    if isinstance(result.error, cancel.Cancelled):
        return 128 + heard[0] if heard else CANCELLED_STATUS
    return 1 if result.error is not None or shown.unkept else 0


class _Shown:
    """What ``sqlml run`` shows of each statement's end, in program order, on stderr: the
    summary of one that succeeded (its result to ``write``), the diagnostic of one that did
    not. When ``announce``-d, the first diagnostic of a failed or cancelled run (an error, or
    a statement the cancellation left out) says how to resume it."""

    def __init__(self, source: str | None, write: WriteResult, announce: bool) -> None:
        self._source, self._write, self._announce = source, write, announce
        self.unkept: dict[str, Verdict] = {}  # the steps whose results could not be kept
        self._failure_told = False

    def end(self, end: StatementEnd) -> None:
        verdict, outcome = end.verdict, end.outcome
        if verdict.diagnostic is not None:
            failing = verdict.outcome != SKIPPED or verdict.cancelled
            self._tell(verdict.diagnostic, end.run_id, failing)
        if outcome is None:
            return
        if outcome.summary:
            print(self._said(end.step, outcome.summary), file=sys.stderr, flush=True)
        if outcome.result is None:
            return
        try:
            self._write(end.step.name, outcome.result)
        except SqlmlError as error:
            if "line" in end.step.params:
                error.at(end.step.params["line"], end.step.params["column"])
            self.unkept[end.step.name] = Verdict(ERROR, error)
            print(error.render(self._source), file=sys.stderr, flush=True)

    def _said(self, step: Step, summary: str) -> str:
        """A statement's summary as said: a warning as ``file:line:column: warning: ...``."""
        params = step.params
        warning = summary_warning(summary, params.get("line", 1), params.get("column", 1))
        return summary if warning is None else warning.render(self._source)

    def ended(self, result: RunResult) -> None:
        """Tell the run's error if no statement's diagnostic did (an exit handler's)."""
        if result.error is not None and not self._failure_told:
            self._tell(result.error, result.run_id, failing=True)

    def _tell(self, diagnostic: SqlmlError, run_id: str, failing: bool) -> None:
        print(diagnostic.render(self._source), file=sys.stderr, flush=True)
        if failing and not self._failure_told:
            self._failure_told = True
            if self._announce:
                print(f"  resume with: --resume {run_id}", file=sys.stderr, flush=True)


@contextmanager
def _ctrl_c_cancels(executor: LocalExecutor, heard: list[int] | None = None) -> Iterator[None]:
    """In the body, the first Ctrl-C (or SIGTERM) cancels the run: its statements stop at
    their next check and commit nothing, and the run's error is the one line said about it.
    A run still stopping 2 s later says so; a second one ends the process at once (status
    128 + the signal's number, 130 for Ctrl-C): its databases roll back what was not
    committed, and the run record still says running. ``heard`` gets the signals' numbers.

    A thread of its own hears the Ctrl-Cs (through the signal module's wakeup socket), even
    while the main thread waits in a database (a long SQL statement on SQLite, which runs
    the steps in the main thread): cancelling interrupts that statement too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    heard = [] if heard is None else heard

    def still_stopping() -> None:
        print("sqlml: still cancelling the run (Ctrl-C again to quit at once)", file=sys.stderr)

    slow = threading.Timer(2.0, still_stopping)
    slow.daemon = True

    def hear(hearing: socket.socket) -> None:
        while signals := hearing.recv(64):  # empty once the body has ended
            for number in signals:
                if number not in _STOP_SIGNALS:  # another signal a handler of Python's got
                    continue
                heard.append(number)
                name = _STOP_SIGNALS[signal.Signals(number)]
                if len(heard) == 1:
                    executor.cancel(name)
                    slow.start()
                else:
                    print(f"sqlml: quit at once (a second {name})", file=sys.stderr, flush=True)
                    sys.stdout.flush()
                    os._exit(128 + number)  # not waiting for the statements still running

    hearing, waking = socket.socketpair()  # a socket, not a pipe: Windows wakes it too
    waking.setblocking(False)
    listener = threading.Thread(target=hear, args=[hearing], name="sqlml-ctrl-c", daemon=True)
    listener.start()
    previous = {number: signal.signal(number, _heard_above) for number in _STOP_SIGNALS}
    previous_wakeup = signal.set_wakeup_fd(waking.fileno(), warn_on_full_buffer=False)
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_wakeup)
        for number, handler in previous.items():
            signal.signal(number, handler)
        slow.cancel()
        waking.close()
        listener.join()
        hearing.close()


def _heard_above(signum: int, frame: object) -> None:
    """A stop signal's handler: the listener of the wakeup socket hears it."""
