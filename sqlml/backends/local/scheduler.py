"""The scheduler: starts each step once the steps it waits for have ended, runs its instances
on a pool of workers and hands their results back when the last one is in."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Protocol

from sqlml.backends.local import record as rec
from sqlml.backends.local.tasks import TaskResult
from sqlml.backends.local.verdicts import CANCELLED_RUN, omission
from sqlml.runtime import cancel
from sqlml.workflow.core import Step, WorkflowError

Instance = Callable[[], TaskResult]  # one run of a step, or of one item of a mapped step
# A running instance's future -> its step, the results of the step's instances, its index.
_Running = dict[Future[TaskResult], tuple[Step, list[TaskResult | None], int]]


class StepHandler(Protocol):
    """What happens at a step's start and end; it sets the step's state in the run's states."""

    def start(self, step: Step, values: dict[str, str]) -> list[Instance] | None:
        """The instances of ``step`` to run, or None if it ended at once."""

    def finish(self, step: Step, results: list[TaskResult]) -> None:
        """End a started step from its instances' results, in their order."""

    def omit(self, step: Step, why: str) -> None:
        """End a step that does not run."""


class Scheduler:
    """Runs steps on ``jobs`` workers as ``states`` (each ended step's) allow; none starts
    once ``token`` is cancelled. Call :meth:`shutdown` when done."""

    def __init__(
        self, jobs: int, handler: StepHandler, states: Mapping[str, str], token: cancel.Token
    ) -> None:
        self._pool: _InlinePool | ThreadPoolExecutor = (
            _InlinePool() if jobs == 1 else ThreadPoolExecutor(jobs)
        )
        self._handler, self._states, self._token = handler, states, token

    def run(self, steps: list[Step], values: dict[str, str]) -> None:
        """Run ``steps`` (their placeholders filled from ``values``) until all have ended."""
        pending = list(steps)
        running: _Running = {}
        while pending or running:
            for step in [s for s in pending if self._ready(s)]:
                pending.remove(step)
                self._start(step, values, running)
            if running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    step, results, index = running.pop(future)
                    results[index] = future.result()
                    if all(result is not None for result in results):
                        self._handler.finish(step, [r for r in results if r is not None])
            elif pending and not any(self._ready(s) for s in pending):
                raise WorkflowError("the workflow's steps wait for each other in a cycle")

    def shutdown(self) -> None:
        """Wait for the workers to end."""
        self._pool.shutdown(wait=True)

    def _ready(self, step: Step) -> bool:
        return all(d in self._states for d in step.after)

    def _start(self, step: Step, values: dict[str, str], running: _Running) -> None:
        if self._token.stopped:
            self._handler.omit(step, f"{CANCELLED_RUN} ({self._token.reason})")
        elif any(self._states[d] not in rec.DONE_STATES for d in step.after):
            self._handler.omit(step, omission(step.after, self._states))
        else:
            instances = self._handler.start(step, values)
            if instances == []:  # a mapped step over no items
                self._handler.finish(step, [])
            results: list[TaskResult | None] = [None] * len(instances or [])
            for index, instance in enumerate(instances or []):
                # in the context of the run (the file its warnings name, sqlml.errors)
                future = self._pool.submit(contextvars.copy_context().run, instance)
                running[future] = (step, results, index)


class _InlinePool:
    """Runs each submitted call at once in this thread: one worker, no thread switching."""

    def submit(
        self, run: Callable[[Instance], TaskResult], instance: Instance
    ) -> Future[TaskResult]:
        future: Future[TaskResult] = Future()
        future.set_result(run(instance))
        return future

    def shutdown(self, wait: bool = True) -> None:
        """Nothing runs in the background."""
