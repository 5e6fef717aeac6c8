"""The parsed program: frozen dataclasses, independent of Lark."""

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
class SqlStatement:
    """A standard SQL statement, passed to the database as written."""

    text: str
    pos: Position


@dataclass(frozen=True)
class TrainStatement:
    """``<select> TO TRAIN <estimator> [WITH ...] [COLUMN ...] [LABEL ...] [USING ...] INTO``."""

    text: str
    pos: Position
    select: str
    estimator: Name
    attributes: tuple[Attribute, ...]
    columns: tuple[ColumnClause, ...]
    label: Name | None
    using: Name | None
    into: Name


@dataclass(frozen=True)
class PredictStatement:
    """``<select> TO PREDICT <table>.<column> [WITH ...] USING <model>``."""

    text: str
    pos: Position
    select: str
    target: Name
    attributes: tuple[Attribute, ...]
    using: Name


@dataclass(frozen=True)
class EvaluateStatement:
    """``<select> TO EVALUATE <model> [WITH ...] LABEL <column> INTO <table>``."""

    text: str
    pos: Position
    select: str
    model: Name
    attributes: tuple[Attribute, ...]
    label: Name
    into: Name


@dataclass(frozen=True)
class ExplainStatement:
    """``<select> TO EXPLAIN <model> [WITH ...] [USING <explainer>] [INTO <table>]``."""

    text: str
    pos: Position
    select: str
    model: Name
    attributes: tuple[Attribute, ...]
    explainer: Name | None
    into: Name | None


@dataclass(frozen=True)
class ShowTrainStatement:
    """``SHOW TRAIN <model>``: the statement that trained a model."""

    text: str
    pos: Position
    model: Name


@dataclass(frozen=True)
class ShowModelsStatement:
    """``SHOW MODELS``: the stored models."""

    text: str
    pos: Position


@dataclass(frozen=True)
class DescribeModelStatement:
    """``DESCRIBE MODEL <model>``: a model's estimator, features, label and metrics."""

    text: str
    pos: Position
    model: Name


@dataclass(frozen=True)
class DropModelStatement:
    """``DROP MODEL [IF EXISTS] <model>``."""

    text: str
    pos: Position
    model: Name
    if_exists: bool


@dataclass(frozen=True)
class AssertStatement:
    """``ASSERT <condition> [MESSAGE '<text>']``: fail the run unless the condition holds."""

    text: str
    pos: Position
    condition: str  # a SQL boolean expression, as written
    condition_pos: Position
    message: str | None


Statement = (
    SqlStatement
    | TrainStatement
    | PredictStatement
    | EvaluateStatement
    | ExplainStatement
    | ShowTrainStatement
    | ShowModelsStatement
    | DescribeModelStatement
    | DropModelStatement
    | AssertStatement
)


@dataclass(frozen=True)
class Program:
    """The statements of one program, in order."""

    statements: tuple[Statement, ...]
