"""ASSERT's node and its builder (the rule is in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.ast import Position
from sqlml.grammar.build import Unsliced, pos, unquote
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class AssertNode(ast.Statement):
    """``ASSERT <condition> [MESSAGE '<text>'] [WARN]``: fail the run unless the condition
    holds (``warn``: report a warning instead)."""

    condition: str  # a SQL boolean expression, as written
    condition_pos: Position
    message: str | None
    warn: bool


def build(children: list) -> Unsliced:
    keyword, condition, message, warn = children
    make = partial(
        AssertNode,
        pos=pos(keyword),
        condition=str(condition).rstrip(),
        condition_pos=pos(condition),
        message=unquote(message) if message is not None else None,
        warn=warn is not None,
    )
    last = next(token for token in (warn, message, condition) if token is not None)
    end = last.end_pos
    return Unsliced(make, keyword.start_pos, end)


FRAGMENT = Fragment.load(
    __package__,
    statements=("assertion",),
    builders={"assertion": build},
    words={"ASSERT_CONDITION": "a condition", "_MESSAGE": "MESSAGE", "ASSERT_WARN": "WARN"},
    finals=("ASSERT_WARN",),
)
