"""TO MAXIMIZE / TO MINIMIZE's handler: read the rows, build the program, solve it with HiGHS
(through SciPy, in a child process that a timeout or Ctrl-C kills: ``solver.py``), write the
rows and the solution into the INTO table.

An infeasible or unbounded program is an error, and nothing is written: a table already
there is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from sqlml.errors import CheckError, SqlmlError
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome
from sqlml.statements.optimize import solver
from sqlml.statements.optimize.ir import OptimizeStatement
from sqlml.statements.optimize.program import LinearProgram, build


@dataclass(frozen=True)
class Solution:
    """The variable's value in each row, the objective's value and how the solver ended."""

    values: np.ndarray
    objective: float
    status: str


def optimize(statement: OptimizeStatement, context: Context) -> Outcome:
    """Solve the statement's program over the rows of its SELECT; write them with the solution."""
    datasource = context.datasource
    replace = bool(statement.attributes.get("output.replace"))
    datasource.check_target(statement.table, replace)  # before any work
    columns = datasource.read(statement.select, context.reporter)
    result = result_column(statement, columns)
    program = build(statement, columns)
    context.token.check()
    with context.reporter.stage("solving", unit="variables"):
        solution = solve(
            program, statement.attributes.get("solver.time_limit"), context.token.check
        )
    output = {**columns, result: solution.values}
    datasource.write_table(statement.table, output, replace, context.token)
    count = len(solution.values)
    kind = "integer" if program.integer else "continuous"
    verb = "maximized" if statement.direction == "maximize" else "minimized"
    return Outcome(
        summary=f"{verb} {statement.objective['text']} = {solution.objective:.10g} "
        f"({solution.status}; HiGHS, {count} {kind} variables, {program.matrix.shape[0]} "
        f"constraint rows); {count} rows into {'.'.join(statement.table)}, the solution "
        f"in {result}"
    )


def result_column(statement: OptimizeStatement, columns: Mapping[str, np.ndarray]) -> str:
    """The INTO table's column for the solution: the variable's name; ``<name>_value`` (then
    ``_0``, ``_1``...) when the variable is named by its only column, as in SQLFlow."""
    taken = {name.lower() for name in columns}
    variable = statement.variable
    if statement.index != [variable]:
        if variable.lower() in taken:
            raise CheckError(
                f"the variable {variable} has the name of a column of the SELECT's result, "
                "which the INTO table holds beside the solution",
                line=statement.line,
                column=statement.column,
                hint="name the variable differently in variables = ...",
            )
        return variable
    name, suffix = f"{variable}_value", 0
    while name.lower() in taken:
        name, suffix = f"{variable}_value_{suffix}", suffix + 1
    return name


def _never() -> None:
    """A check that never stops the solver."""


def solve(
    program: LinearProgram, time_limit: float | None = None, check: Callable[[], None] = _never
) -> Solution:
    """Solve ``program`` with HiGHS (in a child process, killed once ``check`` raises); a
    :class:`SqlmlError` if it has no optimum."""
    if (program.lower > program.upper).any():
        row = int((program.lower > program.upper).argmax())
        raise SqlmlError(
            f"the problem is infeasible: the constraints without SUM leave row {row + 1} no "
            f"value (at least {program.lower[row]:g} and at most {program.upper[row]:g})",
            hint="check those constraints against that row's values; nothing was written",
        )
    matrix = program.matrix.tocsr()
    arrays = {
        "integrality": np.full(len(program.cost), int(program.integer)),
        "lower": program.lower,
        "upper": program.upper,
        "data": matrix.data,
        "indices": matrix.indices,
        "indptr": matrix.indptr,
        "shape": np.array(matrix.shape),
        "low": program.low,
        "high": program.high,
        "time_limit": np.array(time_limit if time_limit else np.nan),
    }

    def run(cost: np.ndarray) -> solver.Found:
        return solver.milp({**arrays, "cost": cost}, check)

    found = run(program.cost)
    status = found.status
    if status == 4 and "unbounded or infeasible" in found.message:
        # HiGHS's presolve may not tell which: unbounded if any values meet the constraints.
        feasible = run(np.zeros_like(program.cost)).x is not None
        status = 3 if feasible else 2
    if status == 2:
        raise SqlmlError(
            "the problem is infeasible: no values of the variable meet every constraint",
            hint="loosen or correct the constraints (or the var_type); nothing was written",
        )
    if status == 3:
        raise SqlmlError(
            "the problem is unbounded: the objective improves without limit",
            hint="bound the variable: a constraint on it, or a var_type such as "
            "NonNegativeReals; nothing was written",
        )
    if found.x is None:
        reason = "in solver.time_limit" if found.status == 1 else f"({found.message})"
        raise SqlmlError(
            f"the solver found no solution {reason}",
            hint="give it more time, or a smaller problem; nothing was written",
        )
    ended = "optimal" if found.status == 0 else "time limit reached: not proven optimal"
    values = found.x + 0.0  # no -0.0
    if program.integer:
        values = np.rint(values).astype(np.int64)
    objective = program.sign * float(program.cost @ values) + program.offset
    return Solution(values, objective, ended)
