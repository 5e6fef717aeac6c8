"""Run a workflow for a person or a script: print results, report errors, return the exit status."""

from __future__ import annotations

import sys
from pathlib import Path

from sqlml.errors import SqlmlError
from sqlml.output import render
from sqlml.runtime.datasource import connect
from sqlml.runtime.execute import Outcome
from sqlml.workflow.core import Step, Workflow
from sqlml.workflow.local import LocalExecutor


def run_and_report(
    workflow: Workflow,
    datasource: str | None,
    base_dir: Path | None,
    fmt: str = "table",
    source: str | None = None,
) -> int:
    """Run ``workflow`` locally; results go to stdout, summaries and errors to stderr.

    Returns 0 on success and 1 on a user error (reported as ``source:line:col: message``).
    """

    def show(step: Step, outcome: Outcome) -> None:
        if outcome.summary:
            print(outcome.summary, file=sys.stderr, flush=True)
        if outcome.result is not None:
            sys.stdout.write(render(outcome.result, fmt))
            sys.stdout.flush()

    try:
        ds = connect(datasource, base_dir)
        try:
            LocalExecutor(ds, on_done=show).run(workflow)
        finally:
            ds.close()
    except SqlmlError as error:
        print(error.render(source), file=sys.stderr)
        return 1
    return 0
