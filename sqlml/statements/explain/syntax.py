"""TO EXPLAIN's node and its builders (the rules are in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, ModelName, Name
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class ExplainNode(ast.Statement):
    """``<select> TO EXPLAIN <model> [WITH ...] [USING <explainer>] [INTO <table>]``."""

    select: str
    model: ModelName
    attributes: tuple[Attribute, ...]
    explainer: Name | None
    into: Name | None


def build(children: list) -> Unsliced:
    select, model, *clauses = children
    clause = dict(clauses)
    attributes = clause.get("with")
    last = clause.get("into") or clause.get("using")
    end = last.end if last else attributes.end if attributes else model.end
    make = partial(
        ExplainNode,
        pos=pos(select),
        select=str(select).rstrip(),
        model=model,
        attributes=attributes.value if attributes else (),
        explainer=clause.get("using"),
        into=clause.get("into"),
    )
    return Unsliced(make, select.start_pos, end)


def into_clause(children: list) -> tuple[str, Name]:
    (table,) = children
    return "into", table


FRAGMENT = Fragment.load(
    __package__,
    statements=("explain",),
    builders={"explain": build, "into_clause": into_clause},
    clauses=("EXPLAIN",),
    sections=("WITH", "USING", "INTO"),
)
