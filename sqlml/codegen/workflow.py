"""IR statements to a workflow value, ready for a backend."""

from __future__ import annotations

from collections.abc import Sequence

from sqlml import ir, steps
from sqlml.workflow.core import Step, Workflow


def to_workflow(statements: Sequence[ir.Statement], name: str) -> Workflow:
    """One step per statement; each waits for the one before it."""
    workflow = Workflow(name)
    previous: list[Step] = []
    for statement in statements:
        make = getattr(steps, steps.STEP_FOR_KIND[statement.kind])
        previous = [workflow.add(make(statement, after=previous))]
    return workflow
