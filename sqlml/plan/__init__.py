"""The plan of a program: its statements in order, each with the statements it waits for.

:func:`plan` turns a program's IR into what every backend consumes: the local executor's
workflow (``codegen/workflow.py``), the Python program (``codegen/python.py``) and the Argo
Workflow (``codegen/argo.py``). The waits come from the dependency analysis
(:mod:`sqlml.plan.dag`), a pass over the IR.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlml import ir
from sqlml.plan.dag import ProgramGraph, StatementIO, dependencies
from sqlml.statements import StatementKind, kind_of


@dataclass(frozen=True)
class PlannedStatement:
    """One statement of the plan, with what a backend needs to make its step."""

    statement: ir.Statement
    kind: StatementKind
    after: tuple[str, ...]  # ids of the statements it waits for: direct ones, in program order

    @property
    def id(self) -> str:
        return self.statement.id

    @property
    def step(self) -> str:
        """The name of the step zoo's function (``sqlml.steps.<step>``) that makes its step."""
        assert self.kind.step is not None, f"{self.kind.name} steps are made by another kind's step"
        return self.kind.step

    @property
    def fans_out(self) -> bool:
        """Whether its step function takes the workflow and adds several steps (a search)."""
        return self.kind.fans_out


@dataclass(frozen=True)
class Plan:
    """A program's statements in program order, each after the ones it waits for."""

    statements: tuple[PlannedStatement, ...]

    def __iter__(self) -> Iterator[PlannedStatement]:
        return iter(self.statements)


def plan(statements: Sequence[ir.Statement], dialect: str) -> Plan:
    """The plan of ``statements``, their standard SQL read in sqlglot's ``dialect``:
    independent statements wait for nothing from each other."""
    if len(statements) == 1:  # waits for nothing: its SQL need not be read (nor sqlglot loaded)
        return Plan((PlannedStatement(statements[0], kind_of(statements[0]), ()),))
    graph = dependencies(statements, dialect)
    return Plan(tuple(PlannedStatement(s, kind_of(s), graph.after[s.id]) for s in statements))


__all__ = ["Plan", "PlannedStatement", "ProgramGraph", "StatementIO", "dependencies", "plan"]
