"""TO MAXIMIZE / TO MINIMIZE: the nodes of the statement and of its expressions, and their
builders (the rules are in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, Name, Position
from sqlml.grammar.build import Located, Unsliced, pos
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class Number:
    """A number in an expression."""

    value: int | float
    pos: Position
    end: int  # offset just past it


@dataclass(frozen=True)
class Call:
    """``FUNCTION(argument)``: SUM(...) is the one the statement solves."""

    function: str  # upper-cased
    argument: Expr
    pos: Position
    end: int


@dataclass(frozen=True)
class Paren:
    """``(inner)``."""

    inner: Expr
    pos: Position
    end: int


@dataclass(frozen=True)
class Signed:
    """``-operand`` (or ``+operand``)."""

    sign: str
    operand: Expr
    pos: Position
    end: int


@dataclass(frozen=True)
class Binary:
    """``left op right`` for + - * /; ``pos`` is the operator's."""

    op: str
    left: Expr
    right: Expr
    pos: Position


# A column, the variable (both names until the analysis tells them apart), a number, a call,
# an expression in parentheses, a signed or a binary expression.
Expr = Name | Number | Call | Paren | Signed | Binary


@dataclass(frozen=True)
class Constraint:
    """``left op right [GROUP BY column]``; ``pos`` is the operator's."""

    left: Expr
    op: str
    right: Expr
    group_by: Name | None
    pos: Position


@dataclass(frozen=True)
class OptimizeNode(ast.Statement):
    """``<select> TO MAXIMIZE|MINIMIZE <objective> [CONSTRAINT ...] WITH ... [USING <solver>]
    INTO <table>``."""

    select: str
    direction: str  # MAXIMIZE or MINIMIZE, upper-cased
    objective: Expr
    constraints: tuple[Constraint, ...]
    attributes: tuple[Attribute, ...]
    solver: Name | None
    into: Name


def start(expr: Expr) -> int:
    """The offset where ``expr`` starts in the program text."""
    return start(expr.left) if isinstance(expr, Binary) else expr.pos.offset


def end(expr: Expr) -> int:
    """The offset just past ``expr`` in the program text."""
    return end(expr.right) if isinstance(expr, Binary) else expr.end


def build(children: list) -> Unsliced:
    select, direction, objective, *clauses, into = children
    clause = dict(clauses)
    attributes = clause["with"].value
    make = partial(
        OptimizeNode,
        pos=pos(select),
        select=str(select).rstrip(),
        direction=str(direction).upper(),
        objective=objective,
        constraints=clause.get("constraint", ()),
        attributes=attributes,
        solver=clause.get("using"),
        into=into,
    )
    return Unsliced(make, select.start_pos, into.end)


def constraints(children: list) -> tuple[str, tuple[Constraint, ...]]:
    return "constraint", tuple(children)


def constraint(children: list) -> Constraint:
    left, op, right, *group = children
    return Constraint(left, str(op), right, group[0] if group else None, pos(op))


def group_by(children: list) -> Name:
    (column,) = children
    return column


def binary(children: list) -> Binary:
    left, op, right = children
    return Binary(str(op), left, right, pos(op))


def signed(children: list) -> Signed:
    sign, operand = children
    return Signed(str(sign), operand, pos(sign), end(operand))


def call(children: list) -> Call:
    function, _, argument, closing = children
    return Call(str(function).upper(), argument, pos(function), closing.end_pos)


def paren(children: list) -> Paren:
    opening, inner, closing = children
    return Paren(inner, pos(opening), closing.end_pos)


def number(children: list) -> Number:
    (found,) = children
    located: Located = found
    return Number(located.value, pos(located.start), located.end)


FRAGMENT = Fragment.load(
    __package__,
    statements=("optimize",),
    builders={
        "optimize": build,
        "opt_constraints": constraints,
        "opt_constraint": constraint,
        "opt_group_by": group_by,
        "opt_binary": binary,
        "opt_signed": signed,
        "opt_call": call,
        "opt_paren": paren,
        "opt_number": number,
    },
    # Two clause words, read by one terminal (DIRECTION): the SQL text ends before either.
    clauses=("MAXIMIZE", "MINIMIZE"),
    sections=("CONSTRAINT", "WITH", "USING", "INTO"),
    words={
        "DIRECTION": "MAXIMIZE or MINIMIZE",
        "COMPARISON": "a comparison (<=, >=, =)",
        "PLUS": "'+'",
        "MINUS": "'-'",
        "SLASH": "'/'",
        "STAR": "'*'",
        "_CONSTRAINT": "CONSTRAINT",
        "_GROUP": "GROUP",
        "_BY": "BY",
    },
)
