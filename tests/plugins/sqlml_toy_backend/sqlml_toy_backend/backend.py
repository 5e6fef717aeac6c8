"""The toy backend as sqlml sees it: ``sqlml compile --target toy`` lists the program's plan,
``sqlml run --backend toy`` runs it by recording each step in order (a run folder with the
run's description and each step's log, in sqlml's run folder), and ``status``, ``logs`` and
``sqlml ui`` read what it recorded. It imports its other modules inside its methods."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlml.backends import STATUS_COLUMNS, Backend, Program

if TYPE_CHECKING:
    from sqlml.backends.runs import RunViews
    from sqlml.datasources import ResultSet


class ToyBackend(Backend):
    name = "toy"
    target = "toy"

    def add_options(self, parser: argparse.ArgumentParser, command: str) -> None:
        if command == "run":
            parser.add_argument("--shout", action="store_true", help="--backend toy: loudly")

    def compile(self, program: Program, args: argparse.Namespace) -> str:
        from sqlml.plan import plan

        steps = plan(program.statements, program.dialect)
        return "".join(f"{p.id} after {','.join(p.after) or '-'}\n" for p in steps)

    def run(
        self,
        program: Program,
        args: argparse.Namespace | None,
        datasource: str | None,
        fmt: str,
        on_result: Callable[[Any], None] | None = None,
    ) -> int:
        from sqlml_toy_backend.record import record

        run_id = record(program, shout=bool(args is not None and args.shout))
        print(f"sqlml: run {run_id}: recorded by the toy backend", file=sys.stderr)
        return 0

    def status(
        self, run: str, datasource: str | None, args: argparse.Namespace
    ) -> tuple[str, ResultSet]:
        from sqlml.datasources import ResultSet
        from sqlml_toy_backend.record import read

        found = read(run)
        rows = [
            (step["name"], step["state"], step["started_at"], step["ended_at"], "")
            for step in found["steps"]
        ]
        return found["state"], ResultSet(list(STATUS_COLUMNS), rows)

    def logs(self, run: str, datasource: str | None, args: argparse.Namespace) -> None:
        from sqlml_toy_backend.record import log, read

        for step in read(run)["steps"]:
            if args.step in (None, step["name"]):
                sys.stdout.write(f"--- {step['name']}\n{log(run, step['name'])}")

    def run_views(self) -> RunViews:
        from sqlml_toy_backend.views import VIEWS

        return VIEWS


BACKEND = ToyBackend()
