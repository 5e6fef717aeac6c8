"""Workflows as explicit values: named steps and the steps each one waits for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Step:
    """One unit of work. ``template`` names its kind (one runner per kind);
    ``params`` is its JSON-serialisable input; it runs after the steps in ``after``."""

    name: str
    template: str
    params: dict[str, Any]
    after: tuple[str, ...] = ()


class Workflow:
    """An ordered set of uniquely named steps whose dependencies come earlier."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._steps: dict[str, Step] = {}

    @property
    def steps(self) -> list[Step]:
        return list(self._steps.values())

    def add(self, step: Step) -> Step:
        """Add ``step``; its name must be new and its dependencies already added."""
        if step.name in self._steps:
            raise ValueError(f"workflow {self.name} already has a step named {step.name}")
        unknown = [name for name in step.after if name not in self._steps]
        if unknown:
            raise ValueError(f"step {step.name} waits for unknown steps {unknown}")
        self._steps[step.name] = step
        return step


def names(steps: Sequence[Step]) -> tuple[str, ...]:
    """The names of ``steps``, for a step's ``after``."""
    return tuple(step.name for step in steps)
