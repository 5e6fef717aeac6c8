"""The ``sqlml`` command.

Exit status: 0 on success, 1 on a user error (reported as ``file:line:column: message``),
2 on bad usage.
"""

from __future__ import annotations

import argparse
import codecs
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from sqlml import __version__, imports
from sqlml.backends import (
    DEFAULT,
    RUN_COMMANDS,
    Backend,
    Program,
    backend,
    backends,
    by_target,
    default,
)
from sqlml.datasources import dialect_of, dialects, parse_url, source_class
from sqlml.datasources.url import DEFAULT_DIALECT, DEFAULT_URL
from sqlml.errors import NotRun, SqlmlError, diagnosing
from sqlml.local_files import internal_error
from sqlml.runtime.output import FORMATS, ResultFiles, ResultStream, output_dir
from sqlml.ui.command import add_ui_parser, ui
from sqlml.workflow_cli import UsageParser, add_output_option, add_run_options

if TYPE_CHECKING:
    from sqlml.backends.reports import WriteResult
    from sqlml.datasources import Datasource
    from sqlml.junit import JUnitReport
    from sqlml.plan import StatementIO

USAGE_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="sqlml",
        description="Train and use machine-learning models with SQL.",
        epilog="Run a string with: sqlml -e 'SELECT 1;'",
    )
    parser.add_argument("--version", action="version", version=f"sqlml {__version__}")
    parser.add_argument("-e", "--execute", metavar="SQL", help="run the statements in SQL")
    _common(parser)
    _quiet(parser)
    add_output_option(parser)  # of -e
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser("run", help="run .sql programs")
    run.add_argument("files", nargs="+", metavar="FILE", help="a .sql program, or a folder of them")
    _common(run)
    add_run_options(run)
    add_output_option(run)
    _batch_options(run)
    _backend_options(run, "run")

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
    compile_.add_argument(
        "--target",
        choices=[known.target for known in backends().values()],
        default=backend(DEFAULT).target,
        help="the program of which backend: "
        + ", ".join(f"{known.target} ({known.name})" for known in backends().values()),
    )
    compile_.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    _dialect(compile_)
    _dialect_source(compile_)
    _backend_options(compile_, "compile")

    parse = commands.add_parser("parse", help="print a program's statements and their DAG")
    parse.add_argument("file", metavar="FILE")
    parse.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    _dialect(parse)
    _dialect_source(parse)

    repl = commands.add_parser("repl", help="an interactive shell (also plain `sqlml`)")
    _common(repl)
    _quiet(repl)

    export = commands.add_parser(
        "export",
        help="write a stored model to a file in its native format, metadata beside it",
        formatter_class=_ExportHelp,
    )
    export.add_argument("model", metavar="MODEL")
    export.add_argument("file", metavar="FILE", help=_EXPORT_FORMATS)
    export.add_argument(
        "--datasource", metavar="URL", help="the database holding the model (as for run)"
    )
    export.add_argument(
        "--version",
        type=_model_version,
        metavar="V",
        help="the model version: its number or an alias (default: the newest)",
    )
    export.add_argument(
        "--format",
        dest="export_format",
        choices=("model", "sql", "onnx"),
        default="model",
        help="model: the library's own format (and the metadata); sql: the model compiled "
        "into SQL, a CREATE VIEW of its predictions that the database runs without sqlml; "
        "onnx: the model converted to ONNX (needs the import extra)",
    )
    export.add_argument(
        "--dialect",
        choices=dialects(),
        default=None,
        help="with --format sql, the SQL dialect written (default: the datasource's)",
    )
    export.add_argument(
        "--table",
        metavar="NAME",
        help="with --format sql, the table (or view) whose rows the view predicts "
        "(default: the one the model's training SELECT read)",
    )

    for command in RUN_COMMANDS:
        _run_command_parser(commands, command)
    add_ui_parser(commands)
    return parser


def _run_command_parser(commands: argparse._SubParsersAction, command: str) -> None:
    """The parser of ``command``, one of status, logs and stop: its default backend is the
    first that supports it (the default backend first), whose help logs and stop show."""
    chosen = default(command)
    if command == "status":
        names = [f"{b.run_name} ({b.name})" for b in backends().values() if b.supports(command)]
        summary, run_help = "the state of a run and of its steps", f"the run {' or '.join(names)}"
        where = "where the run ran"
    else:
        summary = chosen.helps.get(command, f"{command} a run")
        run_help = f"the run {chosen.run_name} sqlml run --backend {chosen.name} printed"
        where = "the run's backend"
    parser = commands.add_parser(command, help=summary)
    parser.add_argument("run", metavar="RUN", help=run_help)
    parser.add_argument(
        "--backend",
        choices=[b.name for b in backends().values()],
        default=chosen.name,
        help=f"{where} ({chosen.name})",
    )
    if command == "status":
        _common(parser)
    elif command == "logs":
        parser.add_argument("--step", metavar="NAME", help="only this step's (a statement id)")
        parser.add_argument(
            "-f", "--follow", action="store_true", help="follow them to the run's end"
        )
    _backend_options(parser, command)


def _backend_options(parser: argparse.ArgumentParser, command: str) -> None:
    """Each backend's own options of ``command``."""
    for known in backends().values():
        known.add_options(parser, command)


_EXPORT_FORMATS = "the files of each model family"  # FILE's help, in full when shown


class _ExportHelp(argparse.HelpFormatter):
    """``sqlml export``'s help, naming the files it writes only when it is shown: listing
    them imports every model family, which other commands do not need."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.help == _EXPORT_FORMATS:
            return _export_formats()
        return super()._get_help_string(action)


def _export_formats() -> str:
    """The files ``sqlml export`` writes, by model family."""
    from sqlml.models import families
    from sqlml.models.export import METADATA_SUFFIX

    formats = "; ".join(f"{f.name}: {' or '.join(f.extensions)}" for f in families().values())
    return f"{formats} (+ FILE{METADATA_SUFFIX})"


def _batch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--select",
        action="append",
        metavar="PATTERN",
        help="run only the FILEs (and the .sql files in the FILE folders) that match the glob "
        "PATTERN, matched from the path's end (e.g. 'staging/*.sql'), or lie in the folder "
        "PATTERN names; repeat it to select more",
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help="run every FILE even if an earlier one fails (default: stop at the first failure)",
    )
    _junit_option(parser)
    parser.add_argument(
        "--run-results",
        metavar="FILE",
        help="also write each statement's status, timing, rows and message as JSON to FILE",
    )


def _junit_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--junit", metavar="FILE", help="also write a JUnit XML report (for CI) to FILE"
    )
    parser.add_argument(
        "--junit-warnings",
        choices=("failure", "passed"),
        default="failure",
        help="a warning in the JUnit report: a failure of type warning, which CI systems list "
        "(default), or a passed test case with the warning in its system-out",
    )


def _dialect(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dialect",
        choices=dialects(),
        default=None,
        help="the SQL dialect of the program's standard SQL "
        f"(default: the datasource's, else {DEFAULT_DIALECT})",
    )


def _dialect_source(parser: argparse.ArgumentParser) -> None:
    """``--datasource`` of a command that only reads its SQL dialect (no connection)."""
    parser.add_argument(
        "--datasource",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="the database the program runs on, whose SQL dialect it is in unless --dialect "
        "says (default: $SQLML_DATASOURCE); not connected to",
    )


def _quiet(parser: argparse.ArgumentParser) -> None:
    """The shell's ``-q``: as psql's, results and errors only."""
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help="the shell: no banner and no messages (summaries, timings, the replies of "
        "backslash commands), only results and errors",
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--datasource",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="database URL, e.g. mysql://user:password@host:3306/db "
        f"(default: $SQLML_DATASOURCE, else {DEFAULT_URL})",
    )
    parser.add_argument(
        "--format", choices=FORMATS, default=argparse.SUPPRESS, help="how results are printed"
    )


def main(argv: Sequence[str] | None = None) -> int:
    imports.hide_unused()  # sqlml's own process: see sqlml.imports
    try:
        parser = _parser()
    except SqlmlError as error:  # an installed plugin that cannot be used
        print(error.render("sqlml"), file=sys.stderr)
        return 1
    args = parser.parse_args(argv)
    datasource = getattr(args, "datasource", None)
    fmt = getattr(args, "format", "table")
    args.output_dir = getattr(args, "output_dir", None)
    if args.output_dir is not None and args.execute is None and args.command != "run":
        parser.error("--output-dir keeps the results of sqlml run and sqlml -e SQL")
    try:
        if args.execute is not None:
            if args.command:
                parser.error("use either -e SQL or a command, not both")
            write = (
                ResultStream(fmt)
                if args.output_dir is None
                else ResultFiles(output_dir(args.output_dir), "execute-", fmt).write
            )
            return _run_text(args.execute, "<-e>", datasource, Path.cwd(), fmt, write_result=write)
        if args.command == "run":
            args.files = _selected(args.files, args.select)
            if args.resume and len(args.files) > 1:
                parser.error("--resume resumes the run of one program: give one FILE")
            bad = backend(args.backend).check(args) or _here_only(args)
            if bad:
                parser.error(bad)
            return _run_files(args, datasource, fmt)
        if args.command == "check":
            return _check(
                args.files, args.datasource, args.dialect, args.junit, args.junit_warnings
            )
        if args.command == "compile":
            return _compile(args, args.dialect or dialect_of(datasource))
        if args.command == "parse":
            return _parse(args.file, args.dialect or dialect_of(datasource), args.json)
        if args.command == "export":
            if args.export_format != "sql" and (args.dialect or args.table):
                parser.error("--dialect and --table are for --format sql")
            if args.export_format == "sql":
                return _export_sql(args, datasource)
            if args.export_format == "onnx":
                return _export_onnx(args, datasource)
            return _export(args.model, Path(args.file), datasource, args.version)
        if args.command in RUN_COMMANDS:
            return _run_command(args, datasource, fmt)
        if args.command == "ui":
            return ui(args, datasource)
        if args.command == "repl" or (args.command is None and _is_shell_input()):
            return _repl(datasource, fmt, getattr(args, "quiet", False))
    except SqlmlError as error:  # errors outside any program text, e.g. an unreadable file
        print(error.render("sqlml"), file=sys.stderr)
        return 1
    except Exception as error:  # a bug: one paragraph, its traceback kept in a file
        where = f"sqlml {args.command}" if args.command else "sqlml"
        print(internal_error(error, where).render("sqlml"), file=sys.stderr)
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


def _is_shell_input() -> bool:
    """Whether plain ``sqlml`` is the shell: on a terminal, or with a script piped on stdin."""
    return not sys.stdin.isatty() or sys.stdout.isatty()


def _repl(datasource: str | None, fmt: str, quiet: bool = False) -> int:
    try:
        from sqlml.repl.shell import run_shell
    except ModuleNotFoundError as error:
        if error.name not in ("prompt_toolkit", "pygments"):
            raise
        raise SqlmlError(
            f"the interactive shell needs {error.name}, which is not installed",
            hint="install the repl extra: pip install 'sqlml[repl]'",
        ) from None
    return run_shell(datasource, fmt, quiet)


def _statements(text: str, dialect: str = DEFAULT_DIALECT, source: str | None = None) -> list:
    """Parse and check ``text`` (standard SQL in sqlglot's ``dialect``), the program
    ``source`` that its warnings name; raises SqlmlError."""
    from sqlml.grammar import parse
    from sqlml.semantics import analyze

    with diagnosing(source):
        return analyze(parse(text), dialect)


def _selected(paths: list[str], patterns: list[str] | None) -> list[str]:
    """The files of ``paths`` (a folder: the .sql files under it, in path order) that match
    one of the ``--select`` ``patterns`` (all of them without patterns)."""
    files = []
    for path in paths:
        folder = Path(path)
        if folder.is_dir():
            found = sorted(str(file) for file in folder.rglob("*.sql") if file.is_file())
            if not found:
                raise SqlmlError(
                    f"the folder {path} holds no .sql files", hint="give .sql files or folders"
                )
            files += found
        else:
            files.append(path)
    if not patterns:
        return files
    chosen = [file for file in files if any(_matches(file, pattern) for pattern in patterns)]
    if not chosen:
        raise SqlmlError(
            f"--select {' --select '.join(patterns)} matches none of the {len(files)} files given",
            hint="a PATTERN is a glob matched from the end of a path ('load*.sql', "
            "'staging/*.sql') or a folder holding the files",
        )
    return chosen


def _matches(file: str, pattern: str) -> bool:
    """Whether ``file`` matches the glob ``pattern`` from its end, or lies in the folder it
    names."""
    path = PurePath(file)
    folder = PurePath(pattern.rstrip("/\\") or pattern)
    return path.match(pattern) or folder in path.parents


def _here_only(args: argparse.Namespace) -> str | None:
    """What is wrong with ``sqlml run``'s options that only backends running the statements
    in this process have."""
    if args.output_dir is not None and not backend(args.backend).runs_here:
        here = " or ".join(name for name, known in backends().items() if known.runs_here)
        return (
            f"--output-dir is for the {here} backend: the {args.backend} backend's results are "
            f"printed in its steps' logs (sqlml logs RUN --backend {args.backend})"
        )
    return None


def _result_writers(args: argparse.Namespace, fmt: str) -> list[WriteResult | ResultStream | None]:
    """What keeps the results of each FILE of a run here (None: a run elsewhere).

    With ``--output-dir``, files of their own: ``STEM-STATEMENT_ID.EXT``, prefixed with the
    FILE's position when several FILEs run (``1-``, ``2-``...; ``01-`` from 10 FILEs on), so
    that the names are unique and sort in run order. Else stdout, shared by the FILEs (see
    ``ResultStream``).
    """
    if not backend(args.backend).runs_here:
        return [None] * len(args.files)
    if args.output_dir is None:
        return [ResultStream(fmt)] * len(args.files)
    folder = output_dir(args.output_dir)
    width = len(str(len(args.files)))
    several = len(args.files) > 1
    return [
        ResultFiles(folder, f"{index:0{width}d}-" * several + f"{Path(file).stem}-", fmt).write
        for index, file in enumerate(args.files, 1)
    ]


def _run_files(args: argparse.Namespace, datasource: str | None, fmt: str) -> int:
    """Run each FILE in turn: all of them with --keep-going, else up to the first failure;
    then print how many statements passed, warned, failed, erred and were skipped (when the
    backend reported each run's outcome)."""
    from sqlml.junit import JUnitReport

    report = JUnitReport(args.junit_warnings)
    writers = _result_writers(args, fmt)
    status = 0
    started = time.time()
    try:
        for file, write in zip(args.files, writers, strict=True):
            if status and not args.keep_going:
                _not_run(report, file, dialect_of(datasource))
                continue
            try:
                text = _read(file)
            except SqlmlError as error:
                print(error.render("sqlml"), file=sys.stderr)
                report.add_error(file, error, "read")
                status = 1
                continue
            base_dir = Path(file).parent
            status = _run_text(text, file, datasource, base_dir, fmt, args, report, write) or status
    finally:
        if args.junit:
            report.write(args.junit)
        if args.run_results:
            from sqlml.run_results import run_results, write_run_results

            write_run_results(args.run_results, run_results(report, started, time.time()))
    if not report.unreported:  # else some statements' outcomes are unknown here
        print(f"sqlml: done: {report.summary()}", file=sys.stderr)
    return status


def _not_run(report: JUnitReport, file: str, dialect: str) -> None:
    """Report the statements of a file left out after an earlier file failed: a note for
    each (or the error that keeps the file from parsing)."""
    from sqlml.backends.reports import SKIPPED, Verdict

    try:
        statements = _statements(_read(file), dialect, file)
    except SqlmlError as error:
        print(error.render(file), file=sys.stderr)
        report.add_error(file, error)
        return
    notes = [
        NotRun(
            "not run: an earlier file failed",
            line=statement.line,
            column=statement.column,
            hint="--keep-going runs every file",
        )
        for statement in statements
    ]
    for note in notes:
        print(note.render(file), file=sys.stderr)
    report.add_not_run(file, statements, [Verdict(SKIPPED, note) for note in notes])


def _run_text(
    text: str,
    source: str,
    datasource: str | None,
    base_dir: Path,
    fmt: str,
    args: argparse.Namespace | None = None,
    report: JUnitReport | None = None,
    write_result: WriteResult | ResultStream | None = None,
) -> int:
    """Run a program's text on ``args.backend`` (``args``: those of ``sqlml run``; None for
    a string, run on the default backend); ``report`` gets its statements' outcomes (and
    the rows of their results), ``write_result`` (runs here only) its results: a
    ``ResultStream`` tags them with the program and statement."""
    dialect = dialect_of(datasource)
    chosen = backend(args.backend if args is not None else DEFAULT)
    _parse_on(datasource, chosen)
    try:
        statements = _statements(text, dialect, source)
    except SqlmlError as error:
        print(error.render(source), file=sys.stderr)
        if report is not None:
            report.add_error(source, error)
        return 1
    program = Program(statements, Path(source).stem, source, dialect, base_dir)
    if isinstance(write_result, ResultStream):
        write_result = write_result.of(source, statements)
    if report is not None and write_result is not None:
        write_result = report.counting(source, write_result)
    results: list[object] = []
    kept = {} if write_result is None else {"write_result": write_result}
    with diagnosing(source):
        status = chosen.run(program, args, datasource, fmt, on_result=results.append, **kept)
    if report is not None:
        report.add_run(source, statements, results[0] if results else None)
    return status


def _parse_on(datasource: str | None, chosen: Backend) -> None:
    """The database's own parser may read with the database a run here opens (DuckDB's
    file: the run then shares its database instead of the parser creating one of its own)."""
    url = parse_url(datasource)
    source_class(url).parse_on(url if chosen.runs_here else None)


def _run_command(args: argparse.Namespace, datasource: str | None, fmt: str) -> int:
    """``sqlml status``, ``logs`` and ``stop``."""
    chosen = backend(args.backend)
    if args.command == "status":
        from sqlml.runtime.output import render

        state, steps = chosen.status(args.run, datasource, args)
        print(f"run {args.run}: {state}", file=sys.stderr)
        sys.stdout.write(render(steps, fmt))
    elif args.command == "logs":
        chosen.logs(args.run, datasource, args)
    else:  # reports on stderr what it stopped
        chosen.stop(args.run, datasource, args)
    return 0


def _check(
    files: list[str],
    datasource_url: str | None,
    dialect: str | None,
    junit: str | None = None,
    warnings: str = "failure",
) -> int:
    """Check each FILE, as ``sqlml run`` would run them one after the other: its errors and
    warnings on stderr; 1 if there is an error."""
    from sqlml.checking import Checker, errors_of

    if junit:
        from sqlml.junit import JUnitReport
    dialect = dialect or dialect_of(datasource_url)
    report = JUnitReport(warnings) if junit else None
    status = 0
    try:
        with (
            _check_datasource(datasource_url) as datasource,
            Checker(dialect, datasource) as checker,
        ):
            for file in files:
                try:
                    text = _read(file)
                except SqlmlError as error:
                    found = [error]
                else:
                    if datasource is not None:  # its relative paths, from its folder
                        datasource.read_files_from(Path(file).parent)
                    with diagnosing(file):
                        found = checker.check(text)
                for each in found:
                    print(each.render(file), file=sys.stderr)
                if errors_of(found):
                    status = 1
                if report is not None:
                    report.add_errors(file, found, "check")
    finally:
        if report is not None:
            report.write(junit)
    return status


@contextmanager
def _check_datasource(url: str | None) -> Iterator[Datasource | None]:
    """The datasource programs are checked against (None: their text only)."""
    from sqlml.datasources import connect

    if url is None:
        yield None
        return
    datasource = connect(url)
    try:
        type(datasource).parse_on(datasource.url)  # its parser may share the open database
        yield datasource
    finally:
        datasource.close()
        type(datasource).parse_on(None)


def _compile(args: argparse.Namespace, dialect: str) -> int:
    file = args.file
    try:
        statements = _statements(_read(file), dialect, file)
    except SqlmlError as error:
        print(error.render(file), file=sys.stderr)
        return 1
    program = Program(statements, Path(file).stem, file, dialect, Path(file).parent)
    code = by_target(args.target).compile(program, args)
    if args.output:
        Path(args.output).write_text(code, encoding="utf-8")
    else:
        sys.stdout.write(code)
    return 0


def _model_version(text: str) -> int | str:
    """A model version as ``--version`` takes it: a number, or an alias."""
    return int(text) if text.isdigit() else text


def _export(model: str, file: Path, datasource_url: str | None, version: int | str | None) -> int:
    from sqlml.datasources import connect
    from sqlml.models.export import export_model

    datasource = connect(datasource_url)
    try:
        stored, metadata = export_model(datasource, model, file, version)
    finally:
        datasource.close()
    print(f"exported model {model} version {stored.version} to {file} (metadata: {metadata})")
    return 0


def _export_sql(args: argparse.Namespace, datasource_url: str | None) -> int:
    from sqlml.datasources import connect
    from sqlml.models.export import export_sql

    datasource = connect(datasource_url)
    try:
        stored = export_sql(
            datasource, args.model, Path(args.file), args.dialect, args.table, args.version
        )
    finally:
        datasource.close()
    print(f"exported model {args.model} version {stored.version} as SQL to {args.file}")
    return 0


def _export_onnx(args: argparse.Namespace, datasource_url: str | None) -> int:
    from sqlml.datasources import connect
    from sqlml.models.export import export_onnx

    datasource = connect(datasource_url)
    try:
        stored = export_onnx(datasource, args.model, Path(args.file), args.version)
    finally:
        datasource.close()
    print(f"exported model {args.model} version {stored.version} as ONNX to {args.file}")
    return 0


def _parse(file: str, dialect: str, as_json: bool) -> int:
    import json

    from sqlml.plan import dependencies

    try:
        statements = _statements(_read(file), dialect, file)
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
    if io.writes_files:
        parts.append(f"writes the file {', '.join(sorted(io.writes_files))}")
    if io.reads_all_models:
        parts.append("reads every model")
    if io.barrier:
        parts.append("barrier: runs after and before every other statement")
    parts.append(f"after {', '.join(after) or 'nothing'}")
    return f"{statement_id}: {'; '.join(parts)}"


if __name__ == "__main__":
    raise SystemExit(main())
