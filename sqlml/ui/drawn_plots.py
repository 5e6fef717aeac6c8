"""The plots the editor's statements drew, for the models' pages.

The editor's runs keep no run record (as the shell's), so the record cannot say which files
they drew: the server remembers them while it runs, the newest :data:`KEPT` of each model.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette

KEPT = 10  # plots remembered for each model
_LOCK = threading.Lock()


@dataclass(frozen=True)
class DrawnPlot:
    """A plot a statement run in the editor drew of a model."""

    kind: str  # evaluate or explain
    path: Path
    statement: str
    at: float  # when, in seconds since the epoch
    version: int | None  # of the model: the one the statement measured


class DrawnPlots:
    """The plots drawn in this server's editor, by model, the newest first."""

    def __init__(self) -> None:
        self._by_model: dict[str, deque[DrawnPlot]] = {}
        self._lock = threading.Lock()

    def add(self, model: str, kind: str, path: Path, statement: str, version: int | None) -> None:
        with self._lock:
            kept = self._by_model.setdefault(model, deque(maxlen=KEPT))
            kept.appendleft(DrawnPlot(kind, path, statement, time.time(), version))

    def of(self, model: str) -> list[DrawnPlot]:
        """The plots of ``model``, the newest first, one for each file."""
        with self._lock:
            kept = list(self._by_model.get(model, ()))
        unique: dict[Path, DrawnPlot] = {}
        for plot in kept:
            unique.setdefault(plot.path, plot)
        return list(unique.values())


def drawn_plots(app: Starlette) -> DrawnPlots:
    """The application's record of the plots its editor drew."""
    with _LOCK:
        found = getattr(app.state, "drawn_plots", None)
        if found is None:
            found = app.state.drawn_plots = DrawnPlots()
        return found
