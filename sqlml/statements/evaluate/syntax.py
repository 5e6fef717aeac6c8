"""TO EVALUATE's node and its builder (the rule is in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, Name
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class EvaluateStatement(ast.Statement):
    """``<select> TO EVALUATE <model> [WITH ...] LABEL <column> INTO <table>``."""

    select: str
    model: Name
    attributes: tuple[Attribute, ...]
    label: Name
    into: Name


def build(children: list) -> Unsliced:
    select, model, *with_clause, (_, label), into = children
    make = partial(
        EvaluateStatement,
        pos=pos(select),
        select=str(select).rstrip(),
        model=model,
        attributes=with_clause[0][1].value if with_clause else (),
        label=label,
        into=into,
    )
    return Unsliced(make, select.start_pos, into.end)


FRAGMENT = Fragment.load(
    __package__,
    statements=("evaluate",),
    builders={"evaluate": build},
    clauses=("EVALUATE",),
    end=("_LABEL", "a TO EVALUATE statement ends with LABEL <column> INTO <table>"),
    sections=("WITH", "LABEL", "INTO"),
)
