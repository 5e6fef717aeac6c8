"""A trained model version's lineage: the run and step that trained it, the program file and
the statement's position in it, who trained it where, the libraries' versions and a
fingerprint of every table its training read.

TO TRAIN (and each trial of a search) stores it in the version's metadata as ``lineage``::

    {"run": "20261205-112612-a1b2c3" | None, "step": "train_m" | None,
     "program": "train.sql" | None, "statement": {"line": 3, "column": 1},
     "user": "ann", "host": "build-1",
     "libraries": {"python": "3.12.4", "sqlml": "0.1.0", "xgboost": "2.1.1"},
     "tables": {"main.iris": "<fingerprint>" | None}}

The run and step are those of a recorded run (:class:`~sqlml.runtime.context.RunStep`;
none in the shell, the notebook and the editor), the program the file as given (none for
``sqlml -e``). The tables are those of the SELECT and of ``validation.select`` as written,
fingerprinted as the input cache fingerprints them (:mod:`sqlml.runtime.cache`), before the
rows are read, and once: the cache's key uses the same; a table the database cannot
fingerprint has None. No datasource URL is recorded, so no credential is. DESCRIBE MODEL
shows it (:func:`described`); versions stored before lineage was recorded have none.
"""

from __future__ import annotations

import getpass
import json
import platform
import socket
from typing import Any

import sqlml
from sqlml import ir
from sqlml.imports import loaded
from sqlml.runtime.context import Context

KEY = "lineage"


def fingerprints(statement: ir.TrainStatement, context: Context) -> dict[str, str | None]:
    """Each table the training reads (the SELECT's, ``validation.select``'s), its name's
    parts as written joined by dots, with its fingerprint (None: the database has none),
    taken once for the statement: its reads through the cache use the same."""
    from sqlml.runtime.cache import fingerprint, tables_read  # numpy, sqlglot: a training's

    datasource = context.datasource
    selects = [statement.select, statement.attributes.get("validation.select")]
    tables = {
        table
        for select in selects
        if isinstance(select, str)
        for table in tables_read(select, datasource.dialect)
    }
    taken = context.fingerprints
    return {".".join(t): fingerprint(datasource, t, taken) for t in sorted(tables)}


def lineage(
    statement: ir.Statement,
    context: Context,
    libraries: tuple[str, ...],
    tables: dict[str, str | None],
) -> dict[str, Any]:
    """The lineage of a version the ``statement`` running in ``context`` trains: with the
    versions of those of the family's ``libraries`` that are loaded, and ``tables``
    (:func:`fingerprints`, taken before the rows were read)."""
    run = context.run
    return {
        "run": run.run,
        "step": run.step,
        "program": run.program,
        "statement": {"line": statement.line, "column": statement.column},
        "user": _user(),
        "host": socket.gethostname(),
        "libraries": _libraries(libraries),
        "tables": tables,
    }


def _user() -> str | None:
    """The login name; None for a user the system does not know (a pod's arbitrary uid)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None


def _libraries(names: tuple[str, ...]) -> dict[str, str]:
    """Python's version, sqlml's and those of the libraries ``names`` that are loaded."""
    found = {"python": platform.python_version(), "sqlml": sqlml.__version__}
    for name in names:
        module = loaded(name)
        version = getattr(module, "__version__", None)
        if isinstance(version, str):
            found[name] = version
    return found


def described(metadata: dict[str, Any]) -> list[tuple[str, str]]:
    """DESCRIBE MODEL's rows of a version's lineage (none for a version stored without)."""
    found = metadata.get(KEY)
    if not isinstance(found, dict):
        return []
    position = found["statement"]
    return [
        ("run", _text(found["run"])),
        ("step", _text(found["step"])),
        ("program", _text(found["program"])),
        ("position", f"line {position['line']}, column {position['column']}"),
        ("user", _text(found["user"])),
        ("host", _text(found["host"])),
        ("libraries", json.dumps(found["libraries"], sort_keys=True)),
        ("tables", json.dumps(found["tables"], sort_keys=True)),
    ]


def _text(value: str | None) -> str:
    return "null" if value is None else value
