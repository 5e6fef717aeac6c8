"""The IR of TO MAXIMIZE / TO MINIMIZE.

Its expressions are JSON trees, checked linear by the analysis:

- ``["number", value]``, ``["column", name, line, column]``, ``["variable", line, column]``;
- ``["sum", expr, line, column]``: ``expr`` summed over the rows (of each group under GROUP BY);
- ``["+", a, b]``, ``["-", a, b]``, ``["*", a, b]``, ``["/", a, b]``, ``["neg", a]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sqlml.ir import Statement

# The domains of the variable (SQLFlow's, as Pyomo names them): name -> (integer, lower bound,
# upper bound). A strict bound (PositiveReals: > 0) is taken as the closed one, as linear
# programs have no strict inequalities.
VAR_TYPES: dict[str, tuple[bool, float, float]] = {
    "Reals": (False, -float("inf"), float("inf")),
    "NonNegativeReals": (False, 0.0, float("inf")),
    "NonPositiveReals": (False, -float("inf"), 0.0),
    "PositiveReals": (False, 0.0, float("inf")),
    "NegativeReals": (False, -float("inf"), 0.0),
    "UnitInterval": (False, 0.0, 1.0),
    "PercentFraction": (False, 0.0, 1.0),
    "Integers": (True, -float("inf"), float("inf")),
    "NonNegativeIntegers": (True, 0.0, float("inf")),
    "NonPositiveIntegers": (True, -float("inf"), 0.0),
    "PositiveIntegers": (True, 1.0, float("inf")),
    "NegativeIntegers": (True, -float("inf"), -1.0),
    "Binary": (True, 0.0, 1.0),
    "Boolean": (True, 0.0, 1.0),
}

# USING: the solvers sqlml has. glpk (SQLFlow's default) names the same kind of solver: its
# programs are solved by HiGHS too.
SOLVERS = ("highs", "glpk")


@dataclass(frozen=True)
class OptimizeStatement(Statement):
    """Choose a value of ``variable`` for each row of ``select`` that minimises or maximises
    ``objective`` under ``constraints``; the rows and the values into ``table``.

    ``objective``: ``{"expr": tree, "text": str}``; each constraint: ``{"left": tree, "op":
    "<=" | ">=" | "=", "right": tree, "group_by": column or None, "text": str, "line": int,
    "column": int}``.
    """

    kind: ClassVar[str] = "optimize"
    select: str
    direction: str  # "maximize" or "minimize"
    objective: dict[str, Any]
    constraints: list[dict[str, Any]]
    variable: str  # the decision variable's name in the expressions
    index: list[str]  # the columns naming each row's variable (variables = "v(a, b)")
    var_type: str  # a key of VAR_TYPES
    solver: str  # one of SOLVERS
    table: list[str]
    attributes: dict[str, Any]
