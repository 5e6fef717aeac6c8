"""The analysis of TO RUN: what the program is (a function, a script or an image), sqlml's
attributes apart from the program's parameters, and the INTO tables checked.

Nothing of the program is imported or run here: ``sqlml check`` only reads its name, and
refuses one that is not runnable (:mod:`.runnable`: a module of Python's, of sqlml's or
installed and not declared; a script outside the program's folder).
"""

from __future__ import annotations

import keyword
import re
from typing import Any

from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, Name
from sqlml.semantics.attributes import Attr, check_attributes, pod_resources
from sqlml.semantics.lineage import tables_read
from sqlml.semantics.lowering import OUTPUT_REPLACE, error, lower_selecting, where
from sqlml.semantics.table_names import same_table
from sqlml.statements.run import runnable, syntax
from sqlml.statements.run.ir import RunStatement
from sqlml.tables import HELPER_MARK, is_own_table

DEFAULT_TIMEOUT = 3600.0  # seconds

RUN_ATTRIBUTES = {
    "run.timeout": Attr(
        "run.timeout",
        "float",
        DEFAULT_TIMEOUT,
        "seconds the program may run; past them it is stopped (with every process it started) and "
        "the statement fails, writing nothing",
        minimum=0,
        exclusive_minimum=True,
    ),
    "run.datasource": Attr(
        "run.datasource",
        "bool",
        False,
        "hand the program the database credentials sqlml's environment holds "
        "($SQLML_DATASOURCE, with its password, and PGPASSWORD, MYSQL_PWD); FALSE: the program "
        "runs without them (it gets its rows and writes its tables through files)",
    ),
    "output.replace": OUTPUT_REPLACE,
    **pod_resources("run"),
}

# The attributes that are sqlml's; every other WITH attribute is a parameter of the program.
OWN_PREFIXES = ("run.", "output.")

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def lower(statement: syntax.RunNode, prefix: str, dialect: str) -> RunStatement:
    """The IR of a TO RUN (its SELECT in sqlglot's ``dialect``)."""
    return lower_selecting(
        statement, prefix, dialect, "TO RUN", statement.program, _lower, lambda *_: None
    )


def _lower(statement: syntax.RunNode, step_id: str, dialect: str) -> RunStatement:
    program = str(statement.program)
    kind = program_kind(program)
    if kind is None:
        raise error(
            f"TO RUN {program}: the program is not a Python function, a script nor an image",
            statement.program.pos,
            "name a function as package.module.function, a script as path/to/script.py "
            "(relative to the program file), or an image as registry/image:tag",
        )
    image, entrypoint = split_image(program) if kind == "image" else (None, None)
    if kind == "function":
        _check_function(statement.program)
    refused = runnable.by_name(program, kind)
    if refused is not None:
        raise error(refused[0], statement.program.pos, refused[1])
    if kind == "function" and statement.command:
        raise error(
            "CMD gives a script's or an image's command-line arguments; a Python "
            "function takes its parameters from WITH",
            statement.program.pos,
            "write WITH name = value, ... instead of CMD",
        )
    own = [a for a in statement.attributes if a.name.lower().startswith(OWN_PREFIXES)]
    attributes = check_attributes(own, RUN_ATTRIBUTES, "TO RUN")
    params = [a for a in statement.attributes if a not in own]
    if kind == "function":
        _check_keywords(params)
    tables = _tables(statement, attributes, dialect)
    if kind == "image" and tables and not statement.command and entrypoint is None:
        raise error(
            f"TO RUN {program} INTO ... needs CMD before INTO: the program in the image that "
            "writes the tables",
            statement.into_pos,
            f'write TO RUN {program} CMD "program.py", "--argument", ... INTO ..., or name '
            "the program after the image's tag: registry/image:tag/program",
        )
    return RunStatement(
        id=step_id,
        text=statement.text,
        **where(statement.pos),
        select=statement.select,
        program=program,
        program_kind=kind,
        command=list(statement.command),
        params=_params(params),
        tables=tables,
        attributes=attributes,
        image=image,
        entrypoint=entrypoint,
    )


def program_kind(program: str) -> str | None:
    """``"script"`` for a ``.py`` path, ``"image"`` for a name with ``/`` or ``:``,
    ``"function"`` for a dotted name; None for anything else."""
    if program.lower().endswith(".py") and ":" not in program:
        return "script"
    if "/" in program or ":" in program:
        return "image"
    if "." in program.strip("."):
        return "function"
    return None


def split_image(program: str) -> tuple[str, str | None]:
    """The image and the entrypoint of ``registry/image:tag[/entrypoint]``: what follows the
    tag's first ``/``."""
    tag = program.rfind(":")
    slash = program.find("/", tag) if tag >= 0 else -1
    if slash < 0:
        return program, None
    return program[:slash], program[slash + 1 :] or None


def _check_function(program: Name) -> None:
    parts = str(program).split(".")
    if len(parts) < 2 or not all(
        _IDENTIFIER.fullmatch(p) and not keyword.iskeyword(p) for p in parts
    ):
        raise error(
            f"TO RUN {program}: a Python function is named module.function (or "
            "package.module.function), each part a Python identifier",
            program.pos,
            None,
        )


def _check_keywords(params: list[Attribute]) -> None:
    """A function takes the WITH values as keyword arguments: their names are identifiers."""
    for attribute in params:
        if not _IDENTIFIER.fullmatch(attribute.name) or keyword.iskeyword(attribute.name):
            raise error(
                f"{attribute.name} cannot be a keyword argument of the function: a function "
                "takes each WITH value by its name",
                attribute.pos,
                "name it as a Python identifier (bins, not bin.count), or read the "
                "parameters in a script with api.params()",
            )


def _params(given: list[Attribute]) -> dict[str, Any]:
    """The WITH values handed to the program, as written (lists as lists)."""
    params: dict[str, Any] = {}
    for attribute in given:
        if isinstance(attribute.value, ast.Candidates):
            raise error(
                f"{attribute.value.function}(...) gives candidates to a hyperparameter "
                "search, which TO RUN does not run",
                attribute.value.pos,
                "give the program one value",
            )
        if attribute.name in params:
            raise error(f"attribute {attribute.name} is given twice", attribute.pos, None)
        params[attribute.name] = _plain(attribute.value)
    return params


def _plain(value: ast.Value) -> Any:
    return [_plain(item) for item in value] if isinstance(value, tuple) else value


def _tables(statement: syntax.RunNode, attributes: dict[str, Any], dialect: str) -> list[list[str]]:
    """The INTO tables, checked: each once, none of sqlml's, none the SELECT reads (but
    with ``output.replace``)."""
    reads = tables_read(statement.select, dialect)
    seen: list[str] = []
    for table in statement.into:
        name = str(table)
        if any(same_table(name, other) for other in seen):
            raise error(f"INTO names the table {name} twice", table.pos, None)
        seen.append(name)
        if is_own_table(table.parts):
            held = HELPER_MARK in table.parts[-1].lower()
            what = "a name sqlml keeps for its staging tables" if held else "one of sqlml's tables"
            raise error(
                f"TO RUN would write {name}, {what}",
                table.pos,
                "write into another table",
            )
        if not attributes["output.replace"] and any(same_table(r, name) for r in reads):
            raise error(
                f"TO RUN would write {name}, a table the statement reads: the output would "
                "replace the rows it reads",
                table.pos,
                f"write into another table, or add WITH output.replace = true to replace {name}",
            )
    return [list(table.parts) for table in statement.into]
