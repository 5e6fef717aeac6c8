"""Workflows as explicit values: named steps, what each waits for, and how it runs.

A :class:`Workflow` holds uniquely named :class:`Step` values in the order they were added;
a step runs after the steps in its ``after``. There is no global state: every function takes
and returns values, and step names come from the program, never from call sites.

Backends read the plain fields: the local executor runs ``when``, ``items`` (map),
``repeat_while``, ``retry``, ``timeout``, inputs, outputs, artifacts and prerequisites;
``resources``, ``node_selector``, ``secrets`` and ``volumes`` matter on Kubernetes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlml.errors import SqlmlError
from sqlml.workflow.prerequisites import Prerequisite

# Step templates besides the statement kinds (sqlml.ir): what a backend runs.
CONTAINER = "container"  # a command in an image
SCRIPT = "script"  # source code run by an interpreter in an image
RESOURCE = "resource"  # a Kubernetes object created and watched until a condition holds


class WorkflowError(SqlmlError):
    """A workflow is built or run wrongly: unknown steps, bad conditions, a failed step."""


@dataclass(frozen=True)
class Ref:
    """An output of a step: a parameter (``result`` is its standard output; for a statement,
    the first value of its result) or a file artifact. For a mapped step: a JSON list."""

    step: str
    name: str = "result"


@dataclass(frozen=True)
class Condition:
    """``left op right``, each side a value or a :class:`Ref`; numbers compare as numbers."""

    op: str  # one of OPERATORS
    left: Any
    right: Any

    def refs(self) -> tuple[Ref, ...]:
        return tuple(side for side in (self.left, self.right) if isinstance(side, Ref))


OPERATORS = ("==", "!=", "<", "<=", ">", ">=")


def equal(left: Any, right: Any) -> Condition:
    return Condition("==", left, right)


def not_equal(left: Any, right: Any) -> Condition:
    return Condition("!=", left, right)


def greater(left: Any, right: Any) -> Condition:
    return Condition(">", left, right)


def greater_equal(left: Any, right: Any) -> Condition:
    return Condition(">=", left, right)


def less(left: Any, right: Any) -> Condition:
    return Condition("<", left, right)


def less_equal(left: Any, right: Any) -> Condition:
    return Condition("<=", left, right)


@dataclass(frozen=True)
class Retry:
    """Retry a failed step ``limit`` times, waiting ``backoff * factor**n`` seconds (at most
    ``max_backoff``) before retry ``n`` (from 0)."""

    limit: int = 3
    backoff: float = 1.0
    factor: float = 2.0
    max_backoff: float = 60.0

    def delay(self, retry: int) -> float:
        return min(self.backoff * self.factor**retry, self.max_backoff)


@dataclass(frozen=True)
class Resources:
    """Kubernetes resource requests and limits, e.g. ``{"cpu": "2", "memory": "4Gi"}``."""

    requests: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Secret:
    """Environment variable ``env`` from key ``key`` of the Kubernetes Secret ``name``.

    The local executor takes it from its own environment variable ``env``.
    """

    env: str
    name: str
    key: str


@dataclass(frozen=True)
class Volume:
    """A volume mounted at ``mount_path``: a PersistentVolumeClaim, or an empty dir."""

    name: str
    mount_path: str
    claim: str | None = None


@dataclass(frozen=True)
class ArtifactInput:
    """A file another step produced (``source``: a Ref to its output artifact), placed at
    ``path`` before this step runs."""

    name: str
    path: str
    source: Ref


@dataclass(frozen=True)
class Step:
    """One unit of work. ``template`` names its kind (a statement kind, or CONTAINER, SCRIPT,
    RESOURCE); ``params`` is its JSON-serialisable definition; it runs after ``after``.

    Parameters, ``{{item}}`` and ``{{workflow.status}}`` are substituted, Argo style
    (``{{inputs.parameters.NAME}}``), into a container's command, arguments and environment,
    into a script's source, and into the strings of a mapped statement step's IR.
    """

    name: str
    template: str
    params: dict[str, Any]
    after: tuple[str, ...] = ()
    inputs: Mapping[str, Any] = field(default_factory=dict)  # parameter -> value or Ref
    outputs: Mapping[str, str] = field(default_factory=dict)  # parameter -> file holding it
    input_artifacts: tuple[ArtifactInput, ...] = ()
    output_artifacts: Mapping[str, str] = field(default_factory=dict)  # name -> file path
    when: Condition | None = None  # run only if it holds, else the step is skipped
    items: tuple[Any, ...] | Ref | None = None  # map: one instance per item (``{{item}}``)
    repeat_while: Condition | None = None  # run again while it holds (on its own outputs)
    max_iterations: int = 100
    retry: Retry | None = None
    timeout: float | None = None  # seconds per attempt
    prerequisites: tuple[str, ...] = ()  # names of the workflow's prerequisites
    resources: Resources | None = None
    node_selector: Mapping[str, str] = field(default_factory=dict)
    secrets: tuple[Secret, ...] = ()
    volumes: tuple[Volume, ...] = ()

    def output(self, name: str = "result") -> Ref:
        """A reference to one of this step's outputs (parameter or artifact)."""
        return Ref(self.name, name)

    def refs(self) -> tuple[Ref, ...]:
        """Every output of another step this one reads."""
        found = [value for value in self.inputs.values() if isinstance(value, Ref)]
        found += [artifact.source for artifact in self.input_artifacts]
        if isinstance(self.items, Ref):
            found.append(self.items)
        if self.when is not None:
            found += self.when.refs()
        return tuple(ref for ref in found if ref.step != self.name)


class Workflow:
    """An ordered set of uniquely named steps whose dependencies come earlier, the
    prerequisites they share, and exit handlers run when the rest has ended."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._steps: dict[str, Step] = {}
        self._exit_handlers: dict[str, Step] = {}
        self.prerequisites: dict[str, Prerequisite] = {}

    @property
    def steps(self) -> list[Step]:
        return list(self._steps.values())

    @property
    def exit_handlers(self) -> list[Step]:
        return list(self._exit_handlers.values())

    def add(self, step: Step) -> Step:
        """Add ``step``; its name must be new and the steps it waits for or reads already
        added. Steps whose outputs it reads are added to its ``after``. Returns it as added."""
        self._check(step)
        after = tuple(dict.fromkeys([*step.after, *(ref.step for ref in step.refs())]))
        step = replace(step, after=after)
        self._steps[step.name] = step
        return step

    def dag(self, steps: Iterable[Step]) -> list[Step]:
        """Add several steps, each with its own ``after``."""
        return [self.add(step) for step in steps]

    def concurrent(self, steps: Iterable[Step], after: Sequence[Step] = ()) -> list[Step]:
        """Add ``steps`` to run side by side, all after ``after``."""
        return [self.add(replace(step, after=names(after))) for step in steps]

    def when(self, condition: Condition, step: Step) -> Step:
        """Add ``step`` to run only if ``condition`` holds once the steps it reads are done."""
        return self.add(replace(step, when=condition))

    def map(self, step: Step, items: Iterable[Any] | Ref) -> Step:
        """Add ``step`` run once per item (a list, or a step's output holding a JSON list).

        A step reading this one's output gets the list of every instance's output: fan-in.
        """
        items = items if isinstance(items, Ref) else tuple(items)
        return self.add(replace(step, items=items))

    def exec_while(self, condition: Condition, step: Step, max_iterations: int = 100) -> Step:
        """Add ``step`` run again and again while ``condition`` (on its outputs) holds."""
        if max_iterations < 1:
            raise WorkflowError(f"max_iterations must be at least 1, not {max_iterations}")
        return self.add(replace(step, repeat_while=condition, max_iterations=max_iterations))

    def on_exit(self, step: Step) -> Step:
        """Add an exit handler: it runs once every other step has ended, whatever the
        outcome; ``{{workflow.status}}`` is ``Succeeded`` or ``Failed``."""
        self._check(replace(step, after=()))
        self._exit_handlers[step.name] = step
        return step

    def prerequisite(self, prerequisite: Prerequisite) -> Prerequisite:
        """Define a prerequisite that steps name in their ``prerequisites``."""
        if prerequisite.name in self.prerequisites:
            raise WorkflowError(
                f"workflow {self.name} already has a prerequisite named {prerequisite.name}"
            )
        self.prerequisites[prerequisite.name] = prerequisite
        return prerequisite

    def _check(self, step: Step) -> None:
        if step.name in self._steps or step.name in self._exit_handlers:
            raise WorkflowError(
                f"workflow {self.name} already has a step named {step.name}",
                hint="give every step its own name",
            )
        unknown = [name for name in step.after if name not in self._steps]
        unknown += [ref.step for ref in step.refs() if ref.step not in self._steps]
        if unknown:
            raise WorkflowError(
                f"step {step.name} waits for or reads unknown steps {sorted(set(unknown))}",
                hint="add the steps it depends on first",
            )
        missing = [name for name in step.prerequisites if name not in self.prerequisites]
        if missing:
            raise WorkflowError(
                f"step {step.name} names undefined prerequisites {missing}",
                hint="define them with workflow.prerequisite(...) first",
            )
        for condition in (step.when, step.repeat_while):
            if condition is not None and condition.op not in OPERATORS:
                raise WorkflowError(
                    f"step {step.name} has a condition with unknown operator {condition.op!r}",
                    hint=f"use one of {', '.join(OPERATORS)}",
                )


def names(steps: Sequence[Step]) -> tuple[str, ...]:
    """The names of ``steps``, for a step's ``after``."""
    return tuple(step.name for step in steps)
