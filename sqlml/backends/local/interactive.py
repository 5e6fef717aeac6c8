"""Run statements for a person at a front end (the shell, the notebook), as ``sqlml run``
runs them: as a workflow on the local executor, so that a hyperparameter search gets its
trials. The run is not kept in the run record: no one resumes a shell entry or a cell, and
a user who may only read the database can still query it.

The run goes on in a worker thread while the calling thread waits, so that Ctrl-C (a
``KeyboardInterrupt`` in the waiting thread, be it the shell's or a kernel interrupt)
cancels it: its statements stop at their next check and commit nothing, the run and the
running step are recorded ``cancelled``, and the result holds a
:class:`~sqlml.runtime.cancel.Cancelled` error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from pathlib import Path

from sqlml import ir
from sqlml.backends.local.executor import LocalExecutor, RunResult
from sqlml.backends.reports import StatementDone
from sqlml.datasources import Datasource, dialect_of
from sqlml.interrupted import wait_cancelling
from sqlml.runtime.progress import Sink


def run_statements(
    statements: Sequence[ir.Statement],
    name: str,
    worker: Executor,
    *,
    url: str | None = None,
    datasource: Datasource | None = None,
    on_done: StatementDone | None = None,
    sink: Sink | None = None,
    on_cancel: Callable[[], None] | None = None,
    interrupt: str = "Ctrl-C",
) -> RunResult:
    """Run ``statements`` as the workflow ``name`` on ``worker`` (a one-thread pool: a
    connection the caller keeps is used from that thread alone) and wait for the end.

    The statements run on ``datasource`` (an open connection the caller keeps), else on a
    connection to ``url`` opened for the run; one at a time, each statement's end (its
    outcome, or the diagnostic of one that did not succeed) passed to ``on_done`` in order
    and their progress shown on ``sink``. Each Ctrl-C while they run
    (``interrupt`` names it in the error) cancels the run and calls ``on_cancel``; the result
    comes once the run has stopped.
    """
    from sqlml.codegen import to_workflow

    dialect = datasource.dialect if datasource is not None else dialect_of(url)
    workflow = to_workflow(statements, name, dialect)
    executor = LocalExecutor(url, Path.cwd(), jobs=1, on_done=on_done, sink=sink, recorded=False)
    future = worker.submit(executor.run, workflow, None, datasource)
    return wait_cancelling(future, lambda: executor.cancel(interrupt), on_cancel)
