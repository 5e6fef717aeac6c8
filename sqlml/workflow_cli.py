"""The command line of a compiled workflow program, and the run options it shares with
``sqlml run``.

A program that ``sqlml compile --target python`` emits ends with
``raise SystemExit(main(workflow, base_dir=...))``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from sqlml.backends import DEFAULT, backend, backends
from sqlml.datasources.url import redacted_urls
from sqlml.errors import SqlmlError
from sqlml.interrupted import INTERRUPTED, SAID
from sqlml.local_files import internal_error
from sqlml.runtime.output import FORMATS, ResultFiles, output_dir
from sqlml.workflow import Workflow, WorkflowError


class UsageParser(argparse.ArgumentParser):
    """A parser whose usage errors (its subcommands' too) never show a URL's password."""

    def error(self, message: str) -> NoReturn:
        super().error(redacted_urls(message))


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options that say how a workflow runs: its backend, then each backend's options of
    its command ``workflow`` (the local one's: workers, resume, retries, timeout)."""
    parser.add_argument(
        "--backend", choices=list(backends()), default=DEFAULT, help=f"where steps run ({DEFAULT})"
    )
    for known in backends().values():
        known.add_options(parser, "workflow")


def add_output_option(parser: argparse.ArgumentParser) -> None:
    """``--output-dir DIR``: each result in a file of its own (docs/ci.md names them)."""
    parser.add_argument(
        "--output-dir",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="write each statement's result to a file of its own in DIR (made if missing), "
        "PROGRAM-STATEMENT_ID.csv|json|txt as --format says, instead of printing it",
    )


def main(workflow: Workflow, base_dir: str = ".", argv: Sequence[str] | None = None) -> int:
    """Command-line entry point of a compiled workflow program."""
    parser = UsageParser(description=f"Run the sqlml workflow {workflow.name}.")
    parser.add_argument("--datasource", help="database URL (default: $SQLML_DATASOURCE)")
    parser.add_argument("--base-dir", default=base_dir, help="where relative file paths resolve")
    parser.add_argument("--format", choices=FORMATS, default="table")
    add_run_options(parser)
    add_output_option(parser)
    args = parser.parse_args(argv)
    chosen = backend(args.backend)
    if not chosen.supports("run_workflow"):
        error = WorkflowError(
            "a compiled workflow program runs locally only",
            hint=f"run the .sql program with: sqlml run FILE.sql --backend {args.backend}",
        )
        print(error.render("sqlml"), file=sys.stderr)
        return 1
    try:
        files = getattr(args, "output_dir", None)
        write = (
            None
            if files is None
            else ResultFiles(output_dir(files), f"{workflow.name}-", args.format).write
        )
        return chosen.run_workflow(workflow, args, Path(args.base_dir), write)
    except SqlmlError as error:
        print(error.render("sqlml"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # outside the run, which hears Ctrl-C itself
        sys.stderr.write(SAID)
        return INTERRUPTED
    except Exception as error:  # a bug: one paragraph, its traceback kept in a file
        print(internal_error(error, f"workflow {workflow.name}").render("sqlml"), file=sys.stderr)
        return 1
