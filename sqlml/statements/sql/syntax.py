"""Standard SQL's node and its builder (the rule is in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class SqlNode(ast.Statement):
    """A standard SQL statement, passed to the database as written."""


def build(children: list) -> Unsliced:
    (text,) = children
    return Unsliced(partial(SqlNode, pos=pos(text)), text.start_pos, text.end_pos)


FRAGMENT = Fragment.load(__package__, statements=("sql",), builders={"sql": build})
