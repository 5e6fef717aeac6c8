"""The nodes of SHOW TRAIN, SHOW MODELS, DESCRIBE MODEL and DROP MODEL, and their builders
(the rules are in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.ast import Name
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class ShowTrainNode(ast.Statement):
    """``SHOW TRAIN <model>``: the statement that trained a model."""

    model: Name


@dataclass(frozen=True)
class ShowModelsNode(ast.Statement):
    """``SHOW MODELS``: the stored models."""


@dataclass(frozen=True)
class DescribeModelNode(ast.Statement):
    """``DESCRIBE MODEL <model>``: a model's estimator, features, label and metrics."""

    model: Name


@dataclass(frozen=True)
class DropModelNode(ast.Statement):
    """``DROP MODEL [IF EXISTS] <model>``."""

    model: Name
    if_exists: bool


def show_train(children: list) -> Unsliced:
    keyword, model = children
    make = partial(ShowTrainNode, pos=pos(keyword), model=model)
    return Unsliced(make, keyword.start_pos, model.end)


def show_models(children: list) -> Unsliced:
    (keyword,) = children
    return Unsliced(partial(ShowModelsNode, pos=pos(keyword)), keyword.start_pos, keyword.end_pos)


def describe_model(children: list) -> Unsliced:
    keyword, model = children
    make = partial(DescribeModelNode, pos=pos(keyword), model=model)
    return Unsliced(make, keyword.start_pos, model.end)


def drop_model(children: list) -> Unsliced:
    keyword, if_exists, model = children
    make = partial(DropModelNode, pos=pos(keyword), model=model, if_exists=if_exists is not None)
    return Unsliced(make, keyword.start_pos, model.end)


FRAGMENT = Fragment.load(
    __package__,
    statements=("show_train", "show_models", "describe_model", "drop_model"),
    builders={
        "show_train": show_train,
        "show_models": show_models,
        "describe_model": describe_model,
        "drop_model": drop_model,
    },
)
