"""The local backend: a workflow run on this machine, its steps in parallel as their
dependencies allow (``executor``), recorded in the datasource for resuming and ``sqlml status``;
its program is Python (``codegen``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlml.workflow import Workflow

if TYPE_CHECKING:
    from sqlml.backends.local.executor import RunResult
    from sqlml.backends.reports import WriteResult


@dataclass(frozen=True)
class RunOptions:
    """How a workflow runs: how many steps at once, which failed run it resumes, how often a
    failed step is retried, each step attempt's time limit, and whether the run may be
    resumed later (not a ``sqlml -e`` run, whose id is not shown: its steps then get no content
    hash, which would read the SQL's tables and fingerprint each)."""

    jobs: int | None = None  # None: the CPU count
    resume: str | None = None  # the run id of a failed run
    retries: int = 0
    timeout: float | None = None  # seconds
    resumable: bool = True


def run_options(args: argparse.Namespace) -> RunOptions:
    """The options of a command line that ``sqlml.workflow_cli.add_run_options`` made (the
    local backend's, :meth:`~sqlml.backends.local.backend.LocalBackend.add_options`)."""
    return RunOptions(
        jobs=args.jobs, resume=args.resume, retries=args.retries, timeout=args.timeout
    )


def run(
    workflow: Workflow,
    options: RunOptions,
    datasource: str | None,
    base_dir: Path,
    fmt: str,
    source: str | None = None,
    announce: bool = True,
    on_result: Callable[[RunResult], None] | None = None,
    write_result: WriteResult | None = None,
) -> int:
    """Run ``workflow`` as ``options`` say; the exit status.

    ``announce``: print the run id at the start and how to resume a failed run.
    ``on_result``: called with the run's result when it ran.
    ``write_result``: keeps each statement's result (default: printed on stdout in ``fmt``).
    """
    from sqlml.backends.local.report import run_and_report

    return run_and_report(
        workflow,
        datasource,
        base_dir,
        fmt,
        source,
        jobs=options.jobs,
        resume=options.resume,
        retries=options.retries,
        timeout=options.timeout,
        resumable=options.resumable,
        announce=announce,
        on_result=on_result,
        write_result=write_result,
    )
