"""The local backend as the CLI sees it: runs on this machine, a Python program, the run
record's status. Imports neither the executor nor the code generation until used."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from sqlml.backends.interface import Backend, Program

if TYPE_CHECKING:
    from pathlib import Path

    from sqlml.backends.reports import RunReport, WriteResult
    from sqlml.backends.runs import RunViews
    from sqlml.datasources import ResultSet
    from sqlml.workflow import Workflow


class LocalBackend(Backend):
    name = "local"
    target = "python"
    runs_here = True
    instead: ClassVar[Mapping[str, str]] = {
        "logs": "a local run prints its steps' output as it runs; "
        "sqlml status RUN shows how each step ended",
        "stop": "stop a local run with Ctrl-C; sqlml run FILE --resume RUN runs it again",
    }

    def add_options(self, parser: argparse.ArgumentParser, command: str) -> None:
        if command != "workflow":
            return
        parser.add_argument(
            "--jobs", type=_positive, metavar="N", help="steps run at once (default: the CPU count)"
        )
        parser.add_argument(
            "--resume",
            metavar="RUN",
            help="run again the failed run RUN: steps that succeeded with unchanged inputs are "
            "skipped",
        )
        parser.add_argument(
            "--retries", type=int, default=0, metavar="N", help="retries of a failed step (0)"
        )
        parser.add_argument(
            "--timeout", type=float, metavar="SECONDS", help="time limit of each step attempt"
        )

    def compile(self, program: Program, args: argparse.Namespace) -> str:
        from sqlml.backends.local.codegen import to_python

        return to_python(program.statements, program.name, str(program.base_dir), program.dialect)

    def run(
        self,
        program: Program,
        args: argparse.Namespace | None,
        datasource: str | None,
        fmt: str,
        on_result: Callable[[Any], None] | None = None,
        write_result: WriteResult | None = None,
    ) -> int:
        """As :meth:`Backend.run`; ``write_result`` keeps each statement's result (default:
        printed on stdout in ``fmt``), e.g. in a file of its own (``--output-dir``)."""
        from sqlml.backends.local import RunOptions, run, run_options
        from sqlml.codegen import to_workflow

        _note_images(program)
        workflow = to_workflow(program.statements, program.name, program.dialect)
        options = RunOptions(resumable=False) if args is None else run_options(args)
        return run(
            workflow,
            options,
            datasource,
            program.base_dir,
            fmt,
            program.source,
            announce=args is not None,
            on_result=on_result,
            write_result=write_result,
        )

    def run_workflow(
        self,
        workflow: Workflow,
        args: argparse.Namespace,
        base_dir: Path,
        write_result: WriteResult | None,
    ) -> int:
        from sqlml.backends.local import run, run_options

        options = run_options(args)
        return run(
            workflow, options, args.datasource, base_dir, args.format, write_result=write_result
        )

    def run_statements(self, *args: Any, **kwargs: Any) -> RunReport:
        from sqlml.backends.local.interactive import run_statements

        return run_statements(*args, **kwargs)

    def status(
        self, run: str, datasource: str | None, args: argparse.Namespace
    ) -> tuple[str, ResultSet]:
        from sqlml.backends.local.status import local_status

        return local_status(datasource, run)

    def run_views(self) -> RunViews:
        from sqlml.backends.local.views import VIEWS

        return VIEWS


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _note_images(program: Program) -> None:
    """A note on standard error for each model zoo image a TO TRAIN names: a local run
    ignores it (on Argo it is the step's image). TO RUN's image is its handler's to refuse."""
    for statement in program.statements:
        if statement.kind not in ("train", "search"):
            continue
        where = f"{program.source}:{statement.line}:{statement.column}"
        image, base = getattr(statement, "image", None), getattr(statement, "base_image", None)
        if image:
            print(
                f"{where}: note: the model zoo image {image} is ignored in a local run, "
                f"which trains sqlml's {statement.estimator}",  # type: ignore[attr-defined]
                file=sys.stderr,
            )
        if base:
            print(
                f"{where}: note: USING {base}: a local run does not fetch a model zoo's "
                "model and trains anew",
                file=sys.stderr,
            )


BACKEND = LocalBackend()
