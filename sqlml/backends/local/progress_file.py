"""A running step's progress beside its log, for ``sqlml ui``: ``RUN_DIR/STEP.progress``
holds the state of each stage the step's statement has open (``training (m): 40/100 rounds
train_mlogloss 0.2315``, a line each), as the command line's progress shows it.

The file is replaced whole (never read half written) when a stage opens or ends and at most
every :data:`EVERY` seconds in between, so a training of 1,000 rounds a second writes it
once a second; it is removed once no stage is open, and each stage's final state goes into
the step's log.
"""

from __future__ import annotations

import time
from contextlib import suppress
from pathlib import Path
from typing import IO

from sqlml.runtime.progress import Recorder, Sink

SUFFIX = ".progress"
EVERY = 1.0  # seconds between two writes of a stage's state


def progress_sink(sink: Sink | None, path: Path, log: IO[str]) -> Recorder:
    """A sink that shows each stage on ``sink`` (if given) and keeps its state in ``path``
    (its final state in ``log`` too)."""

    def changed(lines: list[str]) -> None:
        with suppress(OSError):  # no progress shown, but the step goes on
            if not lines:
                path.unlink(missing_ok=True)
                return
            partial = path.with_name(path.name + ".partial")
            partial.write_text("\n".join(lines) + "\n", encoding="utf-8")
            partial.replace(path)

    def ended(line: str) -> None:
        log.write(f"{time.strftime('%H:%M:%S')} {line}\n")
        log.flush()

    return Recorder(sink, changed, ended, EVERY)


def read_progress(path: Path) -> list[str]:
    """The states in the progress file ``path`` (none when there is none)."""
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
