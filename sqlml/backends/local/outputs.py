"""The outputs of a run's steps: what their ``Ref``s read, and what a mapped step maps over."""

from __future__ import annotations

import json
from typing import Any

from sqlml.backends.local.tasks import TaskResult
from sqlml.workflow.core import Ref, Step, WorkflowError


class Outputs:
    """Each ended step's outputs, by name: those of steps that succeeded or were cached."""

    def __init__(self) -> None:
        self._by_step: dict[str, dict[str, str]] = {}

    def set(self, step: str, outputs: dict[str, str]) -> None:
        self._by_step[step] = outputs

    def resolve(self, ref: Ref) -> str:
        """The output ``ref`` names; a WorkflowError if there is none."""
        outputs = self._by_step.get(ref.step)
        if outputs is None or ref.name not in outputs:
            raise WorkflowError(
                f"step {ref.step} has no output {ref.name} (it was skipped, failed, or "
                "does not produce it)",
                hint="read outputs only of steps that run before, and name them right",
            )
        return outputs[ref.name]

    def items(self, step: Step) -> list[Any] | None:
        """What ``step`` maps over, or None if it is not mapped."""
        if step.items is None:
            return None
        if not isinstance(step.items, Ref):
            return list(step.items)
        text = self.resolve(step.items)
        try:
            items = json.loads(text)
        except json.JSONDecodeError:
            items = None
        if not isinstance(items, list):
            raise WorkflowError(
                f"step {step.name} maps over {step.items.step}'s output {step.items.name}, "
                f"which is not a JSON list: {text[:80]!r}",
                hint="make that step print a JSON list, e.g. json.dumps([...])",
            )
        return items


def gathered(step: Step, results: list[TaskResult]) -> dict[str, str]:
    """A step's outputs from its instances' results: a mapped step's, each output as a JSON
    list of the instances' values (``result`` at least)."""
    if step.items is None:
        return results[0].outputs
    names = {name for result in results for name in result.outputs}
    outputs = {n: json.dumps([r.outputs.get(n) for r in results]) for n in names}
    outputs.setdefault("result", "[]")
    return outputs
