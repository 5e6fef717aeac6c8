"""Progress of long steps (reading rows, training rounds or epochs, predicting rows).

The runtime reports through a tiny interface and knows no front end: a step opens a
:func:`stage` and calls :func:`advance` once per batch, round or epoch (never per row). A
front end installs a :class:`Sink` with :func:`reporting`: the terminal one here (rich, on
standard error when it is a terminal) or the notebook's (``sqlml.repl.magic``). Without a
sink, stages and advances cost a thread-local lookup.

Stages belong to the thread that opens them, so statements running in parallel each have
their own.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
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


_sink: Sink | None = None
_local = threading.local()


@contextmanager
def reporting(sink: Sink | None) -> Iterator[None]:
    """Show the progress of the stages run in the body on ``sink`` (None: nowhere)."""
    global _sink
    previous, _sink = _sink, sink
    try:
        yield
    finally:
        _sink = previous


@contextmanager
def stage(description: str, total: int | None = None, unit: str = "rows") -> Iterator[None]:
    """A stage of work whose :func:`advance` calls in this thread are shown."""
    sink = _sink
    if sink is None:
        yield
        return
    bar = sink.bar(description, total, unit)
    previous = getattr(_local, "stage", None)
    _local.stage = (bar, [0.0])
    try:
        yield
    finally:
        _local.stage = previous
        bar.close()


def advance(count: int = 1, **metrics: float) -> None:
    """``count`` more units of this thread's current stage are done (if one is shown)."""
    current = getattr(_local, "stage", None)
    if current is not None:
        current[0].update(count, metrics)


def shown() -> bool:
    """Whether this thread's current stage is shown."""
    return getattr(_local, "stage", None) is not None


def metrics_due() -> bool:
    """Whether to compute a metric for the display now: at most every METRICS_EVERY
    seconds, and never when nothing is shown."""
    current = getattr(_local, "stage", None)
    if current is None:
        return False
    now, last = time.monotonic(), current[1]
    if now - last[0] < METRICS_EVERY:
        return False
    last[0] = now
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
        self._sink, self._task = sink, task

    def update(self, advance: int, metrics: Mapping[str, float]) -> None:
        shown = {"metrics": format_metrics(metrics)} if metrics else {}
        self._sink._progress.update(self._task, advance=advance, **shown)

    def close(self) -> None:
        self._sink._closed(self._task)


def format_metrics(metrics: Mapping[str, float]) -> str:
    """``name value`` pairs, as the summaries show metrics."""
    return ", ".join(f"{name} {value:.4g}" for name, value in metrics.items())
