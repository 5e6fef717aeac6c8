"""The nodes of SHOW TRAIN, SHOW MODELS, SHOW MODEL VERSIONS, DESCRIBE MODEL, DROP MODEL and
ALTER MODEL, and their builders (the rules are in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from sqlml.errors import ParseError
from sqlml.grammar import ast
from sqlml.grammar.ast import ModelName, Name
from sqlml.grammar.build import Unsliced, check_not_empty, model_version, pos, unquote
from sqlml.grammar.fragment import Fragment

if TYPE_CHECKING:
    from lark import Token


@dataclass(frozen=True)
class ShowTrainNode(ast.Statement):
    """``SHOW TRAIN <model> [VERSION <v>]``: the statement that trained a model."""

    model: ModelName


@dataclass(frozen=True)
class ShowModelsNode(ast.Statement):
    """``SHOW MODELS``: the stored models."""


@dataclass(frozen=True)
class ShowModelVersionsNode(ast.Statement):
    """``SHOW MODEL VERSIONS [<model>]``: every stored version (of one model)."""

    model: Name | None


@dataclass(frozen=True)
class DescribeModelNode(ast.Statement):
    """``DESCRIBE MODEL <model> [VERSION <v>]``: a model's estimator, features, label,
    metrics and lineage."""

    model: ModelName


@dataclass(frozen=True)
class DropModelNode(ast.Statement):
    """``DROP MODEL [IF EXISTS] <model>``."""

    model: Name
    if_exists: bool


@dataclass(frozen=True)
class AlterModelNode(ast.Statement):
    """``ALTER MODEL <model> <action>``: ``set_alias`` (``alias`` to ``version``),
    ``drop_alias``, ``rollback_alias``, ``promote`` (``version`` to champion) or ``keep``
    (``keep`` versions; None: all)."""

    model: Name
    action: str
    alias: str | None = None
    version: int | str | None = None
    keep: int | None = None


def show_train(children: list) -> Unsliced:
    keyword, model = children
    make = partial(ShowTrainNode, pos=pos(keyword), model=model)
    return Unsliced(make, keyword.start_pos, model.end)


def show_models(children: list) -> Unsliced:
    (keyword,) = children
    return Unsliced(partial(ShowModelsNode, pos=pos(keyword)), keyword.start_pos, keyword.end_pos)


def show_model_versions(children: list) -> Unsliced:
    keyword, model = children
    make = partial(ShowModelVersionsNode, pos=pos(keyword), model=model)
    return Unsliced(make, keyword.start_pos, keyword.end_pos if model is None else model.end)


def describe_model(children: list) -> Unsliced:
    keyword, model = children
    make = partial(DescribeModelNode, pos=pos(keyword), model=model)
    return Unsliced(make, keyword.start_pos, model.end)


def drop_model(children: list) -> Unsliced:
    keyword, if_exists, model = children
    make = partial(DropModelNode, pos=pos(keyword), model=model, if_exists=if_exists is not None)
    return Unsliced(make, keyword.start_pos, model.end)


def alter_model(children: list) -> Unsliced:
    keyword, model, (fields, end) = children
    make = partial(AlterModelNode, pos=pos(keyword), model=model, **fields)
    return Unsliced(make, keyword.start_pos, end)


def set_alias(children: list) -> tuple[dict, int]:
    *_, alias, _to, _version, version = children
    fields = {"action": "set_alias", "alias": unquote(alias), "version": model_version(version)}
    return fields, version.end_pos


def drop_alias(children: list) -> tuple[dict, int]:
    *_, alias = children
    return {"action": "drop_alias", "alias": unquote(alias)}, alias.end_pos


def rollback_alias(children: list) -> tuple[dict, int]:
    *_, alias = children
    return {"action": "rollback_alias", "alias": unquote(alias)}, alias.end_pos


def promote(children: list) -> tuple[dict, int]:
    *_, version = children
    return {"action": "promote", "version": model_version(version)}, version.end_pos


def keep(children: list) -> tuple[dict, int]:
    _keep, count, versions = children
    if count.type == "SIGNED_NUMBER" and not _whole(str(count)):
        raise ParseError(
            f"KEEP takes a positive whole number of versions, got {count}",
            line=count.line,
            column=count.column,
            hint="for example: ALTER MODEL churn KEEP 5 VERSIONS, or KEEP ALL VERSIONS",
        )
    number = int(str(count)) if count.type == "SIGNED_NUMBER" else None
    return {"action": "keep", "keep": number}, versions.end_pos


def alias(children: list) -> Token:
    (token,) = children
    check_not_empty(token)
    if unquote(token).isdigit():
        raise ParseError(
            f"the alias {token} is a number, which VERSION would read as a version number",
            line=token.line,
            column=token.column,
            hint="start the alias with a letter: champion, challenger, candidate_2",
        )
    return token


def _whole(text: str) -> bool:
    return text.isdigit() and 0 < int(text) < 1 << 31


FRAGMENT = Fragment.load(
    __package__,
    statements=(
        "show_train",
        "show_models",
        "show_model_versions",
        "describe_model",
        "drop_model",
        "alter_model",
    ),
    builders={
        "show_train": show_train,
        "show_models": show_models,
        "show_model_versions": show_model_versions,
        "describe_model": describe_model,
        "drop_model": drop_model,
        "alter_model": alter_model,
        "set_alias": set_alias,
        "drop_alias": drop_alias,
        "rollback_alias": rollback_alias,
        "promote": promote,
        "keep": keep,
        "alias": alias,
    },
)
