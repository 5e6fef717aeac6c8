"""IR statements to a workflow value, ready for a backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlml import ir, steps
from sqlml.datasources.url import DEFAULT_DIALECT
from sqlml.plan import Plan, PlannedStatement, plan
from sqlml.workflow.core import Step, Workflow


def to_workflow(
    statements: Sequence[ir.Statement], name: str, dialect: str = DEFAULT_DIALECT
) -> Workflow:
    """One step per statement, each after the statements it depends on (the program's
    dependency DAG, standard SQL read in sqlglot's ``dialect``): independent ones have no
    edge between them."""
    return build(plan(statements, dialect), name)


def add_step(workflow: Workflow, planned: PlannedStatement, after: list[Step]) -> Step:
    """The step zoo's step of ``planned``, added to ``workflow`` after ``after``."""
    make = getattr(steps, planned.step)
    if planned.fans_out:  # adds its own steps (a search: trials, then the best)
        return make(workflow, planned.statement, after)
    return workflow.add(make(planned.statement, after=after))


# Adds a planned statement's step (or steps) to a workflow, after the given steps, and returns
# the step later statements wait for.
AddStep = Callable[[Workflow, PlannedStatement, list[Step]], Step]


def build(program: Plan, name: str, add: AddStep = add_step) -> Workflow:
    """The workflow of ``program``: each statement's step, made by ``add``, after the steps
    of the statements it waits for."""
    workflow = Workflow(name)
    added: dict[str, Step] = {}
    for planned in program:
        added[planned.id] = add(workflow, planned, [added[id_] for id_ in planned.after])
    return workflow
