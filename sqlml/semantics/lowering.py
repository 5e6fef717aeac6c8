"""What the kinds' analyses share: the lowering of ``<select> TO <clause> ...`` statements (the
SELECT checked, the step id, the output table checked) and small helpers."""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sqlml import ir
from sqlml.errors import CheckError
from sqlml.grammar import ast
from sqlml.semantics.attributes import Attr
from sqlml.semantics.table_names import same_table
from sqlml.tables import HELPER_MARK, OWN_TABLES, is_own_table

OUTPUT_REPLACE = Attr(
    "output.replace",
    "bool",
    False,
    "replace the output table even when sqlml did not write it or the SELECT reads it "
    "(without it, only a table sqlml wrote is replaced; sqlml's own tables never are)",
)


class Selecting(Protocol):
    """A parsed ``<select> TO <clause> ...`` statement."""

    text: str
    pos: ast.Position
    select: str
    attributes: tuple[ast.Attribute, ...]


@dataclass(frozen=True)
class Output:
    """The table a statement writes, where the statement names it, and whether it may replace
    a table sqlml did not write or one its queries read."""

    table: list[str]
    pos: ast.Position
    replace: bool
    writer: str  # who writes it, in messages: "TO PREDICT"
    fix: str = "write to another table"


Node = TypeVar("Node", bound=Selecting)
Lowered = TypeVar("Lowered", bound=ir.Statement)


def lower_selecting(
    statement: Node,
    prefix: str,
    dialect: str,
    clause: str,
    named: ast.Name,
    lower: Callable[[Node, str, str], Lowered],
    output: Callable[[Node, Lowered], Output | None],
) -> Lowered:
    """The IR of a ``<select> TO <clause> <named> ...`` statement: its SELECT checked (read
    only), ``lower(statement, step id, dialect)`` made of it, then the table it writes
    (``output(statement, lowered)``, if any) checked: none of sqlml's own tables, none its
    queries read unless replaced."""
    from sqlml.semantics.sql_check import check_query  # sqlglot, with the first such statement

    check_query(statement.select, statement.pos, dialect, clause, read_only=True)
    word = clause.split()[-1].lower()
    lowered = lower(statement, f"{prefix}-{word}-{slug(str(named))}", dialect)
    lowered = _with_images(statement, lowered)
    written = output(statement, lowered)
    if written is not None:
        _check_output(written)
        selects = [getattr(lowered, "select", None), _attributes(lowered).get("validation.select")]
        _check_overwrite(written, selects, dialect)
    return lowered


def _with_images(statement: Node, lowered: Lowered) -> Lowered:
    """The IR with the model zoo images the statement names (``image``, ``base_image``), for
    the kinds whose IR has those fields."""
    images = {
        name: getattr(statement, name)
        for name in ("image", "base_image")
        if getattr(statement, name, None) is not None and hasattr(lowered, name)
    }
    return dataclasses.replace(lowered, **images) if images else lowered


def _attributes(lowered: ir.Statement) -> dict[str, Any]:
    return getattr(lowered, "attributes", {})


def _check_output(output: Output) -> None:
    """A :class:`CheckError` if the output is one of sqlml's own tables or helper tables."""
    if not is_own_table(output.table):
        return
    name = ".".join(output.table)
    if HELPER_MARK in output.table[-1].lower():
        raise error(
            f"{output.writer} would write {name}, a name sqlml keeps for its staging tables "
            f"(those holding {HELPER_MARK})",
            output.pos,
            f"{output.fix}, without {HELPER_MARK} in its name",
        )
    raise error(
        f"{output.writer} would write {name}, one of the tables sqlml keeps its models and runs in",
        output.pos,
        f"{output.fix}; sqlml never writes {', '.join(OWN_TABLES)}",
    )


def _check_overwrite(output: Output, selects: list[str | None], dialect: str) -> None:
    """A :class:`CheckError` if a query of the statement reads the table it writes, unless
    ``output.replace`` says to replace it (table names compare as the DAG compares them)."""
    from sqlml.semantics.lineage import tables_read  # sqlglot

    name = ".".join(output.table)
    reads = [read for select in selects if select for read in tables_read(select, dialect)]
    if not output.replace and any(same_table(read, name) for read in reads):
        raise error(
            f"{output.writer} would write {name}, a table the statement reads: the output would "
            "replace the rows it reads",
            output.pos,
            f"write to another table, or add WITH output.replace = true to replace {name}",
        )


def common(statement: ast.Statement, prefix: str, what: str) -> dict:
    """The fields every IR statement has: a stable id, the text and the position."""
    return {"id": f"{prefix}-{slug(what)}", "text": statement.text, **where(statement.pos)}


def check_plot(statement: Selecting, attributes: dict, name: str, example: str) -> None:
    """A :class:`CheckError` unless the plot attribute ``name`` (if given) names a .png file."""
    plot = attributes.get(name)
    if plot is not None and not plot.lower().endswith(".png"):
        given = next(a for a in statement.attributes if a.name.lower() == name)
        raise error(
            f"{name} must name a .png file, not {plot!r}",
            given.pos,
            f"e.g. {name} = '{Path(plot).stem or example}.png'",
        )


def single_part(name: ast.Name, what: str) -> str:
    """The one part of a column's name."""
    if len(name.parts) != 1:
        raise error(f"{what} takes a column name, not {name}", name.pos, None)
    return name.parts[0]


def where(pos: ast.Position) -> dict[str, int]:
    """An IR statement's ``line`` and ``column``."""
    return {"line": pos.line, "column": pos.column}


def error(message: str, pos: ast.Position, hint: str | None) -> CheckError:
    """A :class:`CheckError` at ``pos``."""
    return CheckError(message, line=pos.line, column=pos.column, hint=hint)


def slug(text: str) -> str:
    """``text`` as a part of a step id (letters without their accents: modèle is modele)."""
    return re.sub(r"[^a-z0-9]+", "-", unaccented(text)).strip("-")[:40] or "statement"


def unaccented(text: str) -> str:
    """``text`` in lower case, its letters' accents and other combining marks left out
    (Unicode's compatibility decomposition, NFKD: ``Ü`` is ``u``, ``ß`` is ``ss``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_VALUE = re.compile(r"[^=]*=\s*")
_INSIDE_QUOTES = re.compile(r"[^=]*=\s*['\"`]\s*")


def value_start(
    statement: ast.Statement, attribute: ast.Attribute, inside_quotes: bool = False
) -> ast.Position:
    """Where an attribute's value starts in ``statement``: its quote, if quoted, or with
    ``inside_quotes`` the quoted text's (past its quote and leading blanks)."""
    text, start = statement.text, attribute.pos.offset - statement.pos.offset
    match = (_INSIDE_QUOTES if inside_quotes else _VALUE).match(text, start)
    if match is None:
        return attribute.pos
    end = match.end()
    newlines = text.count("\n", start, end)
    column = end - text.rfind("\n", 0, end) if newlines else attribute.pos.column + end - start
    return ast.Position(attribute.pos.line + newlines, column, statement.pos.offset + end)
