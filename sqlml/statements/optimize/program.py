"""The linear program a TO MAXIMIZE / TO MINIMIZE describes, over the columns of its rows.

One variable per row. Every expression is evaluated column-wise with numpy, never row by row:
a row's expression is a coefficient of the variable and a constant (each a number or a column
of numbers); ``SUM`` sums them into a sparse row of the constraint matrix per group (one group
without GROUP BY). A constraint without SUM holds in every row: it bounds that row's variable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from sqlml.errors import CheckError, SqlmlError
from sqlml.statements.optimize.ir import VAR_TYPES, OptimizeStatement

Values = float | np.ndarray  # a number, or one per row (or per group)


@dataclass(frozen=True)
class LinearProgram:
    """minimise ``cost @ x`` with ``lower <= x <= upper``, ``low <= matrix @ x <= high`` and
    ``x`` integer where ``integer``; the objective's value is ``sign * (cost @ x) + offset``."""

    cost: np.ndarray
    sign: float  # -1 when maximising (the cost is the negated objective)
    offset: float
    lower: np.ndarray
    upper: np.ndarray
    matrix: sparse.csr_matrix
    low: np.ndarray
    high: np.ndarray
    integer: bool


def build(statement: OptimizeStatement, columns: Mapping[str, np.ndarray]) -> LinearProgram:
    """The program of ``statement`` over the rows in ``columns`` (the SELECT's result)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # finiteness is checked
        return _build(statement, columns)


def _build(statement: OptimizeStatement, columns: Mapping[str, np.ndarray]) -> LinearProgram:
    rows = len(next(iter(columns.values()), ()))
    if rows == 0:
        raise SqlmlError(
            "the SELECT returns no rows: there is no variable to choose",
            hint="check the SELECT's WHERE clause and the table's rows",
        )
    data = _Data(columns, rows)
    for name in statement.index:
        data.find(name, statement.line, statement.column)
    integer, low, high = VAR_TYPES[statement.var_type]
    lower, upper = np.full(rows, low), np.full(rows, high)
    sign = -1.0 if statement.direction == "maximize" else 1.0
    cost, offset = _objective(statement.objective, data)
    blocks, lows, highs = [], [], []
    for constraint in statement.constraints:
        if _has_sum(constraint["left"]) or _has_sum(constraint["right"]):
            matrix, bound = _aggregate(constraint, data)
            op = constraint["op"]
            blocks.append(matrix)
            lows.append(bound if op in (">=", "=") else np.full(len(bound), -np.inf))
            highs.append(bound if op in ("<=", "=") else np.full(len(bound), np.inf))
        else:
            _bound(constraint, data, lower, upper)
    matrix = sparse.vstack(blocks, format="csr") if blocks else sparse.csr_matrix((0, rows))
    return LinearProgram(
        cost=sign * cost,
        sign=sign,
        offset=offset,
        lower=lower,
        upper=upper,
        matrix=matrix,
        low=np.concatenate(lows) if lows else np.empty(0),
        high=np.concatenate(highs) if highs else np.empty(0),
        integer=integer,
    )


def _has_sum(tree: list) -> bool:
    return tree[0] == "sum" or any(_has_sum(part) for part in tree[1:] if isinstance(part, list))


class _Data:
    """The SELECT's columns, found by name as SQL finds them (case-insensitively), as numbers."""

    def __init__(self, columns: Mapping[str, np.ndarray], rows: int) -> None:
        self.columns = columns
        self.rows = rows
        self.lower = {name.lower(): name for name in columns}
        self._numbers: dict[str, np.ndarray] = {}

    def find(self, name: str, line: int, column: int) -> str:
        """The SELECT's name of the column ``name``, or a CheckError at line:column."""
        if name in self.columns:
            return name
        found = self.lower.get(name.lower())
        if found is None:
            raise CheckError(
                f"column {name} is not in the result of the SELECT",
                line=line,
                column=column,
                hint="the SELECT returns: " + ", ".join(self.columns),
            )
        return found

    def numbers(self, name: str, line: int, column: int) -> np.ndarray:
        """The column ``name`` as float64, or a CheckError if it holds text or NULLs."""
        key = self.find(name, line, column)
        if key not in self._numbers:
            try:
                values = np.asarray(self.columns[key], dtype=np.float64)
            except (TypeError, ValueError):
                raise CheckError(
                    f"column {key} holds text, not numbers",
                    line=line,
                    column=column,
                    hint="the objective and constraints compute with numeric columns",
                ) from None
            if np.isnan(values).any():
                raise CheckError(
                    f"column {key} holds NULL (row {int(np.isnan(values).argmax()) + 1})",
                    line=line,
                    column=column,
                    hint="leave those rows out in the SELECT, or write COALESCE(...) there",
                )
            self._numbers[key] = values
        return self._numbers[key]

    def groups(self, name: str, line: int, column: int) -> tuple[np.ndarray, np.ndarray]:
        """Each row's group (0, 1, ...) under GROUP BY ``name``, and each group's first row."""
        values = self.columns[self.find(name, line, column)]
        if values.dtype == object:
            if np.equal(values, None).any():
                raise CheckError(
                    f"column {name} of GROUP BY holds NULL",
                    line=line,
                    column=column,
                    hint="leave those rows out in the SELECT, or write COALESCE(...) there",
                )
            values = values.astype(str)
        _, first, group = np.unique(values, return_index=True, return_inverse=True)
        return group.reshape(-1), first


@dataclass(frozen=True)
class _Linear:
    """``coefficient * variable + constant`` in each row (a number stands for every row);
    coefficient None: the variable is not in it."""

    coefficient: Values | None
    constant: Values


def _row(tree: list, data: _Data) -> _Linear:
    """A row-wise expression's coefficient and constant."""
    op = tree[0]
    if op == "number":  # numpy's numbers: 1 / 0 is inf (found by _check_finite), no exception
        return _Linear(None, np.float64(tree[1]))
    if op == "column":
        return _Linear(None, data.numbers(tree[1], tree[2], tree[3]))
    if op == "variable":
        return _Linear(np.float64(1.0), np.float64(0.0))
    if op == "neg":
        inner = _row(tree[1], data)
        return _Linear(_negated(inner.coefficient), -inner.constant)
    left, right = _row(tree[1], data), _row(tree[2], data)
    if op in ("+", "-"):
        right_coefficient = right.coefficient if op == "+" else _negated(right.coefficient)
        constant = left.constant + right.constant if op == "+" else left.constant - right.constant
        return _Linear(_added(left.coefficient, right_coefficient), constant)
    if op == "*":
        if left.coefficient is None:
            scaled = None if right.coefficient is None else left.constant * right.coefficient
            return _Linear(scaled, left.constant * right.constant)
        return _Linear(left.coefficient * right.constant, left.constant * right.constant)
    coefficient = None if left.coefficient is None else left.coefficient / right.constant
    return _Linear(coefficient, left.constant / right.constant)


@dataclass(frozen=True)
class _Sums:
    """An expression over groups: ``matrix @ x + constant``, one row per group (matrix None:
    the variable is not in it)."""

    matrix: sparse.csr_matrix | None
    constant: np.ndarray


def _sums(tree: list, data: _Data, group: np.ndarray, first: np.ndarray) -> _Sums:
    """An expression of sums: each group's coefficients of the variables and its constant."""
    op, count = tree[0], len(first)
    if op == "number":
        return _Sums(None, np.full(count, float(tree[1])))
    if op == "column":  # under GROUP BY: the group's value (checked to be one)
        values = data.numbers(tree[1], tree[2], tree[3])
        value = values[first]
        if (values != value[group]).any():
            row = int((values != value[group]).argmax())
            raise CheckError(
                f"column {tree[1]} takes several values in one group ({values[first[group[row]]]:g}"
                f" and {values[row]:g}): outside SUM, a constraint with GROUP BY compares with "
                "the group's one value",
                line=tree[2],
                column=tree[3],
                hint="put it inside SUM(...), or group by a column it depends on",
            )
        return _Sums(None, value)
    if op == "sum":
        inner = _row(tree[1], data)
        constant = np.bincount(group, np.broadcast_to(inner.constant, group.shape), count)
        if inner.coefficient is None:
            return _Sums(None, constant)
        coefficient = np.broadcast_to(inner.coefficient, group.shape)
        _check_finite(coefficient, tree)
        matrix = sparse.csr_matrix(
            (coefficient, (group, np.arange(len(group)))), shape=(count, len(group))
        )
        return _Sums(matrix, constant)
    if op == "neg":
        inner = _sums(tree[1], data, group, first)
        return _Sums(None if inner.matrix is None else -inner.matrix, -inner.constant)
    left, right = _sums(tree[1], data, group, first), _sums(tree[2], data, group, first)
    if op in ("+", "-"):
        other = right.matrix if op == "+" or right.matrix is None else -right.matrix
        constant = left.constant + right.constant if op == "+" else left.constant - right.constant
        return _Sums(_added(left.matrix, other), constant)
    if op == "*":
        scaled, factor = (right, left.constant) if left.matrix is None else (left, right.constant)
        matrix = None if scaled.matrix is None else sparse.diags(factor) @ scaled.matrix
        return _Sums(matrix, left.constant * right.constant)
    factor = 1.0 / right.constant
    matrix = None if left.matrix is None else sparse.diags(factor) @ left.matrix
    return _Sums(matrix, left.constant * factor)


def _objective(objective: dict[str, Any], data: _Data) -> tuple[np.ndarray, float]:
    sums = _sums(objective["expr"], data, np.zeros(data.rows, dtype=np.intp), np.zeros(1, int))
    cost = np.zeros(data.rows) if sums.matrix is None else sums.matrix.toarray().reshape(-1)
    _check_finite(cost, objective["expr"])
    return cost, float(sums.constant[0])


def _aggregate(constraint: dict[str, Any], data: _Data) -> tuple[sparse.csr_matrix, np.ndarray]:
    """The rows ``matrix @ x (op) bound`` of a constraint with SUM: one, or one per group."""
    if constraint["group_by"] is None:
        group, first = np.zeros(data.rows, dtype=np.intp), np.zeros(1, dtype=np.intp)
    else:
        group, first = data.groups(constraint["group_by"], constraint["line"], constraint["column"])
    left = _sums(constraint["left"], data, group, first)
    right = _sums(constraint["right"], data, group, first)
    empty = sparse.csr_matrix((len(first), data.rows))
    matrix = (empty if left.matrix is None else left.matrix) - (
        empty if right.matrix is None else right.matrix
    )
    bound = right.constant - left.constant
    _check_finite(bound, constraint)
    _check_finite(matrix.data, constraint, by_row=False)
    matrix = matrix.tocsr()
    matrix.eliminate_zeros()
    _check_holds(constraint, np.diff(matrix.indptr) == 0, bound, "group")
    return matrix, bound


def _bound(constraint: dict[str, Any], data: _Data, lower: np.ndarray, upper: np.ndarray) -> None:
    """Tighten each row's bounds by a constraint without SUM, which holds in every row."""
    left, right = _row(constraint["left"], data), _row(constraint["right"], data)
    found = _added(left.coefficient, _negated(right.coefficient))
    coefficient = np.broadcast_to(0.0 if found is None else found, lower.shape)
    rest = np.broadcast_to(right.constant - left.constant, lower.shape)  # coefficient * x op rest
    _check_finite(coefficient, constraint)
    _check_finite(rest, constraint)
    op, positive, negative = constraint["op"], coefficient > 0, coefficient < 0
    value = rest / coefficient
    at_most = positive if op == "<=" else negative if op == ">=" else positive | negative
    at_least = negative if op == "<=" else positive if op == ">=" else positive | negative
    np.minimum(upper, value, out=upper, where=at_most)
    np.maximum(lower, value, out=lower, where=at_least)
    _check_holds(constraint, ~(positive | negative), rest, "row")


def _check_holds(constraint: dict[str, Any], zero: np.ndarray, rest: np.ndarray, what: str) -> None:
    """An error if the constraint, ``0 (op) rest`` in the rows (or groups) where the variable
    drops out of it (``zero``), is false in one: true or false whatever the variable."""
    op = constraint["op"]
    broken = zero & ((rest < 0) if op == "<=" else (rest > 0) if op == ">=" else (rest != 0))
    if broken.any():
        row = int(broken.argmax())
        raise SqlmlError(
            f"the problem is infeasible: the constraint {constraint['text']} cannot hold in "
            f"{what} {row + 1}, where the variable drops out of it (0 {op} {rest[row]:g})",
            line=constraint["line"],
            column=constraint["column"],
            hint=f"check the constraint and that {what}'s values",
        )


def _check_finite(values: np.ndarray, where: list | dict, by_row: bool = True) -> None:
    """A :class:`CheckError` if ``values`` (one per row, unless ``by_row`` is false) are not
    all finite: a division by zero or an overflow."""
    if np.isfinite(values).all():
        return
    line, column = (where["line"], where["column"]) if isinstance(where, dict) else _at(where)
    row = f" in row {int((~np.isfinite(values)).argmax()) + 1}" if by_row else ""
    raise CheckError(
        f"an expression divides by zero (or overflows){row}",
        line=line,
        column=column,
        hint="leave out the rows whose divisor is 0 in the SELECT",
    )


def _at(tree: list) -> tuple[int | None, int | None]:
    """Where the first column, variable or SUM of ``tree`` is written."""
    if tree[0] in ("column", "sum"):
        return tree[-2], tree[-1]
    if tree[0] == "variable":
        return tree[1], tree[2]
    for part in tree[1:]:
        if isinstance(part, list):
            found = _at(part)
            if found[0] is not None:
                return found
    return None, None


def _added(a: Any, b: Any) -> Any:
    """``a + b``, where None stands for no variable (nothing to add)."""
    if a is None:
        return b
    return a if b is None else a + b


def _negated(a: Values | None) -> Values | None:
    return None if a is None else -a
