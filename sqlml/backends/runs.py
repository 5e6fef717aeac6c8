"""A backend's runs as ``sqlml ui`` shows them, whatever the backend: the views of a run and
of its steps (:class:`RunView`, :class:`StepView`), their states, and :class:`RunViews`, what
a backend implements so that the page lists its runs, draws a run's DAG with its steps'
states, shows their details and logs, and resumes or stops a run.

A backend's :meth:`~sqlml.backends.Backend.run_views` gives its :class:`RunViews`; the page
asks them and names no backend. The page's templates render the views: ``run.html`` by
default, or the one a backend's views name from their own ``templates`` folder.
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

RUN_ID = re.compile(r"\w[\w.-]*\Z")  # the run ids the pages accept (no path separators)
PENDING, RUNNING, FAILED, CANCELLED = "pending", "running", "failed", "cancelled"
LOST = "lost"  # a run whose process on this host ended without recording the run's end
ENDED = frozenset({"succeeded", FAILED, CANCELLED, LOST})
STATES = ("running", "succeeded", "failed", "cancelled", LOST)  # the list's state filter
_HINT = "\n  hint: "  # where a recorded error's hint starts


class Where(Protocol):
    """What the page reads (``sqlml.ui.settings.Settings``): the datasource's URL, the run
    folder, and the folder programs' relative paths start from."""

    @property
    def datasource(self) -> str | None: ...
    @property
    def run_dir(self) -> Path: ...
    @property
    def base_dir(self) -> Path: ...


@dataclass
class StepView:
    """One step of a run: what it is and how it went."""

    name: str
    kind: str = ""
    after: list[str] = field(default_factory=list)
    text: str | None = None
    line: int | None = None
    column: int | None = None
    state: str = PENDING
    attempts: int = 0
    started_at: float | None = None
    ended_at: float | None = None
    error: str | None = None
    model: dict[str, Any] | None = None  # the version it trained or measured: name, version

    @property
    def message(self) -> str | None:
        """The error without its hint."""
        return self.error.split(_HINT, 1)[0] if self.error else None

    @property
    def hint(self) -> str | None:
        return self.error.split(_HINT, 1)[1] if self.error and _HINT in self.error else None

    @property
    def title(self) -> str:
        """What hovering over its node says: name, state, times, attempts."""
        lines = [f"{self.name}: {self.state}"]
        if self.started_at is not None:
            lines.append(f"started {clock(self.started_at)}")
            if self.ended_at is not None:
                lines.append(f"took {duration(self.ended_at - self.started_at)}")
        if self.attempts > 1:
            lines.append(f"{self.attempts} attempts")
        return "\n".join(lines)

    def details(self) -> dict[str, Any]:
        """Everything the step panel shows, as JSON."""
        return {
            "name": self.name,
            "kind": self.kind,
            "after": self.after,
            "state": self.state,
            "statement": self.text,
            "line": self.line,
            "column": self.column,
            "attempts": self.attempts,
            "started": clock(self.started_at) if self.started_at else None,
            "duration": duration(self.ended_at - self.started_at)
            if self.started_at is not None and self.ended_at is not None
            else None,
            "error": self.message,
            "hint": self.hint,
            "model": self.model,
        }


@dataclass
class RunView:
    """A run: where it came from, who ran it where, its state and steps. A backend's
    subclass sets ``backend`` (its name) and says whether the page resumes or stops it."""

    backend: ClassVar[str] = ""  # where it ran: its backend's name
    run_id: str
    workflow: str = ""
    source: str | None = None
    base_dir: str | None = None
    user: str = ""
    host: str = ""
    pid: int | None = None
    started_at: float | None = None
    ended_at: float | None = None
    state: str = RUNNING
    resumed_from: str | None = None
    steps: list[StepView] = field(default_factory=list)

    @property
    def program(self) -> str:
        """The program's file name (``<-e>`` for a string), else the workflow's name."""
        return Path(self.source).name if self.source else self.workflow

    @property
    def where(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    @property
    def duration(self) -> str:
        if self.started_at is None:
            return ""
        return duration((self.ended_at or time.time()) - self.started_at)

    @property
    def started(self) -> str:
        return clock(self.started_at, day=True) if self.started_at else ""

    @property
    def ended(self) -> str:
        """When it ended (a lost one: when it was last heard of), else nothing."""
        return clock(self.ended_at) if self.ended_at and self.state in ENDED else ""

    @property
    def resumable(self) -> bool:
        return False

    @property
    def stoppable(self) -> bool:
        return False

    @property
    def badge(self) -> tuple[str, str] | None:
        """The label the list shows beside its run id, and its title (None: none)."""
        return None

    def step(self, name: str) -> StepView | None:
        return next((step for step in self.steps if step.name == name), None)


class ViewError(Exception):
    """What the page answers instead: ``status`` and the JSON ``{"error": error, **more}``
    (a log's: the text ``error``)."""

    def __init__(self, status: int, error: str, **more: Any) -> None:
        super().__init__(error)
        self.status, self.error, self.more = status, error, more

    def payload(self) -> dict[str, Any]:
        return {"error": self.error, **self.more}


class RunViews(ABC):
    """A backend's runs for ``sqlml ui``. ``where`` is what the page reads (:class:`Where`).
    Each method may raise :class:`ViewError` for the page to answer."""

    page: ClassVar[str] = "run.html"  # the template of a run's page
    templates: ClassVar[Path | None] = None  # a folder of its own templates

    @abstractmethod
    def runs(self, where: Where) -> tuple[list[RunView], str | None]:
        """Its runs (without their steps), and a note when some cannot be read now."""

    def owns(self, where: Where, run_id: str) -> bool:
        """Whether ``run_id`` names one of its runs (the default backend's views answer the
        ids no other backend owns, without being asked)."""
        return False

    @abstractmethod
    def run(self, where: Where, run_id: str) -> RunView | None:
        """The run ``run_id`` with its steps; None when it knows none."""

    def described(self, run_dir: Path, run_id: str) -> RunView | None:
        """The run ``run_id`` as its description in ``run_dir`` says (its steps' kinds and
        texts, its base folder), without how it went; None when none describes it."""
        return None

    def page_context(self, where: Where, run: RunView) -> dict[str, Any]:
        """What its run page's template shows besides the run and its DAG."""
        return {}

    def state(self, run: RunView) -> dict[str, Any]:
        """The run's state and each step's state and hover text, for the live page."""
        return {
            "state": run.state,
            "duration": run.duration,
            "ended": run.ended,
            "resumable": run.resumable,
            "stoppable": run.stoppable,
            "steps": {step.name: [step.state, step.title] for step in run.steps},
        }

    def step_details(self, where: Where, run: RunView, step: StepView) -> dict[str, Any]:
        """What the step panel shows but the log: its details and failed attempts."""
        return {**step.details(), "failed_attempts": []}

    @abstractmethod
    def log(self, where: Where, run_id: str, step: str) -> str:
        """The log of ``step`` of ``run_id``."""

    def resume(self, where: Where, run_id: str) -> str:
        """Start resuming the run; the new run's id."""
        raise ViewError(409, f"run {run_id} cannot be resumed from this page")

    def stop(self, where: Where, run_id: str) -> str:
        """Stop the run; its id."""
        raise ViewError(409, f"run {run_id} cannot be stopped from this page")


def clock(seconds: float | None, day: bool = False) -> str:
    """A time of day (and date) on this machine's clock."""
    if seconds is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S" if day else "%H:%M:%S", time.localtime(seconds))


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
