"""Couler-style workflows built as explicit values, and the backends that run them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sqlml.errors import SqlmlError
from sqlml.output import FORMATS
from sqlml.workflow.core import (
    ArtifactInput,
    Condition,
    Ref,
    Resources,
    Retry,
    Secret,
    Step,
    Volume,
    Workflow,
    WorkflowError,
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    names,
    not_equal,
)
from sqlml.workflow.prerequisites import Prerequisite, fetch_data, packages, script
from sqlml.workflow.templates import run_container, run_job, run_script

if TYPE_CHECKING:
    from sqlml.workflow.local import RunResult


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options that say how a workflow runs: backend, workers, resume, retries, timeout."""
    parser.add_argument(
        "--backend", choices=["local", "argo"], default="local", help="where steps run (local)"
    )
    parser.add_argument(
        "--jobs", type=_positive, metavar="N", help="steps run at once (default: the CPU count)"
    )
    parser.add_argument(
        "--resume",
        metavar="RUN",
        help="run again the failed run RUN: steps that succeeded with unchanged inputs are skipped",
    )
    parser.add_argument(
        "--retries", type=int, default=0, metavar="N", help="retries of a failed step (0)"
    )
    parser.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="time limit of each step attempt"
    )


def run(
    workflow: Workflow,
    args: argparse.Namespace,
    datasource: str | None,
    base_dir: Path,
    fmt: str,
    source: str | None = None,
    announce: bool = True,
    on_result: Callable[[RunResult], None] | None = None,
) -> int:
    """Run ``workflow`` as the options of :func:`add_run_options` say; the exit status.

    ``announce``: print the run id at the start and how to resume a failed run.
    ``on_result``: called with the run's result when it ran.
    """
    if args.backend == "argo":
        error = WorkflowError(
            "a compiled workflow program runs locally only",
            hint="submit the .sql program to Argo with: sqlml run FILE.sql --backend argo",
        )
        print(error.render(source or "sqlml"), file=sys.stderr)
        return 1
    from sqlml.workflow.report import run_and_report

    return run_and_report(
        workflow,
        datasource,
        base_dir,
        fmt,
        source,
        jobs=args.jobs,
        resume=args.resume,
        retries=args.retries,
        timeout=args.timeout,
        announce=announce,
        on_result=on_result,
    )


def main(workflow: Workflow, base_dir: str = ".", argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of a compiled workflow program."""
    parser = argparse.ArgumentParser(description=f"Run the sqlml workflow {workflow.name}.")
    parser.add_argument("--datasource", help="database URL (default: $SQLML_DATASOURCE)")
    parser.add_argument("--base-dir", default=base_dir, help="where relative file paths resolve")
    parser.add_argument("--format", choices=FORMATS, default="table")
    add_run_options(parser)
    args = parser.parse_args(argv)
    try:
        return run(workflow, args, args.datasource, Path(args.base_dir), args.format)
    except SqlmlError as error:
        print(error.render(workflow.name), file=sys.stderr)
        return 1


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


__all__ = [
    "ArtifactInput",
    "Condition",
    "Prerequisite",
    "Ref",
    "Resources",
    "Retry",
    "Secret",
    "Step",
    "Volume",
    "Workflow",
    "WorkflowError",
    "add_run_options",
    "equal",
    "fetch_data",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "main",
    "names",
    "not_equal",
    "packages",
    "run",
    "run_container",
    "run_job",
    "run_script",
    "script",
]
