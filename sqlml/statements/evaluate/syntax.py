"""TO EVALUATE's node and its builder (the rule is in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, ModelName, Name, Position
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class EvaluateNode(ast.Statement):
    """``<select> TO EVALUATE <model> [WITH ...] [LABEL <column>] INTO <table>``; without
    LABEL, ``into_pos`` (where INTO starts) is where a missing LABEL is reported."""

    select: str
    model: ModelName
    attributes: tuple[Attribute, ...]
    label: Name | None
    into: Name
    into_pos: Position


def build(children: list) -> Unsliced:
    select, model, *clauses, (into_pos, into) = children
    clause = dict(clauses)
    make = partial(
        EvaluateNode,
        pos=pos(select),
        select=str(select).rstrip(),
        model=model,
        attributes=clause["with"].value if "with" in clause else (),
        label=clause.get("label"),
        into=into,
        into_pos=into_pos,
    )
    return Unsliced(make, select.start_pos, into.end)


def evaluate_into(children: list) -> tuple[Position, Name]:
    keyword, table = children
    return pos(keyword), table


FRAGMENT = Fragment.load(
    __package__,
    statements=("evaluate",),
    builders={"evaluate": build, "evaluate_into": evaluate_into},
    clauses=("EVALUATE",),
    end=("_LABEL", "a TO EVALUATE statement ends with [LABEL <column>] INTO <table>"),
    sections=("WITH", "LABEL", "INTO"),
)
