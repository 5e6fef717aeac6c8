"""Progress of long steps (reading rows, training rounds or epochs, predicting rows).

The runtime reports through a tiny interface and knows no front end. Each running statement
has its own :class:`Progress` (``context.reporter``), given to the code that reports: a step
opens a :meth:`~Progress.stage` and calls :meth:`~Progress.advance` once per batch, round or
epoch (never per row). A front end gives a :class:`Sink` to whatever runs the statements,
which makes each statement's :class:`Progress` with it: the terminal one here (rich, on
standard error when it is a terminal) or the notebook's (``sqlml.repl.magic``). Without a
sink (``Progress()``) stages and advances cost an attribute lookup and show nothing.

Statements running in parallel have a :class:`Progress` each, and so their own stages.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any, Protocol

METRICS_EVERY = 0.5  # seconds between evaluations of a metric just for the display


class Bar(Protocol):
    """One stage's display."""

    def update(self, advance: int, metrics: Mapping[str, float]) -> None:
        """``advance`` more units are done; ``metrics`` (maybe empty) are the latest."""

    def close(self) -> None:
        """The stage has ended."""


class Sink(Protocol):
    """Where progress is shown: a front end."""

    def bar(self, description: str, total: int | None, unit: str) -> Bar:
        """A display for a stage of ``total`` (None: unknown) ``unit``."""


@dataclass
class _Stage:
    """A shown stage: its display and when a metric was last computed for it."""

    bar: Bar
    metrics_at: float = 0.0


class Progress:
    """The progress of one running statement, shown on ``sink`` (None: nowhere).

    Its stages nest: the innermost open one gets the advances. Without a sink no stage is
    ever opened, and nothing changes.
    """

    def __init__(self, sink: Sink | None = None) -> None:
        self._to = sink
        self._current: _Stage | None = None

    @contextmanager
    def stage(
        self, description: str, total: int | None = None, unit: str = "rows"
    ) -> Iterator[None]:
        """A stage of work whose :meth:`advance` calls are shown."""
        if self._to is None:
            yield
            return
        bar = self._to.bar(description, total, unit)
        previous, self._current = self._current, _Stage(bar)
        try:
            yield
        finally:
            self._current = previous
            bar.close()

    def advance(self, count: int = 1, **metrics: float) -> None:
        """``count`` more units of the current stage are done (if one is shown)."""
        if self._current is not None:
            self._current.bar.update(count, metrics)

    def shown(self) -> bool:
        """Whether the current stage is shown."""
        return self._current is not None

    def metrics_due(self) -> bool:
        """Whether to compute a metric for the display now: at most every METRICS_EVERY
        seconds, and never when nothing is shown."""
        current = self._current
        if current is None:
            return False
        now = time.monotonic()
        if now - current.metrics_at < METRICS_EVERY:
            return False
        current.metrics_at = now
        return True


def terminal(stream: IO[str]) -> Sink | None:
    """A rich progress display on ``stream`` when it is a terminal outside CI (and rich is
    installed), else None."""
    if not stream.isatty() or os.environ.get("CI") or importlib.util.find_spec("rich") is None:
        return None
    return _RichSink(stream)


class _RichSink:
    """Bars of a rich Progress on a terminal (rich is imported at the first); each vanishes
    when its stage ends."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._progress: Any = None
        self._open = 0
        self._lock = threading.Lock()

    def bar(self, description: str, total: int | None, unit: str) -> Bar:
        with self._lock:
            if self._progress is None:
                self._progress = self._new_progress()
            if not self._open:
                self._progress.start()
            self._open += 1
        task = self._progress.add_task(description, total=total, unit=unit, metrics="")
        return _RichBar(self, task)

    def _new_progress(self) -> Any:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        return Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[unit]} {task.fields[metrics]}"),
            TimeElapsedColumn(),
            console=Console(file=self._stream),
            transient=True,
        )

    def _closed(self, task: Any) -> None:
        self._progress.refresh()  # a stage shorter than a refresh shows its end
        self._progress.remove_task(task)
        with self._lock:
            self._open -= 1
            if not self._open:
                self._progress.stop()


class _RichBar:
    def __init__(self, sink: _RichSink, task: Any) -> None:
        self._owner, self._task = sink, task

    def update(self, advance: int, metrics: Mapping[str, float]) -> None:
        shown = {"metrics": format_metrics(metrics)} if metrics else {}
        self._owner._progress.update(self._task, advance=advance, **shown)

    def close(self) -> None:
        self._owner._closed(self._task)


def format_metrics(metrics: Mapping[str, float]) -> str:
    """``name value`` pairs, as the summaries show metrics."""
    return ", ".join(f"{name} {value:.4g}" for name, value in metrics.items())
