"""TO TRAIN's node and its builders (the rules are in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from lark import Token

from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, ColumnClause, ModelName, Name
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class TrainNode(ast.Statement):
    """``<select> TO TRAIN <estimator> [WITH ...] [COLUMN ...] [LABEL ...] [USING ...] INTO``."""

    select: str
    estimator: Name
    attributes: tuple[Attribute, ...]
    columns: tuple[ColumnClause, ...]
    label: Name | None
    using: ModelName | None
    into: Name
    image: str | None = None  # the model zoo image of the estimator: TO TRAIN <image>/<estimator>
    base_image: str | None = None  # USING a model zoo's model (a name holding '/')


def build(children: list) -> Unsliced:
    select, estimator, *clauses, into = children
    image = None
    if isinstance(estimator, Token):
        image, estimator = _zoo_estimator(estimator)
    attributes: tuple[Attribute, ...] = ()
    columns: list[ColumnClause] = []
    label = using = base_image = None
    for kind, value in clauses:
        if kind == "with":
            attributes = value.value
        elif kind == "column":
            columns.append(value)
        elif kind == "label":
            label = value
        elif isinstance(value, Token):
            base_image = str(value)
        else:
            using = value
    make = partial(
        TrainNode,
        pos=pos(select),
        select=str(select).rstrip(),
        estimator=estimator,
        attributes=attributes,
        columns=tuple(columns),
        label=label,
        using=using,
        into=into,
        image=image,
        base_image=base_image,
    )
    return Unsliced(make, select.start_pos, into.end)


def train_using(children: list) -> tuple[str, ModelName | Token]:
    """``USING <model>``: a stored model's name, or a model zoo's (a ``ZOO_NAME`` token)."""
    (model,) = children
    return "using", model


def _zoo_estimator(token: Token) -> tuple[str, Name]:
    """The image and the estimator of ``<image>/<estimator>``: the estimator is what follows
    the last ``/``, where its name starts."""
    image, _, estimator = str(token).rpartition("/")
    start = token.start_pos + len(image) + 1
    at = ast.Position(token.line, token.column + len(image) + 1, start)
    return image, Name(tuple(estimator.split(".")), at, start + len(estimator))


FRAGMENT = Fragment.load(
    __package__,
    statements=("train",),
    builders={"train": build, "train_using": train_using},
    clauses=("TRAIN",),
    end=("_INTO", "a TO TRAIN statement ends with INTO <model name>"),
    sections=("WITH", "COLUMN", "FOR", "LABEL", "USING", "INTO"),
)
