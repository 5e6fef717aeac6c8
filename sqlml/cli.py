"""The ``sqlml`` command.

Exit status: 0 on success, 1 on a user error (reported as ``file:line:column: message``),
2 on bad usage.
"""

from __future__ import annotations

import argparse
import codecs
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from sqlml import __version__
from sqlml.errors import SqlmlError
from sqlml.runtime.datasource import dialect_of, dialects
from sqlml.runtime.output import FORMATS
from sqlml.workflow_cli import add_run_options, run_options

if TYPE_CHECKING:
    from sqlml.backends.argo import ArgoOptions
    from sqlml.backends.argo.kube import Cluster
    from sqlml.backends.local.executor import RunResult
    from sqlml.junit import JUnitReport
    from sqlml.plan import StatementIO

USAGE_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sqlml",
        description="Train and use machine-learning models with SQL.",
        epilog="Run a string with: sqlml -e 'SELECT 1;'",
    )
    parser.add_argument("--version", action="version", version=f"sqlml {__version__}")
    parser.add_argument("-e", "--execute", metavar="SQL", help="run the statements in SQL")
    _common(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser("run", help="run .sql programs")
    run.add_argument("files", nargs="+", metavar="FILE")
    _common(run)
    add_run_options(run)
    _batch_options(run)
    _argo_options(run, "--backend argo", retries=False)
    _cluster_options(run)
    run.add_argument(
        "--detach", action="store_true", help="--backend argo: submit, print the run name, return"
    )

    check = commands.add_parser("check", help="parse and check programs without running them")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.add_argument(
        "--datasource",
        metavar="URL",
        help="also check tables, columns and models against this database",
    )
    _dialect(check)
    _junit_option(check)

    compile_ = commands.add_parser("compile", help="emit a program's workflow")
    compile_.add_argument("file", metavar="FILE")
    compile_.add_argument("--target", choices=["python", "argo"], default="python")
    compile_.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    _dialect(compile_)
    _argo_options(compile_, "--target argo")

    parse = commands.add_parser("parse", help="print a program's statements and their DAG")
    parse.add_argument("file", metavar="FILE")
    parse.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    _dialect(parse)

    repl = commands.add_parser("repl", help="an interactive shell (also plain `sqlml`)")
    _common(repl)

    export = commands.add_parser(
        "export", help="write a stored model to a file in its native format, metadata beside it"
    )
    export.add_argument("model", metavar="MODEL")
    export.add_argument(
        "file", metavar="FILE", help="XGBoost: .json or .ubj; Keras: .keras (+ FILE.sqlml.json)"
    )
    export.add_argument(
        "--datasource", metavar="URL", help="the database holding the model (as for run)"
    )
    export.add_argument("--version", type=int, metavar="N", help="the model version (newest)")

    status = commands.add_parser("status", help="the state of a run and of its steps")
    status.add_argument("run", metavar="RUN", help="the run id (local) or name (argo)")
    status.add_argument(
        "--backend", choices=["local", "argo"], default="local", help="where the run ran (local)"
    )
    _common(status)
    _cluster_options(status, namespace=True)
    logs = commands.add_parser(
        "logs", help="print the logs of an Argo run's steps, and of their training and trial pods"
    )
    logs.add_argument("run", metavar="RUN", help="the run name sqlml run --backend argo printed")
    logs.add_argument("--step", metavar="NAME", help="only this step's (a statement id)")
    logs.add_argument("-f", "--follow", action="store_true", help="follow them to the run's end")
    _cluster_options(logs, namespace=True)
    stop = commands.add_parser(
        "stop", help="stop an Argo run, and the Kubeflow jobs and Katib Experiments it created"
    )
    stop.add_argument("run", metavar="RUN", help="the run name sqlml run --backend argo printed")
    stop.add_argument(
        "--terminate", action="store_true", help="end at once, without running exit handlers"
    )
    _cluster_options(stop, namespace=True)
    return parser


def _argo_options(parser: argparse.ArgumentParser, title: str, retries: bool = True) -> None:
    argo = parser.add_argument_group(title)
    argo.add_argument("--image", help="the step image (default: sqlml:VERSION)")
    argo.add_argument("--namespace", help="the workflow's namespace")
    argo.add_argument("--service-account", metavar="NAME", help="the pods' service account")
    argo.add_argument(
        "--secret",
        metavar="NAME",
        default="sqlml-datasource",
        help="the Secret holding the datasource URL (default: sqlml-datasource)",
    )
    argo.add_argument(
        "--secret-key", metavar="KEY", default="url", help="the URL's key in it (default: url)"
    )
    argo.add_argument("--cpu", help="CPU request of every step pod, e.g. 500m")
    argo.add_argument("--memory", help="memory request of every step pod, e.g. 2Gi")
    argo.add_argument("--cpu-limit", metavar="CPU", help="CPU limit of every step pod")
    argo.add_argument("--memory-limit", metavar="MEMORY", help="memory limit of every step pod")
    argo.add_argument(
        "--run-as-user", type=int, default=1000, metavar="UID", help="non-root user id (1000)"
    )
    if retries:  # else add_run_options gave it
        argo.add_argument("--retries", type=int, default=0, help="retries of a failed step (0)")
    argo.add_argument(
        "--job-deadline",
        type=int,
        metavar="SECONDS",
        help="fail a distributed TO TRAIN's job that runs longer (default: 86400, a day)",
    )


def _cluster_options(parser: argparse.ArgumentParser, namespace: bool = False) -> None:
    cluster = parser.add_argument_group("Kubernetes")
    if namespace:
        cluster.add_argument("-n", "--namespace", help="the run's namespace (the context's)")
    cluster.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="the cluster's configuration (default: $KUBECONFIG, else ~/.kube/config, "
        "else the pod's service account)",
    )
    cluster.add_argument("--context", metavar="NAME", help="its context (default: the current)")


def _batch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="run every FILE even if an earlier one fails (default: stop at the first failure)",
    )
    _junit_option(parser)


def _junit_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--junit", metavar="FILE", help="also write a JUnit XML report (for CI) to FILE"
    )


def _dialect(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dialect",
        choices=dialects(),
        default=None,
        help="the SQL dialect of the program's standard SQL "
        "(default: the datasource's, else duckdb)",
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--datasource",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="database URL, e.g. mysql://user:password@host:3306/db "
        "(default: $SQLML_DATASOURCE, else duckdb:///sqlml.duckdb)",
    )
    parser.add_argument(
        "--format", choices=FORMATS, default=argparse.SUPPRESS, help="how results are printed"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    datasource = getattr(args, "datasource", None)
    fmt = getattr(args, "format", "table")
    try:
        if args.execute is not None:
            if args.command:
                parser.error("use either -e SQL or a command, not both")
            return _run_text(args.execute, "<-e>", datasource, Path.cwd(), fmt)
        if args.command == "run":
            if args.resume and len(args.files) > 1:
                parser.error("--resume resumes the run of one program: give one FILE")
            if args.backend == "argo" and (args.resume or args.timeout or args.junit):
                parser.error("--resume, --timeout and --junit are for the local backend")
            return _run_files(args, datasource, fmt)
        if args.command == "check":
            return _check(args.files, args.datasource, args.dialect, args.junit)
        if args.command == "compile":
            return _compile(args)
        if args.command == "parse":
            return _parse(args.file, args.dialect or "duckdb", args.json)
        if args.command == "export":
            return _export(args.model, Path(args.file), datasource, args.version)
        if args.command in ("status", "logs", "stop"):
            return _run_command(args, datasource, fmt)
        if args.command == "repl" or (args.command is None and _on_terminal()):
            return _repl(datasource, fmt)
    except SqlmlError as error:  # errors outside any program text, e.g. an unreadable file
        print(error.render("sqlml"), file=sys.stderr)
        return 1
    parser.print_help(sys.stderr)
    return USAGE_ERROR


def _read(file: str) -> str:
    """The text of a UTF-8 file, without the byte order mark it may start with."""
    try:
        data = Path(file).read_bytes()
    except OSError as error:
        raise SqlmlError(f"cannot read {file}: {error}") from None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _not_utf8(file, data, error.start) from None


def _not_utf8(file: str, data: bytes, start: int) -> SqlmlError:
    """The error for a file that is not UTF-8: where its first undecodable byte is."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return SqlmlError(
            f"cannot read {file}: it is UTF-16 text, not UTF-8", hint="save it as UTF-8"
        )
    line = data.count(b"\n", 0, start) + 1
    line_start = data.rfind(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", errors="replace")) + 1
    return SqlmlError(
        f"cannot read {file}: it is not UTF-8 text: the byte 0x{data[start]:02x} at line {line}, "
        f"column {column} is not part of a UTF-8 character",
        hint="save it as UTF-8",
    )


def _on_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _repl(datasource: str | None, fmt: str) -> int:
    try:
        from sqlml.repl.shell import run_shell
    except ModuleNotFoundError as error:
        if error.name not in ("prompt_toolkit", "pygments"):
            raise
        raise SqlmlError(
            f"the interactive shell needs {error.name}, which is not installed",
            hint="install the repl extra: pip install 'sqlml[repl]'",
        ) from None
    return run_shell(datasource, fmt)


def _statements(text: str, dialect: str = "duckdb") -> list:
    """Parse and check ``text`` (standard SQL in sqlglot's ``dialect``); raises SqlmlError."""
    from sqlml.grammar import parse
    from sqlml.semantics import analyze

    return analyze(parse(text), dialect)


def _run_files(args: argparse.Namespace, datasource: str | None, fmt: str) -> int:
    """Run each FILE in turn: all of them with --keep-going, else up to the first failure."""
    from sqlml.junit import JUnitReport

    report = JUnitReport() if args.junit else None
    status = 0
    try:
        for file in args.files:
            if status and not args.keep_going:
                if report is not None:
                    _not_run(report, file, dialect_of(datasource))
                continue
            try:
                text = _read(file)
            except SqlmlError as error:
                print(error.render("sqlml"), file=sys.stderr)
                if report is not None:
                    report.add_error(file, error, "read")
                status = 1
                continue
            status = (
                _run_text(text, file, datasource, Path(file).parent, fmt, args, report) or status
            )
    finally:
        if report is not None:
            report.write(args.junit)
    return status


def _not_run(report: JUnitReport, file: str, dialect: str) -> None:
    """Report the statements of a file left out after an earlier file failed."""
    try:
        statements = _statements(_read(file), dialect)
    except SqlmlError as error:
        report.add_error(file, error)
        return
    reason = "not run: an earlier file failed (--keep-going runs every file)"
    report.add_not_run(file, statements, reason)


def _run_text(
    text: str,
    source: str,
    datasource: str | None,
    base_dir: Path,
    fmt: str,
    args: argparse.Namespace | None = None,
    report: JUnitReport | None = None,
) -> int:
    """Run a program's text as a workflow (``args``: those of ``sqlml run``, None for a
    string); ``report`` gets its statements' outcomes."""
    from sqlml.codegen import to_workflow
    from sqlml.backends.local import RunOptions, run

    dialect = dialect_of(datasource)
    try:
        statements = _statements(text, dialect)
    except SqlmlError as error:
        print(error.render(source), file=sys.stderr)
        if report is not None:
            report.add_error(source, error)
        return 1
    if args is not None and args.backend == "argo":
        return _run_argo(statements, source, datasource, dialect, args)
    workflow = to_workflow(statements, Path(source).stem, dialect)
    if args is None:  # a string: no run id to announce, nothing to resume
        return run(workflow, RunOptions(), datasource, base_dir, fmt, source, announce=False)
    options = run_options(args)
    results: list[RunResult] = []
    status = run(workflow, options, datasource, base_dir, fmt, source, on_result=results.append)
    if report is not None:
        report.add_run(source, statements, results[0] if results else None)
    return status


def _run_argo(
    statements: list, source: str, datasource: str | None, dialect: str, args: argparse.Namespace
) -> int:
    """Submit a program to Argo Workflows and watch it to its end (unless ``--detach``)."""
    from sqlml.backends.argo import submit as argo_backend
    from sqlml.backends.argo.codegen import to_argo

    try:
        workflow = to_argo(statements, Path(source).stem, _argo(args), dialect)
        workflow.spec.parallelism = args.jobs
        return argo_backend.run(
            _cluster(args),
            workflow.model_dump(mode="json", by_alias=True, exclude_none=True),
            (args.secret, args.secret_key),
            datasource or os.environ.get("SQLML_DATASOURCE"),
            detach=args.detach,
            positions={s.id: (s.line, s.column) for s in statements},
        )
    except SqlmlError as error:
        print(error.render(source), file=sys.stderr)
        return 1


def _run_command(args: argparse.Namespace, datasource: str | None, fmt: str) -> int:
    """``sqlml status``, ``logs`` and ``stop``."""
    from sqlml.backends.argo import submit as argo_backend
    from sqlml.backends.argo.kube import Kube

    if args.command == "status":
        from sqlml.backends.argo.status import argo_status
        from sqlml.backends.local.status import local_status
        from sqlml.runtime.output import render

        if args.backend == "argo":
            state, steps = argo_status(_cluster(args), args.run)
        else:
            state, steps = local_status(datasource, args.run)
        print(f"run {args.run}: {state}", file=sys.stderr)
        sys.stdout.write(render(steps, fmt))
    elif args.command == "logs":
        argo_backend.logs(Kube(_cluster(args)), args.run, args.step, args.follow)
    else:  # reports on stderr what it stopped
        argo_backend.stop(Kube(_cluster(args)), args.run, args.terminate)
    return 0


def _cluster(args: argparse.Namespace) -> Cluster:
    from sqlml.backends.argo.kube import Cluster

    return Cluster(args.kubeconfig, args.context, args.namespace)


def _check(
    files: list[str], datasource_url: str | None, dialect: str | None, junit: str | None = None
) -> int:
    from sqlml.checking import check_program
    from sqlml.runtime.datasource import connect

    if junit:
        from sqlml.junit import JUnitReport
    datasource = connect(datasource_url) if datasource_url else None
    dialect = dialect or dialect_of(datasource_url)
    report = JUnitReport() if junit else None
    status = 0
    try:
        for file in files:
            try:
                errors = check_program(_read(file), dialect, datasource)
            except SqlmlError as error:  # unreadable file
                errors = [error]
            for error in errors:
                print(error.render(file), file=sys.stderr)
                status = 1
            if report is not None:
                report.add_errors(file, errors, "check")
    finally:
        if datasource is not None:
            datasource.close()
        if report is not None:
            report.write(junit)
    return status


def _compile(args: argparse.Namespace) -> int:
    from sqlml.backends.argo import to_argo_yaml
    from sqlml.backends.local.codegen import to_python

    file, dialect = args.file, args.dialect or "duckdb"
    try:
        statements = _statements(_read(file), dialect)
    except SqlmlError as error:
        print(error.render(file), file=sys.stderr)
        return 1
    if args.target == "argo":
        code = to_argo_yaml(statements, Path(file).stem, _argo(args), dialect)
    else:
        code = to_python(statements, Path(file).stem, str(Path(file).parent), dialect)
    if args.output:
        Path(args.output).write_text(code, encoding="utf-8")
    else:
        sys.stdout.write(code)
    return 0


def _argo(args: argparse.Namespace) -> ArgoOptions:
    from sqlml.backends.argo import ArgoOptions
    from sqlml.steps.kubeflow import RunPolicy

    def quantities(cpu: str | None, memory: str | None) -> dict[str, str]:
        return {key: value for key, value in (("cpu", cpu), ("memory", memory)) if value}

    image = {"image": args.image} if args.image else {}
    deadline = {}
    if args.job_deadline is not None:
        if args.job_deadline < 1:
            raise SqlmlError(
                f"--job-deadline must be at least 1 second, not {args.job_deadline}",
                hint="give the seconds a distributed training job may run, e.g. 86400",
            )
        deadline["job_run_policy"] = RunPolicy(active_deadline_seconds=args.job_deadline)
    return ArgoOptions(
        **image,
        namespace=args.namespace,
        service_account=args.service_account,
        secret=args.secret,
        secret_key=args.secret_key,
        requests=quantities(args.cpu, args.memory),
        limits=quantities(args.cpu_limit, args.memory_limit),
        run_as_user=args.run_as_user,
        retries=args.retries,
        **deadline,
    )


def _export(model: str, file: Path, datasource_url: str | None, version: int | None) -> int:
    from sqlml.runtime.datasource import connect
    from sqlml.runtime.model_export import export_model

    datasource = connect(datasource_url)
    try:
        stored, metadata = export_model(datasource, model, file, version)
    finally:
        datasource.close()
    print(f"exported model {model} version {stored.version} to {file} (metadata: {metadata})")
    return 0


def _parse(file: str, dialect: str, as_json: bool) -> int:
    import json

    from sqlml.plan import dependencies

    try:
        statements = _statements(_read(file), dialect)
    except SqlmlError as error:
        print(error.render(file), file=sys.stderr)
        return 1
    graph = dependencies(statements, dialect)
    if not as_json:
        for statement in statements:
            print(_summary(statement.id, graph.io[statement.id], graph.after[statement.id]))
        return 0
    program = {
        "statements": [
            {
                **statement.to_dict(),
                **{
                    field: sorted(value) if isinstance(value, frozenset) else value
                    for field, value in vars(graph.io[statement.id]).items()
                },
                "after": list(graph.after[statement.id]),
            }
            for statement in statements
        ],
        "dag": {statement.id: list(graph.after[statement.id]) for statement in statements},
    }
    print(json.dumps(program, indent=2, sort_keys=True))
    return 0


def _summary(statement_id: str, io: StatementIO, after: tuple[str, ...]) -> str:
    """One line: what a statement reads and writes, and what it runs after."""
    parts = [
        f"{verb} {', '.join([*sorted(tables), *(f'model {m}' for m in sorted(models))])}"
        for verb, tables, models in (
            ("reads", io.reads_tables, io.reads_models),
            ("writes", io.writes_tables, io.writes_models),
        )
        if tables or models
    ]
    if io.reads_all_models:
        parts.append("reads every model")
    if io.barrier:
        parts.append("barrier: runs after and before every other statement")
    parts.append(f"after {', '.join(after) or 'nothing'}")
    return f"{statement_id}: {'; '.join(parts)}"


if __name__ == "__main__":
    raise SystemExit(main())
