"""The Argo backend as the CLI sees it: a program submitted to Argo Workflows as a Workflow's
YAML, and its runs' status, logs and stopping. Imports neither the code generation nor the
Kubernetes client until used."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from sqlml.backends.argo.options import (
    add_cluster_options,
    add_workflow_options,
    argo_options,
    cluster,
)
from sqlml.backends.interface import RUN_COMMANDS, Backend, Program
from sqlml.errors import SqlmlError

if TYPE_CHECKING:
    from sqlml.backends.runs import RunViews
    from sqlml.datasources import ResultSet


class ArgoBackend(Backend):
    name = "argo"
    target = "argo"
    run_name = "name"
    helps: ClassVar[Mapping[str, str]] = {
        "logs": "print the logs of an Argo run's steps, and of their training and trial pods",
        "stop": "stop an Argo run, and the Kubeflow jobs and Katib Experiments it created",
    }

    def add_options(self, parser: argparse.ArgumentParser, command: str) -> None:
        if command == "run":
            add_workflow_options(parser, "--backend argo", retries=False)
            add_cluster_options(parser)
            parser.add_argument(
                "--detach",
                action="store_true",
                help="--backend argo: submit, print the run name, return",
            )
        elif command == "compile":
            add_workflow_options(parser, "--target argo")
        elif command in RUN_COMMANDS:
            if command == "stop":
                parser.add_argument(
                    "--terminate",
                    action="store_true",
                    help="end at once, without running exit handlers",
                )
            add_cluster_options(parser, namespace=True)

    def check(self, args: argparse.Namespace) -> str | None:
        if args.resume or args.timeout or args.junit:
            return "--resume, --timeout and --junit are for the local backend"
        return None

    def compile(self, program: Program, args: argparse.Namespace) -> str:
        from sqlml.backends.argo.codegen import to_argo_yaml

        return to_argo_yaml(program.statements, program.name, argo_options(args), program.dialect)

    def run(
        self,
        program: Program,
        args: argparse.Namespace | None,
        datasource: str | None,
        fmt: str,
        on_result: Callable[[Any], None] | None = None,
    ) -> int:
        """Submit ``program`` to Argo Workflows and watch it to its end (unless ``--detach``)."""
        from sqlml.backends.argo import submit
        from sqlml.backends.argo.codegen import to_argo
        from sqlml.backends.argo.kube import Kube
        from sqlml.backends.argo.submission import describe, write
        from sqlml.local_files import default_run_dir

        assert args is not None, "an Argo run takes the options of sqlml run"
        url = datasource or os.environ.get("SQLML_DATASOURCE")
        try:
            options = argo_options(args)
            workflow = to_argo(program.statements, program.name, options, program.dialect)
            manifest = workflow.model_dump(mode="json", by_alias=True, exclude_none=True)

            def record(kube: Kube, name: str) -> None:  # for sqlml ui's list of runs
                found = describe(
                    name, kube, cluster(args), manifest, program.statements, program.source, url
                )
                write(default_run_dir(), found)

            return submit.run(
                cluster(args),
                manifest,
                (args.secret, args.secret_key),
                url,
                detach=args.detach,
                positions={s.id: (s.line, s.column) for s in program.statements},
                submitted=record,
            )
        except SqlmlError as error:
            print(error.render(program.source), file=sys.stderr)
            return 1

    def status(
        self, run: str, datasource: str | None, args: argparse.Namespace
    ) -> tuple[str, ResultSet]:
        from sqlml.backends.argo.status import argo_status

        return argo_status(cluster(args), run)

    def logs(self, run: str, datasource: str | None, args: argparse.Namespace) -> None:
        from sqlml.backends.argo import submit
        from sqlml.backends.argo.kube import Kube

        submit.logs(Kube(cluster(args)), run, args.step, args.follow)

    def stop(self, run: str, datasource: str | None, args: argparse.Namespace) -> None:
        from sqlml.backends.argo import submit
        from sqlml.backends.argo.kube import Kube

        submit.stop(Kube(cluster(args)), run, args.terminate)

    def run_views(self) -> RunViews:
        from sqlml.backends.argo.views import VIEWS

        return VIEWS


BACKEND = ArgoBackend()
