"""TO IMPORT's node and its builders (the rules are in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, ColumnClause, Name, Position
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class ImportModelNode(ast.Statement):
    """``<select> TO IMPORT '<file>' [WITH ...] COLUMN ... [LABEL <column>] INTO <model>``."""

    select: str
    file: str
    file_pos: Position
    attributes: tuple[Attribute, ...]
    columns: ColumnClause
    label: Name | None
    into: Name


def build(children: list) -> Unsliced:
    select, file, *clauses, into = children
    clause = dict(clauses)
    make = partial(
        ImportModelNode,
        pos=pos(select),
        select=str(select).rstrip(),
        file=file.value,
        file_pos=pos(file.start),
        attributes=clause["with"].value if "with" in clause else (),
        columns=clause["column"],
        label=clause.get("label"),
        into=into,
    )
    return Unsliced(make, select.start_pos, into.end)


def import_into(children: list) -> Name:
    _, model = children
    return model


FRAGMENT = Fragment.load(
    __package__,
    statements=("import_model",),
    builders={"import_model": build, "import_into": import_into},
    clauses=("IMPORT",),
    end=("_INTO", "a TO IMPORT statement ends with COLUMN ... [LABEL <column>] INTO <model>"),
    sections=("WITH", "COLUMN", "LABEL", "INTO"),
)
