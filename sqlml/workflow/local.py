"""The local backend: runs a workflow's steps in this process, in order."""

from __future__ import annotations

from collections.abc import Callable

from sqlml import ir
from sqlml.runtime.datasource import Datasource
from sqlml.runtime.execute import Outcome, execute
from sqlml.workflow.core import Step, Workflow

StatementDone = Callable[[Step, Outcome], None]


class LocalExecutor:
    """Run steps one after another against one datasource."""

    def __init__(self, datasource: Datasource, on_done: StatementDone | None = None) -> None:
        self._datasource = datasource
        self._on_done = on_done

    def run(self, workflow: Workflow) -> list[Outcome]:
        """Run every step; the first failure stops the run and propagates."""
        outcomes = []
        for step in workflow.steps:
            outcome = execute(ir.from_dict(step.params), self._datasource)
            if self._on_done is not None:
                self._on_done(step, outcome)
            outcomes.append(outcome)
        return outcomes
