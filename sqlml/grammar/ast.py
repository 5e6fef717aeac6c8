"""The parsed program: frozen dataclasses, independent of Lark (the nodes of each statement
kind are in its folder, ``sqlml/statements/<kind>/syntax.py``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Position:
    """Where something starts in the program text (1-based line and column)."""

    line: int
    column: int
    offset: int


@dataclass(frozen=True)
class Name:
    """A possibly qualified name such as ``db.model``, quotes removed."""

    parts: tuple[str, ...]
    pos: Position
    end: int  # offset just past the name in the program text

    def __str__(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True)
class ModelName(Name):
    """A stored model's name, optionally with one of its versions: ``churn VERSION 3`` (an
    int) or ``churn VERSION champion`` (an alias); ``end`` is past the version."""

    version: int | str | None = None


# An attribute value: a number, string, boolean or a (nested) list of them.
Value = int | float | str | bool | tuple["Value", ...]


@dataclass(frozen=True)
class Candidates:
    """``CHOICE(...)``, ``UNIFORM(low, high)``, ``LOG_UNIFORM(low, high)`` or
    ``INT_RANGE(low, high)``: the values a hyperparameter search tries, each where it starts."""

    function: str  # upper-cased
    values: tuple[Value, ...]
    positions: tuple[Position, ...]
    pos: Position


@dataclass(frozen=True)
class Attribute:
    """``name = value`` in a WITH clause."""

    name: str
    value: Value | Candidates
    pos: Position


@dataclass(frozen=True)
class Call:
    """A feature column expression such as ``BUCKET(age, [18, 65])``."""

    function: str
    args: tuple[Argument, ...]
    pos: Position


# An argument of a feature column call: a column, a nested call, a literal or a list.
Argument = Name | Call | int | float | str | tuple["Argument", ...]


@dataclass(frozen=True)
class ColumnClause:
    """``COLUMN expr, ... [FOR target]``."""

    columns: tuple[Name | Call, ...]
    target: Name | None
    pos: Position


@dataclass(frozen=True)
class Statement:
    """What every parsed statement has; each kind's node (``sqlml.statements.<kind>.syntax``)
    adds its own fields."""

    text: str
    pos: Position


@dataclass(frozen=True)
class Program:
    """The statements of one program, in order."""

    statements: tuple[Statement, ...]
