"""TO TRAIN's node and its builder (the rule is in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, ColumnClause, Name
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class TrainStatement(ast.Statement):
    """``<select> TO TRAIN <estimator> [WITH ...] [COLUMN ...] [LABEL ...] [USING ...] INTO``."""

    select: str
    estimator: Name
    attributes: tuple[Attribute, ...]
    columns: tuple[ColumnClause, ...]
    label: Name | None
    using: Name | None
    into: Name


def build(children: list) -> Unsliced:
    select, estimator, *clauses, into = children
    attributes: tuple[Attribute, ...] = ()
    columns: list[ColumnClause] = []
    label = using = None
    for kind, value in clauses:
        if kind == "with":
            attributes = value.value
        elif kind == "column":
            columns.append(value)
        elif kind == "label":
            label = value
        else:
            using = value
    make = partial(
        TrainStatement,
        pos=pos(select),
        select=str(select).rstrip(),
        estimator=estimator,
        attributes=attributes,
        columns=tuple(columns),
        label=label,
        using=using,
        into=into,
    )
    return Unsliced(make, select.start_pos, into.end)


FRAGMENT = Fragment.load(
    __package__,
    statements=("train",),
    builders={"train": build},
    clause="TRAIN",
    end=("_INTO", "a TO TRAIN statement ends with INTO <model name>"),
    sections=("WITH", "COLUMN", "FOR", "LABEL", "USING", "INTO"),
)
