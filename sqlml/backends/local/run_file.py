"""A recorded run's description and states beside its step logs, in ``RUN_DIR/RUN_ID/``.

``run.json`` says what the run was: the program it came from (its file and folder, to
resume it), who ran it where (user, host, process id, to stop it) and its DAG (each step's
kind, the steps it waits for, its statement's text and position). ``states.jsonl`` gets a
line at each step's start and end and at the run's end, as the run goes, and its time is
touched every :data:`HEARTBEAT` seconds while the run goes on (a heartbeat: a run whose
process died was last heard of then, to within as much). ``sqlml ui`` reads the states
there, even while the run holds its datasource (an embedded database file that
one process at a time may open). The run record in the database keeps the same states. Neither
file holds the datasource's URL or any other credential: ``run.json`` names the datasource by
its identity (a file's path, a server's URL without user, password or options).
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sqlml.workflow.core import Workflow

RUN_FILE = "run.json"
STATES_FILE = "states.jsonl"
HEARTBEAT = 5.0  # seconds between two touches of a running run's states file
_TAIL = 4096  # bytes at the end of a states file that hold its last line
_STATEMENT_FIELDS = ("text", "line", "column")


def describe(
    run_id: str,
    workflow: Workflow,
    resumed: str | None,
    source: str | None,
    base_dir: Path,
    datasource: str,
) -> dict[str, Any]:
    """The description of the run ``run_id`` of ``workflow`` from the program ``source`` (a
    file, relative to ``base_dir`` or absolute: kept absolute; or ``<-e>``) on the
    ``datasource`` of that identity (:meth:`~sqlml.datasources.DatasourceURL.identity`)."""
    if source and not source.startswith("<"):
        source = str((base_dir / source).resolve())
    return {
        "run_id": run_id,
        "workflow": workflow.name,
        "resumed_from": resumed,
        "source": source,
        "base_dir": str(base_dir),
        "datasource": datasource,
        "user": getpass.getuser(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started_at": time.time(),
        "steps": [
            {
                "name": step.name,
                "kind": step.template,
                "after": list(step.after),
                **{key: step.params[key] for key in _STATEMENT_FIELDS if key in step.params},
            }
            for step in [*workflow.steps, *workflow.exit_handlers]
        ],
    }


def write_run_file(run_dir: Path, description: dict[str, Any]) -> None:
    """Write ``description`` to ``run_dir``'s run file (replaced whole, never half written)."""
    partial = run_dir / (RUN_FILE + ".partial")
    partial.write_text(json.dumps(description, indent=1), encoding="utf-8")
    partial.replace(run_dir / RUN_FILE)


def read_run_file(run_dir: Path) -> dict[str, Any] | None:
    """The description in ``run_dir``, or None when it has none (or an unreadable one)."""
    try:
        return json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class StatesFile:
    """The run's ``states.jsonl`` in ``run_dir``, appended to a line at a time (a JSON object
    per line, flushed at once), and touched every :data:`HEARTBEAT` seconds until it is
    closed. One that cannot be written is dropped: the run goes on."""

    def __init__(self, run_dir: Path) -> None:
        self._file: IO[str] | None = None
        self._path = run_dir / STATES_FILE
        self._closed = threading.Event()
        with suppress(OSError):
            self._file = self._path.open("a", encoding="utf-8")
        if self._file is not None:
            threading.Thread(target=self._beat, name="sqlml-heartbeat", daemon=True).start()

    def _beat(self) -> None:
        while not self._closed.wait(HEARTBEAT):
            with suppress(OSError):
                os.utime(self._path)

    def write(self, entry: dict[str, Any]) -> None:
        """Append ``entry``: ``{"step": NAME, "state": ...}`` or ``{"run": STATE, ...}``."""
        if self._file is None:
            return
        try:
            self._file.write(json.dumps(entry) + "\n")
            self._file.flush()
        except OSError:
            self.close()

    def close(self) -> None:
        self._closed.set()
        file, self._file = self._file, None
        if file is not None:
            with suppress(OSError):
                file.close()


@dataclass
class RunStates:
    """What ``states.jsonl`` says: each step's latest entry (state, attempts, started_at,
    ended_at, error) and the run's end state and time (None while it runs)."""

    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    state: str | None = None
    ended_at: float | None = None


def read_states(run_dir: Path) -> RunStates | None:
    """The states in ``run_dir``, or None when it has no states file (a run of an earlier
    sqlml, or one whose folder could not be written). A line being written is left out."""
    try:
        text = (run_dir / STATES_FILE).read_text(encoding="utf-8")
    except OSError:
        return None
    whole = text[: text.rfind("\n") + 1]  # without a line still being written
    try:
        entries = json.loads("[" + ",".join(whole.splitlines()) + "]")  # at once: fast
    except ValueError:  # a damaged line: the others still count
        entries = [_entry(line) for line in whole.splitlines()]
    states = RunStates()
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if "step" in entry:
            states.steps[entry["step"]] = entry
        elif "run" in entry:
            states.state, states.ended_at = entry["run"], entry.get("ended_at")
    return states


def read_run_end(run_dir: Path) -> tuple[str, float | None] | None:
    """The run's end state and time from the last line of its states file (read alone), or
    None while it runs or when it has no states file."""
    try:
        with (run_dir / STATES_FILE).open("rb") as file:
            size = file.seek(0, 2)
            file.seek(max(0, size - _TAIL))
            tail = file.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    entry = _entry(tail.rstrip("\n").rpartition("\n")[2]) if tail.endswith("\n") else None
    if isinstance(entry, dict) and "run" in entry:
        return entry["run"], entry.get("ended_at")
    return None


def last_heard(run_dir: Path) -> float | None:
    """When the run in ``run_dir`` was last heard of: its states file's last write or
    heartbeat (else its run file's), None when it has neither."""
    for name in (STATES_FILE, RUN_FILE):
        with suppress(OSError):
            return (run_dir / name).stat().st_mtime
    return None


def _entry(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None
