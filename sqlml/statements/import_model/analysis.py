"""The analysis of TO IMPORT: its WITH attributes and COLUMN checked, the IR made. The file
is read when the statement runs, by the process that runs it."""

from __future__ import annotations

from sqlml.grammar import ast
from sqlml.models.registry import importable_formats
from sqlml.semantics.attributes import Attr, check_attributes
from sqlml.semantics.lowering import error, lower_selecting, single_part, where
from sqlml.statements.import_model import syntax
from sqlml.statements.import_model.ir import ImportModelStatement

IMPORT_ATTRIBUTES = {
    "format": Attr(
        "format",
        "string",
        None,
        "the model file's format, one of "
        + ", ".join(f"{fmt} ({', '.join(ext)})" for fmt, ext in importable_formats().items())
        + " (default: told by the file's extension, else its first bytes); sqlml never loads "
        "pickles",
    ),
}


def _lower(statement: syntax.ImportModelNode, step_id: str, dialect: str) -> ImportModelStatement:
    attributes = check_attributes(statement.attributes, IMPORT_ATTRIBUTES, "TO IMPORT")
    fmt = (attributes.get("format") or "").lower()
    known = importable_formats()
    if fmt and fmt not in known:
        given = next(a for a in statement.attributes if a.name.lower() == "format")
        raise error(
            f"TO IMPORT reads no model files of format {fmt!r}",
            given.pos,
            f"the formats are {', '.join(known)}",
        )
    if not statement.file.strip():
        raise error("TO IMPORT names no file", statement.file_pos, "name the model's file")
    return ImportModelStatement(
        id=step_id,
        text=statement.text,
        **where(statement.pos),
        select=statement.select,
        file=statement.file,
        format=fmt,
        columns=_columns(statement.columns),
        label=single_part(statement.label, "LABEL") if statement.label else "",
        model=str(statement.into),
        attributes=attributes,
        file_at=[statement.file_pos.line, statement.file_pos.column],
        columns_at=[statement.columns.pos.line, statement.columns.pos.column],
    )


def _columns(clause: ast.ColumnClause) -> list[str]:
    """COLUMN's names, each a column of the SELECT (one model input), each once."""
    names: list[str] = []
    for column in clause.columns:
        if not isinstance(column, ast.Name) or column.parts == ("*",):
            at = column.pos
            raise error(
                "TO IMPORT's COLUMN names the SELECT's columns the model reads, in its inputs' "
                "order: no feature columns or *",
                at,
                "list the columns, e.g. COLUMN sepal_length, sepal_width",
            )
        name = single_part(column, "COLUMN")
        if name in names:
            raise error(f"COLUMN names {name} twice", column.pos, "name each column once")
        names.append(name)
    if clause.target is not None:
        raise error("TO IMPORT's COLUMN takes no FOR", clause.target.pos, "leave out FOR")
    return names


def lower(statement: syntax.ImportModelNode, prefix: str, dialect: str) -> ImportModelStatement:
    """The IR of a TO IMPORT (its SELECT in sqlglot's ``dialect``)."""
    return lower_selecting(statement, prefix, dialect, "TO IMPORT", statement.into, _lower, _none)


def _none(statement: syntax.ImportModelNode, lowered: ImportModelStatement) -> None:
    return None
