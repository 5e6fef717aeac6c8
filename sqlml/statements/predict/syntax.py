"""TO PREDICT's node and its builder (the rule is in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, ModelName, Name
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class PredictNode(ast.Statement):
    """``<select> TO PREDICT <table>[.<column>] [WITH ...] USING <model>``."""

    select: str
    target: Name
    attributes: tuple[Attribute, ...]
    using: ModelName


def build(children: list) -> Unsliced:
    select, target, *with_clause, using = children
    make = partial(
        PredictNode,
        pos=pos(select),
        select=str(select).rstrip(),
        target=target,
        attributes=with_clause[0][1].value if with_clause else (),
        using=using,
    )
    return Unsliced(make, select.start_pos, using.end)


FRAGMENT = Fragment.load(
    __package__,
    statements=("predict",),
    builders={"predict": build},
    clauses=("PREDICT",),
    end=("_USING", "a TO PREDICT statement ends with USING <model name>"),
    sections=("WITH", "USING"),
)
