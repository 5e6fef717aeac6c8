"""TO RUN's handler: the rows of the SELECT into a Parquet file, the program run on them in
a child process, the tables it wrote into the INTO tables (all or none), their columns of a
SELECT column's name declared with its type where their values fit (:mod:`.column_types`).

A Python function runs in ``python -m sqlml.statements.run.child``, a script in the same
Python (both from the program file's folder, once :mod:`..runnable` allows them), an
image's program only inside that image:
on the Argo backend the step runs there (``python -m sqlml.runtime.step``); locally, where
sqlml starts no containers, it is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sqlml import imports
from sqlml.datasources import registry
from sqlml.datasources.base import Columns
from sqlml.errors import SqlmlError
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome
from sqlml.statements.run import launch, runnable
from sqlml.statements.run.api import SPEC_ENV, output_file, read_columns, write_columns
from sqlml.statements.run.handler.column_types import declared, program_view
from sqlml.statements.run.handler.into import write_tables
from sqlml.statements.run.handler.process import run_child
from sqlml.statements.run.ir import RunStatement

T = TypeVar("T")
STEP_MODULE = "sqlml.runtime.step"  # the entry point of a workflow step's container
HAND_OVER_PREFIX = "sqlml-run-"  # of a hand-over folder's name, then the pid of its sqlml


def credentials_env() -> set[str]:
    """The environment variables holding the database credentials a program gets only with
    run.datasource = TRUE: the URL, and those each datasource's driver reads."""
    return {
        "SQLML_DATASOURCE",
        *(name for source in registry.sources() for name in source.credentials_env),
    }


def run(statement: RunStatement, context: Context) -> Outcome:
    """Run the statement's program on the rows of its SELECT; write what it wrote."""
    datasource = context.datasource
    replace = bool(statement.attributes["output.replace"])
    for table in statement.tables:
        datasource.check_target(table, replace)  # before any work
    folder = (datasource.base_dir or Path.cwd()).resolve()
    refused = runnable.where_found(statement.program, statement.program_kind, folder)
    if refused is not None:
        raise SqlmlError(refused[0], line=statement.line, column=statement.column, hint=refused[1])
    argv, cwd = _command(statement, folder)
    types = datasource.result_types(statement.select)
    columns = program_view(datasource.read(statement.select, context.reporter), types)
    count = len(next(iter(columns.values()), ()))
    _remove_stale_hand_overs()
    with tempfile.TemporaryDirectory(prefix=f"{HAND_OVER_PREFIX}{os.getpid()}-") as work:
        env = _hand_over(statement, columns, folder, Path(work))
        del columns
        started = time.monotonic()
        timeout = float(statement.attributes["run.timeout"])
        run_child(argv, env, cwd, timeout, context.token, statement.program, context.log)
        took = time.monotonic() - started
        outputs = _written(statement, Path(work) / "tables")
    context.token.check()
    if outputs:
        typed = [(table, *declared(columns, types)) for table, columns in outputs]
        write_tables(datasource, typed, replace, context.token)
    written = ", ".join(
        f"{'.'.join(table)} ({len(next(iter(columns.values()), ()))} rows)"
        for table, columns in outputs
    )
    return Outcome(
        summary=f"ran {statement.program} on {count} rows in {took:.1f} s"
        + (f"; wrote {written}" if written else "")
    )


def _hand_over(
    statement: RunStatement, columns: Columns, folder: Path, work: Path
) -> dict[str, str]:
    """Write the rows and the run's description into ``work``; the child's environment:
    sqlml's, without the database credentials unless ``run.datasource`` hands them over."""
    rows = work / "rows.parquet"
    _exchanged(write_columns, columns, rows)
    (work / "tables").mkdir()
    spec = work / "run.json"
    description = {
        "program": statement.program,
        "folder": str(folder),
        "input": str(rows),
        "output": str(work / "tables"),
        "params": statement.params,
        "tables": [".".join(table) for table in statement.tables],
        "select": statement.select,
    }
    spec.write_text(json.dumps(description), encoding="utf-8")
    withheld = set() if statement.attributes.get("run.datasource") else credentials_env()
    return {
        **{k: v for k, v in os.environ.items() if k not in withheld},
        SPEC_ENV: str(spec),
        launch.HAND_OVER_ENV: str(work),  # removed by the supervisor if sqlml dies
        # what SQLFlow hands its runnables
        "SQLFLOW_TO_RUN_SELECT": statement.select,
        "SQLFLOW_TO_RUN_INTO": ",".join(description["tables"]),
        "SQLFLOW_TO_RUN_IMAGE": statement.image or "",
    }


def _remove_stale_hand_overs() -> None:
    """Remove the hand-over folders of this user's sqlml processes that are gone: one killed
    while it wrote the rows, before its program's supervisor could remove them."""
    for folder in Path(tempfile.gettempdir()).glob(f"{HAND_OVER_PREFIX}*-*"):
        pid = folder.name[len(HAND_OVER_PREFIX) :].split("-", 1)[0]
        try:
            if not pid.isdigit() or folder.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except OSError:  # gone meanwhile, or another user's process
            continue


def _written(statement: RunStatement, output: Path) -> list[tuple[list[str], Columns]]:
    """Each INTO table and the columns the program wrote for it; an error if it wrote none."""
    outputs = []
    for index, table in enumerate(statement.tables):
        path = output_file(output, index)
        if not path.exists():
            raise SqlmlError(
                f"the program {statement.program} ended without writing the INTO table "
                f"{'.'.join(table)}",
                hint="write every INTO table (a function returns {table: columns}, a script "
                "calls api.write); nothing was written",
            )
        outputs.append((table, _exchanged(read_columns, path)))
    return outputs


def _exchanged(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, a Parquet file written or read; DuckDB's errors as sqlml's."""
    duckdb = imports.load("duckdb")
    try:
        return function(*args)
    except duckdb.Error as error:
        raise SqlmlError(
            f"the rows could not be handed over as Parquet: {error}",
            hint="cast the columns DuckDB cannot store in the SELECT (to text, say)",
        ) from None


def _command(statement: RunStatement, folder: Path) -> tuple[list[str], Path]:
    """The child's command line and working folder."""
    if statement.program_kind == "function":
        return [sys.executable, "-m", "sqlml.statements.run.child"], folder
    if statement.program_kind == "script":
        script = folder / statement.program
        if not script.is_file():
            raise SqlmlError(
                f"the script {statement.program} is not a file in {folder}",
                line=statement.line,
                column=statement.column,
                hint="name the script by its path relative to the program file's folder",
            )
        return [sys.executable, str(script), *statement.command], folder
    if not _in_step_container():
        raise SqlmlError(
            f"TO RUN {statement.program} runs a program in the image {statement.image}, and "
            "the local backend starts no containers",
            line=statement.line,
            column=statement.column,
            hint="run the program with --backend argo (its step runs in that image, which "
            "has sqlml installed), or name a Python function or a script instead",
        )
    program, args = statement.entrypoint, statement.command
    if program is None:
        if not args:
            raise SqlmlError(
                f"TO RUN {statement.program} names no program to run in the image",
                line=statement.line,
                column=statement.column,
                hint='give it with CMD "program", "--argument", ... or after the tag: '
                "registry/image:tag/program",
            )
        program, args = args[0], args[1:]
    if program.lower().endswith(".py"):
        return [sys.executable, program, *args], Path.cwd()
    return [program, *args], Path.cwd()


def _in_step_container() -> bool:
    """Whether this process is a workflow step's (in the statement's image, on Argo)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return getattr(spec, "name", None) == STEP_MODULE
