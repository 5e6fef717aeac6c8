"""The analysis of TO MAXIMIZE / TO MINIMIZE: the variable and its domain, the solver, and the
objective and constraints checked linear and turned into the IR's expression trees."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import sqlglot
from sqlglot import exp

from sqlml import errors
from sqlml.grammar.ast import Attribute, Name, Position
from sqlml.semantics.attributes import Attr, check_attributes, not_applied, pod_resources
from sqlml.semantics.lowering import OUTPUT_REPLACE, Output, error, lower_selecting, where
from sqlml.statements.optimize import syntax
from sqlml.statements.optimize.ir import SOLVERS, VAR_TYPES, OptimizeStatement

OPTIMIZE_ATTRIBUTES = {
    "variables": Attr(
        "variables",
        "string",
        None,
        'required: the variable and the columns naming each row\'s value of it, "amount(product)" '
        '(one value of amount per row, the rows named by product; "product" alone: the variable '
        "is product, written into product_value)",
        aliases=("variable",),
    ),
    "var_type": Attr(
        "var_type",
        "string",
        None,
        "required: the variable's domain, as SQLFlow names it: " + ", ".join(VAR_TYPES),
        choices=tuple(VAR_TYPES),
        renamed={name.lower(): name for name in VAR_TYPES},
    ),
    "solver.time_limit": Attr(
        "solver.time_limit",
        "float",
        None,
        "stop the solver after this many seconds: the best solution found by then is written, "
        "reported as not proven optimal (default: no limit)",
        minimum=0,
        exclusive_minimum=True,
    ),
    "output.replace": OUTPUT_REPLACE,
    **pod_resources("optimize"),
}
# SQLFlow's settings of its solving service on PAI (OptFlow), which its local runs ignore too.
_ONE_PROCESS = "sqlml solves the whole problem at once, in one process"
OPTIMIZE_ATTRIBUTES.update(
    (attr.name, attr)
    for attr in (
        not_applied("data.enable_slice", "bool", "SQLFlow on PAI: solve by slices", _ONE_PROCESS),
        not_applied(
            "data.batch_size", "int", "SQLFlow on PAI: rows of a slice", _ONE_PROCESS, minimum=-1
        ),
        *(
            not_applied(
                f"worker.{name}",
                "int",
                f"SQLFlow on PAI: {doc}",
                f"{_ONE_PROCESS}; on Kubernetes its pod gets optimize.cpu and optimize.memory",
                minimum=1,
            )
            for name, doc in (
                ("num", "workers solving"),
                ("core", "CPU cores of each worker"),
                ("memory", "memory of each worker (MB)"),
            )
        ),
        not_applied(
            "solver.max_iter",
            "int",
            "SQLFlow on PAI: the solver's iterations at most",
            "HiGHS stops at the optimum, or at solver.time_limit",
            minimum=1,
        ),
    )
)

SUPPORTED = (
    "the objective and the constraints are linear: numbers, columns and the variable joined "
    "by + - * / (the variable never multiplied by itself nor divided by), summed over the rows "
    "by SUM(...)"
)

# variables = "amount(product, market)" or "product"
_VARIABLES = re.compile(
    r"\s*(?P<variable>[A-Za-z_][\w$]*)\s*"
    r"(?:\(\s*(?P<index>[A-Za-z_][\w$]*(?:\s*,\s*[A-Za-z_][\w$]*)*)\s*\)\s*)?"
)
_RELATIONS = {"<=": "<=", ">=": ">=", "=": "="}
_REFUSED = {
    "<": "<=",
    ">": ">=",
    "==": "=",
}


def lower(statement: syntax.OptimizeNode, prefix: str, dialect: str) -> OptimizeStatement:
    """The IR of a TO MAXIMIZE / TO MINIMIZE (its SELECT in sqlglot's ``dialect``)."""
    clause = f"TO {statement.direction}"
    return lower_selecting(statement, prefix, dialect, clause, statement.into, _lower, _output)


def _output(statement: syntax.OptimizeNode, lowered: OptimizeStatement) -> Output:
    replace = lowered.attributes["output.replace"]
    return Output(lowered.table, statement.into.pos, replace, f"TO {statement.direction}")


def _lower(statement: syntax.OptimizeNode, step_id: str, dialect: str) -> OptimizeStatement:
    owner = f"TO {statement.direction}"
    attributes = check_attributes(_var_type_named(statement), OPTIMIZE_ATTRIBUTES, owner)
    variable, index = _variables(statement, attributes)
    var_type = attributes.pop("var_type", None)
    if var_type is None:
        raise error(
            f"{owner} needs var_type, the variable's domain",
            _with_position(statement),
            'add it to WITH, e.g. var_type = "NonNegativeIntegers"; the domains are '
            + ", ".join(VAR_TYPES),
        )
    selected = _selected_columns(statement.select, dialect)
    checker = _Checker(statement, variable, selected)
    given = _attribute(statement, "variables").pos
    for column in index:
        checker.column(column, given)
    if selected is not None and index != [variable] and variable.lower() in selected:
        raise error(
            f"the variable {variable} has the name of a column of the SELECT's result, which "
            "the INTO table holds beside the solution",
            given,
            "name the variable differently",
        )
    objective = checker.objective(statement.objective)
    constraints = [checker.constraint(c) for c in statement.constraints]
    return OptimizeStatement(
        id=step_id,
        text=statement.text,
        **where(statement.pos),
        select=statement.select,
        direction=statement.direction.lower(),
        objective=objective,
        constraints=constraints,
        variable=variable,
        index=index,
        var_type=var_type,
        solver=_solver(statement.solver),
        table=list(statement.into.parts),
        attributes=attributes,
    )


def _variables(statement: syntax.OptimizeNode, attributes: dict[str, Any]) -> tuple[str, list[str]]:
    """The variable's name and the columns naming its values, from ``variables``."""
    given = attributes.pop("variables", None)
    if given is None:
        raise error(
            f"TO {statement.direction} needs variables: the variable and the columns naming "
            "its values",
            _with_position(statement),
            'add it to WITH, e.g. variables = "amount(product)"',
        )
    found = _VARIABLES.fullmatch(given)
    where_given = _attribute(statement, "variables").pos
    if found is None:
        raise error(
            f"variables = {given!r} is not a variable and its columns",
            where_given,
            'write "<variable>(<column>, ...)", e.g. "amount(product)" or '
            '"shipment(plants, markets)"',
        )
    variable = found["variable"]
    if found["index"] is None:  # SQLFlow's "product": the column is the variable's name too
        return variable, [variable]
    index = [part.strip() for part in found["index"].split(",")]
    if len({part.lower() for part in index}) < len(index):
        raise error(f"variables = {given!r} names a column twice", where_given, None)
    if len(index) > 1 and variable.lower() in {part.lower() for part in index}:
        raise error(
            f"variables = {given!r}: the variable {variable} has the name of one of its columns",
            where_given,
            "name the variable differently",
        )
    return variable, index


def _var_type_named(statement: syntax.OptimizeNode) -> tuple[Attribute, ...]:
    """The WITH attributes, the variable's domain given under its name (SQLFlow's parser
    tests: ``variables = "product", product = "Integers"``) taken as var_type, with a
    warning, where var_type is not given."""
    attributes = statement.attributes
    given = next((a.value for a in attributes if a.name in ("variables", "variable")), None)
    found = _VARIABLES.fullmatch(given) if isinstance(given, str) else None
    if found is None or any(a.name == "var_type" for a in attributes):
        return attributes
    variable = found["variable"]
    named = [a for a in attributes if a.name.lower() == variable.lower()]
    for attribute in named:
        errors.warn(
            f"{attribute.name} = {attribute.value!r} is taken as var_type, the domain of the "
            f"variable {variable}",
            attribute.pos.line,
            attribute.pos.column,
            f"write var_type = {attribute.value!r}: SQLFlow reads the domain from var_type only",
        )
    return tuple(replace(a, name="var_type") if a in named else a for a in attributes)


def _attribute(statement: syntax.OptimizeNode, name: str) -> Attribute:
    names = (*OPTIMIZE_ATTRIBUTES[name].aliases, name)
    return next(a for a in statement.attributes if a.name in names)


def _with_position(statement: syntax.OptimizeNode) -> Position:
    """Where the WITH clause's attributes start."""
    return statement.attributes[0].pos


def _solver(name: Name | None) -> str:
    if name is None:
        return SOLVERS[0]
    given = str(name).lower()
    if given not in SOLVERS:
        raise error(
            f"unknown solver {name}",
            name.pos,
            "sqlml solves linear and mixed-integer programs with HiGHS: write USING highs, or "
            "leave USING out (USING glpk, SQLFlow's default, is solved by HiGHS too)",
        )
    return "highs"


def _selected_columns(select: str, dialect: str) -> set[str] | None:
    """The lower-cased names of the columns the SELECT returns when its text tells them (no
    ``*``, every column named); None when only the database knows."""
    try:
        tree = sqlglot.parse_one(select, read=dialect)
    except sqlglot.errors.ParseError:
        return None
    if not isinstance(tree, exp.Select):
        return None
    names = set()
    for projection in tree.expressions:
        if isinstance(projection, exp.Star) or projection.find(exp.Star) is not None:
            return None
        if not projection.alias_or_name:
            return None
        names.add(projection.alias_or_name.lower())
    return names


@dataclass
class _Scope:
    """Where an expression is: in the objective or a constraint, with SUM or not."""

    what: str  # "the objective", "the constraint ..."
    aggregate: bool  # its sums compare (or are optimised); else a row's values compare
    group_by: str | None
    in_sum: bool = False


class _Checker:
    """Turns the statement's expressions into IR trees, refusing what is not linear."""

    def __init__(
        self, statement: syntax.OptimizeNode, variable: str, selected: set[str] | None
    ) -> None:
        self.statement = statement
        self.variable = variable
        self.selected = selected

    def text(self, start: int, end: int) -> str:
        offset = start - self.statement.pos.offset
        return self.statement.text[offset : offset + end - start]

    def column(self, name: str, pos: Position) -> None:
        """A :class:`CheckError` if the SELECT's text tells its columns and ``name`` is not one."""
        if self.selected is not None and name.lower() not in self.selected:
            raise error(
                f"column {name} is not in the result of the SELECT",
                pos,
                "the SELECT returns: " + ", ".join(sorted(self.selected)),
            )

    def objective(self, expr: syntax.Expr) -> dict[str, Any]:
        scope = _Scope("the objective", aggregate=True, group_by=None)
        tree, degree = self.tree(expr, scope)
        text = self.text(syntax.start(expr), syntax.end(expr))
        if degree == 0:
            raise error(
                f"the objective {text} does not depend on the variable {self.variable}",
                _pos(expr),
                f"write the objective with the variable, e.g. SUM(price * {self.variable})",
            )
        return {"expr": tree, "text": text}

    def constraint(self, constraint: syntax.Constraint) -> dict[str, Any]:
        text = self.text(syntax.start(constraint.left), syntax.end(constraint.right))
        if constraint.group_by is not None:
            text += f" GROUP BY {constraint.group_by}"
        if constraint.op not in _RELATIONS:
            instead = _REFUSED.get(constraint.op)
            raise error(
                f"the constraint {text} compares with {constraint.op}, which a linear program "
                "cannot hold",
                constraint.pos,
                f"write {instead}" if instead else "compare with <=, >= or =",
            )
        aggregate = _has_sum(constraint.left) or _has_sum(constraint.right)
        group_by = None
        if constraint.group_by is not None:
            group_by = _single(constraint.group_by, "GROUP BY")
            self.column(group_by, constraint.group_by.pos)
            if not aggregate:
                raise error(
                    f"the constraint {text} has GROUP BY but no SUM: GROUP BY compares each "
                    "group's sums",
                    constraint.group_by.pos,
                    f"write SUM(...) in it, or remove GROUP BY {group_by} (without SUM, a "
                    "constraint holds in every row)",
                )
        scope = _Scope(f"the constraint {text}", aggregate, group_by)
        left, left_degree = self.tree(constraint.left, scope)
        right, right_degree = self.tree(constraint.right, scope)
        if left_degree == right_degree == 0:  # checked on the rows when solving, as SQLFlow's
            at = _pos(constraint.left)  # solver takes it: a condition on the data
            errors.warn(
                f"the constraint {text} does not depend on the variable {self.variable}: it is "
                "checked on the rows, the problem infeasible where it does not hold",
                at.line,
                at.column,
                f"write it with the variable (e.g. SUM(hours * {self.variable}) <= 100), or "
                "keep the rows it holds in with the SELECT's WHERE",
            )
        return {
            "left": left,
            "op": _RELATIONS[constraint.op],
            "right": right,
            "group_by": group_by,
            "text": text,
            **where(constraint.pos),
        }

    def tree(self, expr: syntax.Expr, scope: _Scope) -> tuple[list, int]:
        """The IR tree of ``expr`` and its degree in the variable (0 or 1)."""
        if isinstance(expr, syntax.Number):
            return ["number", expr.value], 0
        if isinstance(expr, Name):
            return self.name(expr, scope)
        if isinstance(expr, syntax.Paren):
            return self.tree(expr.inner, scope)
        if isinstance(expr, syntax.Signed):
            tree, degree = self.tree(expr.operand, scope)
            return (["neg", tree] if expr.sign == "-" else tree), degree
        if isinstance(expr, syntax.Call):
            return self.call(expr, scope)
        left, left_degree = self.tree(expr.left, scope)
        right, right_degree = self.tree(expr.right, scope)
        shown = self.text(syntax.start(expr), syntax.end(expr))
        if expr.op == "*" and left_degree + right_degree > 1:
            raise error(
                f"{shown} multiplies the variable {self.variable} by itself in {scope.what}",
                expr.pos,
                SUPPORTED,
            )
        if expr.op == "/" and right_degree:
            raise error(
                f"{shown} divides by the variable {self.variable} in {scope.what}",
                expr.pos,
                SUPPORTED,
            )
        if expr.op == "/" and _constant(right) == 0:
            raise error(
                f"{shown} divides by zero in {scope.what}",
                expr.pos,
                "divide by a number other than 0, or by a column",
            )
        return [expr.op, left, right], max(left_degree, right_degree)

    def name(self, name: Name, scope: _Scope) -> tuple[list, int]:
        part = _single(name, "an expression")
        line, column = name.pos.line, name.pos.column
        outside = scope.aggregate and not scope.in_sum
        if part.lower() == self.variable.lower():
            if outside:
                raise error(
                    f"the variable {part} is outside SUM(...) in {scope.what}, which sums over "
                    "the rows",
                    name.pos,
                    f"write it inside SUM(...), e.g. SUM(price * {part})",
                )
            return ["variable", line, column], 1
        self.column(part, name.pos)
        if outside and scope.group_by is None:
            grouping = (
                ""
                if scope.what == "the objective"
                else f", or add GROUP BY <column> (then each group compares with its value of "
                f"{part})"
            )
            raise error(
                f"column {part} is outside SUM(...) in {scope.what}: a sum over all rows has "
                "no one value of it",
                name.pos,
                f"put it inside SUM(...){grouping}",
            )
        return ["column", part, line, column], 0

    def call(self, call: syntax.Call, scope: _Scope) -> tuple[list, int]:
        if call.function != "SUM":
            raise error(f"{call.function}(...) is not supported", call.pos, SUPPORTED)
        if scope.in_sum:
            raise error(
                f"SUM inside SUM in {scope.what}", call.pos, "a SUM sums a row's expression"
            )
        inner = _Scope(scope.what, scope.aggregate, scope.group_by, in_sum=True)
        tree, degree = self.tree(call.argument, inner)
        return ["sum", tree, call.pos.line, call.pos.column], degree


def _constant(tree: list) -> float | None:
    """The value of an IR tree of numbers only (None if it holds a column or the variable)."""
    if tree[0] == "number":
        return float(tree[1])
    if tree[0] not in ("neg", "+", "-", "*", "/"):
        return None
    parts = [_constant(part) for part in tree[1:]]
    if None in parts:
        return None
    if tree[0] == "neg":
        return -parts[0]
    left, right = parts
    if tree[0] == "/":
        return None if right == 0 else left / right
    return left + right if tree[0] == "+" else left - right if tree[0] == "-" else left * right


def _has_sum(expr: syntax.Expr) -> bool:
    if isinstance(expr, syntax.Call):
        return expr.function == "SUM" or _has_sum(expr.argument)
    if isinstance(expr, syntax.Paren):
        return _has_sum(expr.inner)
    if isinstance(expr, syntax.Signed):
        return _has_sum(expr.operand)
    if isinstance(expr, syntax.Binary):
        return _has_sum(expr.left) or _has_sum(expr.right)
    return False


def _pos(expr: syntax.Expr) -> Position:
    return _pos(expr.left) if isinstance(expr, syntax.Binary) else expr.pos


def _single(name: Name, what: str) -> str:
    if len(name.parts) != 1:
        raise error(
            f"{what} takes a column of the SELECT's result, not {name}",
            name.pos,
            f"write {name.parts[-1]} (name the column in the SELECT: ... AS {name.parts[-1]})",
        )
    return name.parts[0]
