"""TO COUNT's node and its builder (the rule is in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class CountNode(ast.Statement):
    """``<select> TO COUNT USING <column> INTO <table>``."""

    select: str
    column: ast.Name
    into: ast.Name
    attributes: tuple[ast.Attribute, ...] = ()


def build(children: list) -> Unsliced:
    select, column, into = children
    make = partial(
        CountNode, pos=pos(select), select=str(select).rstrip(), column=column, into=into
    )
    return Unsliced(make, select.start_pos, into.end)


FRAGMENT = Fragment.load(
    __package__,
    statements=("count",),
    builders={"count": build},
    clauses=("COUNT",),
    end=("_INTO", "a TO COUNT statement ends with USING <column> INTO <table>"),
    sections=("USING", "INTO"),
)
