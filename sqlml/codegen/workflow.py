"""IR statements to a workflow value, ready for a backend."""

from __future__ import annotations

from collections.abc import Sequence

from sqlml import ir, steps
from sqlml.semantics.dependencies import dependencies
from sqlml.statements import kind_of
from sqlml.workflow.core import Step, Workflow


def to_workflow(statements: Sequence[ir.Statement], name: str, dialect: str = "duckdb") -> Workflow:
    """One step per statement, each after the statements it depends on (the program's
    dependency DAG, standard SQL read in sqlglot's ``dialect``): independent ones have no
    edge between them."""
    graph = dependencies(statements, dialect)
    workflow = Workflow(name)
    added: dict[str, Step] = {}
    for statement in statements:
        kind = kind_of(statement)
        assert kind.step is not None, f"{kind.name} steps are made by another kind's step"
        make = getattr(steps, kind.step)
        after = [added[step_id] for step_id in graph.after[statement.id]]
        if kind.fans_out:  # adds its own steps (a search: trials, then the best)
            added[statement.id] = make(workflow, statement, after)
            continue
        added[statement.id] = workflow.add(make(statement, after=after))
    return workflow
