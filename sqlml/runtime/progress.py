"""Progress of long steps (reading rows, training rounds or epochs, predicting rows).

The runtime reports through a tiny interface and knows no front end. Each running statement
has its own :class:`Progress` (``context.reporter``), given to the code that reports: a step
opens a :meth:`~Progress.stage` and calls :meth:`~Progress.advance` once per batch, round or
epoch (never per row). A front end gives a :class:`Sink` to whatever runs the statements,
which makes each statement's :class:`Progress` with it: the terminal one here (rich, on
standard error when it is a terminal) or the notebook's (``sqlml.repl.magic``). Without a
sink (``Progress()``) stages and advances cost an attribute lookup and show nothing.

A stage's last advance carries its final metrics (a training's, as its summary gives them),
whatever :meth:`~Progress.metrics_due` says: a bar shows the metrics of its last update
when it closes, never a stale one.

Statements running in parallel have a :class:`Progress` each, and so their own stages.

Where the command line shows progress (:func:`terminal`) ``SQLML_PROGRESS`` decides:
unset, bars on a terminal outside CI and nothing in pipes and CI logs; ``1``, also a plain
line per stage in pipes and CI logs, at most every :data:`LINES_EVERY` seconds and when it
ends (``training: 40/100 rounds  train_mlogloss 0.2315``; a stage of no count, as
``loading TensorFlow``, when it begins); ``0``, nothing anywhere.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any, Protocol

from sqlml import imports

METRICS_EVERY = 0.5  # seconds between evaluations of a metric just for the display
RECORDED_METRICS_EVERY = 5.0  # the same, for a page alone (a Recorder showing on no sink)
LINES_EVERY = 5.0  # seconds between two lines of a stage in a pipe (SQLML_PROGRESS=1)
PROGRESS_ENV = "SQLML_PROGRESS"


class Bar(Protocol):
    """One stage's display."""

    def update(self, advance: int, metrics: Mapping[str, float]) -> None:
        """``advance`` more units are done; ``metrics`` (maybe empty) are the latest."""

    def close(self) -> None:
        """The stage has ended: shown with the metrics of its last update (its final ones)."""


class Sink(Protocol):
    """Where progress is shown: a front end. One may say how often a metric is worth
    computing for it (``metrics_every``, seconds; else :data:`METRICS_EVERY`)."""

    def bar(self, description: str, total: int | None, unit: str) -> Bar:
        """A display for a stage of ``total`` (None: unknown) ``unit``."""


@dataclass
class _Stage:
    """A shown stage: its display and when a metric was last computed for it."""

    bar: Bar
    metrics_at: float = float("-inf")  # the first is due at once


class Progress:
    """The progress of one running statement, shown on ``sink`` (None: nowhere); its stages
    are named for ``subject`` (the model or table it writes: ``training (m)``), so that
    statements running in parallel can be told apart.

    Its stages nest: the innermost open one gets the advances. Without a sink no stage is
    ever opened, and nothing changes.
    """

    def __init__(self, sink: Sink | None = None, subject: str = "") -> None:
        self._to, self._subject = sink, subject
        self._current: _Stage | None = None

    @contextmanager
    def stage(
        self, description: str, total: int | None = None, unit: str = "rows"
    ) -> Iterator[None]:
        """A stage of work whose :meth:`advance` calls are shown."""
        if self._to is None:
            yield
            return
        if self._subject:
            description = f"{description} ({self._subject})"
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
        seconds (or the sink's ``metrics_every``), and never when nothing is shown."""
        current = self._current
        if current is None:
            return False
        now = time.monotonic()
        if now - current.metrics_at < (getattr(self._to, "metrics_every", None) or METRICS_EVERY):
            return False
        current.metrics_at = now
        return True


def terminal(stream: IO[str]) -> Sink | None:
    """Where the command line shows progress on ``stream`` (its standard error), as
    ``SQLML_PROGRESS`` says: rich bars when it is a terminal outside CI (and rich is
    installed); else plain lines if ``SQLML_PROGRESS`` asks for progress (``1``), nothing
    (None) if not; nothing anywhere with ``SQLML_PROGRESS=0``."""
    asked = os.environ.get(PROGRESS_ENV, "").strip().lower()
    if asked in ("0", "false", "no", "off"):
        return None
    if stream.isatty() and not os.environ.get("CI") and importlib.util.find_spec("rich"):
        return _RichSink(stream)
    return _LineSink(stream) if asked else None


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
        rich = imports.load("rich.progress")  # in the first step's thread that shows a bar
        text = imports.load("rich.text").Text

        class Count(rich.ProgressColumn):
            """``done/total`` (``?`` for an unknown total); nothing for a stage of no count."""

            def render(self, task: Any) -> Any:
                if not task.fields["unit"]:
                    return text("")
                total = "?" if task.total is None else f"{task.total:.0f}"
                return text(f"{task.completed:.0f}/{total}", style="progress.download")

        return rich.Progress(
            rich.TextColumn("{task.description}"),
            rich.BarColumn(),
            Count(),
            rich.TextColumn("{task.fields[unit]} {task.fields[metrics]}"),
            rich.TimeElapsedColumn(),
            console=imports.load("rich.console").Console(file=self._stream),
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


class _LineSink:
    """Stages as plain lines, for pipes and CI logs: each stage's state at most every
    :data:`LINES_EVERY` seconds, and its final state when it ends."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()  # statements in parallel write whole lines

    def bar(self, description: str, total: int | None, unit: str) -> Bar:
        return _LineBar(self, description, total, unit)

    def write(self, line: str) -> None:
        with self._lock:
            print(line, file=self._stream, flush=True)


class _LineBar:
    _shown = ""  # the line written last

    def __init__(self, sink: _LineSink, description: str, total: int | None, unit: str) -> None:
        self._sink, self._description, self._total, self._unit = sink, description, total, unit
        self._done, self._metrics = 0, ""
        self._shown_at = time.monotonic()
        if not unit:  # a stage of no count (loading a library): said as it begins
            self._show()

    def update(self, advance: int, metrics: Mapping[str, float]) -> None:
        self._done += advance
        if metrics:
            self._metrics = format_metrics(metrics)
        now = time.monotonic()
        if now - self._shown_at >= LINES_EVERY:
            self._shown_at = now
            self._show()

    def close(self) -> None:
        if self._unit:
            self._show()

    def _show(self) -> None:
        """Write the stage's state, unless it is the line written last (a stage that ends
        just after a line)."""
        shown = state(self._description, self._done, self._total, self._unit, self._metrics)
        if shown != self._shown:
            self._sink.write(shown)
            self._shown = shown


def state(description: str, done: int, total: int | None, unit: str, metrics: str) -> str:
    """A stage's state as a line: ``training: 40/100 rounds  train_mlogloss 0.2315``; a stage
    without a unit (``loading TensorFlow``) is its description."""
    if not unit:
        return description
    count = f"{done}/{total}" if total is not None else str(done)
    return f"{description}: {count} {unit}" + (f"  {metrics}" if metrics else "")


def format_metrics(metrics: Mapping[str, float]) -> str:
    """``name value`` pairs, as the summaries show metrics."""
    return ", ".join(f"{name} {value:.4g}" for name, value in metrics.items())


class Recorder:
    """A sink that keeps the state of each open stage as a line (:func:`state`), for a
    reader elsewhere (a page): :meth:`lines`, safe from any thread. Each stage is shown on
    ``sink`` too, if given; ``changed`` (if given) gets the lines when a stage opens or ends
    and, in between, at most every ``every`` seconds; ``ended`` gets a stage's final line.
    Shown on no sink, a metric is computed for it every :data:`RECORDED_METRICS_EVERY`
    seconds only (a training's metric on a million rows takes a moment)."""

    def __init__(
        self,
        sink: Sink | None = None,
        changed: Callable[[list[str]], None] | None = None,
        ended: Callable[[str], None] | None = None,
        every: float = 1.0,
    ) -> None:
        self._sink, self._changed, self._ended, self._every = sink, changed, ended, every
        self._open: list[_RecordedBar] = []
        self._lock = threading.Lock()
        self._told_at = 0.0

    def bar(self, description: str, total: int | None, unit: str) -> Bar:
        shown = self._sink.bar(description, total, unit) if self._sink is not None else None
        bar = _RecordedBar(self, shown, description, total, unit)
        with self._lock:
            self._open.append(bar)
        self._tell(force=True)
        return bar

    @property
    def metrics_every(self) -> float:
        return METRICS_EVERY if self._sink is not None else RECORDED_METRICS_EVERY

    def lines(self) -> list[str]:
        """The open stages' states, the outermost first."""
        with self._lock:
            return [bar.line() for bar in self._open]

    def _tell(self, force: bool = False) -> None:
        if self._changed is None:
            return
        now = time.monotonic()
        if not force and now - self._told_at < self._every:
            return
        self._told_at = now
        self._changed(self.lines())

    def _close(self, bar: _RecordedBar) -> None:
        with self._lock:
            self._open.remove(bar)
        if self._ended is not None:
            self._ended(bar.line())
        self._tell(force=True)


class _RecordedBar:
    def __init__(
        self, owner: Recorder, shown: Bar | None, description: str, total: int | None, unit: str
    ) -> None:
        self._owner, self._shown = owner, shown
        self._description, self._total, self._unit = description, total, unit
        self._done, self._metrics = 0, ""

    def update(self, advance: int, metrics: Mapping[str, float]) -> None:
        self._done += advance
        if metrics:
            self._metrics = format_metrics(metrics)
        if self._shown is not None:
            self._shown.update(advance, metrics)
        self._owner._tell()

    def close(self) -> None:
        if self._shown is not None:
            self._shown.close()
        self._owner._close(self)

    def line(self) -> str:
        return state(self._description, self._done, self._total, self._unit, self._metrics)
