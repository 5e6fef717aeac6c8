"""The local backend's runs in ``sqlml ui``: each run's folder (``run.json``,
``states.jsonl``, step logs) first, the run record in the datasource for what the folder
lacks; a failed run resumed and a running one stopped from the page (:mod:`.launch`).

The folder is read while the run goes on: an embedded database file that a run holds open
cannot be read by another process, and opening it in between could keep a starting run out.
So the datasource is read only for the list of runs and for runs whose folder has no states.
The run folder is shared by every datasource's runs: a run whose ``run.json`` names another
datasource is neither listed nor shown.
"""

from __future__ import annotations

import glob
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from sqlml.backends.local import launch
from sqlml.backends.local.launch import OUTPUT_FILE, sqlml_process
from sqlml.backends.local.progress_file import SUFFIX, read_progress
from sqlml.backends.local.record import recorded_steps
from sqlml.backends.local.run_file import (
    RUN_FILE,
    RunStates,
    last_heard,
    read_run_end,
    read_run_file,
    read_states,
)
from sqlml.backends.runs import (
    CANCELLED,
    ENDED,
    FAILED,
    LOST,
    PENDING,
    RUN_ID,
    RUNNING,
    RunView,
    RunViews,
    StepView,
    ViewError,
    Where,
)
from sqlml.datasources import Datasource, connect, parse_url, source_class
from sqlml.errors import SqlmlError
from sqlml.runtime.bounds import LOG_TAIL
from sqlml.runtime.outcome import model_of
from sqlml.tables import RUN_STEPS, RUNS

RESUMABLE = frozenset({FAILED, CANCELLED, LOST})
_LOG_NAME = re.compile(r"[^\w.\-\[\]]")  # characters the executor keeps out of log file names
OUTPUT_TAIL = 64 * 1024  # bytes of a run's output its page shows
_FAILED_ATTEMPT = re.compile(r"^(\d\d:\d\d:\d\d) attempt (\d+) failed: (.*)$", re.MULTILINE)
_RUN_COLUMNS = "run_id, workflow, resumed_from, state, started_at, ended_at"


@dataclass
class LocalRunView(RunView):
    """A local run: resumed from the page when it failed, was cancelled or lost; stopped
    when it runs on this host."""

    backend: ClassVar[str] = "local"

    @property
    def resumable(self) -> bool:
        return self.state in RESUMABLE

    @property
    def stoppable(self) -> bool:
        return self.state == RUNNING and self.host == socket.gethostname()


class LocalRunViews(RunViews):
    """The local runs of the page's datasource and run folder."""

    def runs(self, where: Where) -> tuple[list[RunView], str | None]:
        """The datasource's runs (those of the run folder when its record cannot be read),
        and a note when the record cannot be read."""
        note = None
        try:
            recorded = _recorded_runs(where)
        except SqlmlError as error:
            recorded = None
            note = (
                f"the run record cannot be read now ({error.message}): "
                f"these are the runs in {where.run_dir}"
            )
        ids = list(recorded) if recorded is not None else _own_folders(where)
        runs: list[RunView] = [
            _run(where.run_dir / run_id, run_id, (recorded or {}).get(run_id), steps=False)
            for run_id in ids
        ]
        return runs, note

    def run(self, where: Where, run_id: str) -> RunView | None:
        return read_run(where, run_id)

    def described(self, run_dir: Path, run_id: str) -> RunView | None:
        description = read_run_file(run_dir / run_id)
        if description is None:
            return None
        steps = [
            StepView(step["name"], kind=step.get("kind", ""), text=step.get("text"))
            for step in description.get("steps", [])
            if "name" in step
        ]
        return LocalRunView(run_id, base_dir=description.get("base_dir", "."), steps=steps)

    def page_context(self, where: Where, run: RunView) -> dict[str, Any]:
        return {
            "chain": resumed_chain(where, run),
            "resumed_by": resumed_by(where, run.run_id),
            "output": run_output(where, run.run_id),
        }

    def step_details(self, where: Where, run: RunView, step: StepView) -> dict[str, Any]:
        log = step_log(where, run.run_id, step.name) or ""
        progress = step_progress(where, run.run_id, step.name) if step.state == RUNNING else []
        return {**step.details(), "failed_attempts": failed_attempts(log), "progress": progress}

    def log(self, where: Where, run_id: str, step: str) -> str:
        run = read_run(where, run_id)
        if run is None or run.step(step) is None:
            raise ViewError(404, "there is no such step in this run")
        text = step_log(where, run_id, step)
        if text is None:
            raise ViewError(404, f"step {step} has no log (it did not start in this run)")
        return text

    def resume(self, where: Where, run_id: str) -> str:
        run = self._known(where, run_id)
        try:
            return launch.resume(where, run)
        except launch.LaunchError as error:
            raise ViewError(409, error.message, hint=error.hint) from None

    def stop(self, where: Where, run_id: str) -> str:
        run = self._known(where, run_id)
        try:
            launch.stop(run)
        except launch.LaunchError as error:
            raise ViewError(409, error.message, hint=error.hint) from None
        return run.run_id

    @staticmethod
    def _known(where: Where, run_id: str) -> RunView:
        run = read_run(where, run_id)
        if run is None:
            raise ViewError(404, f"there is no run {run_id}")
        return run


VIEWS = LocalRunViews()


def read_run(settings: Where, run_id: str) -> RunView | None:
    """The run ``run_id`` with its steps, or None when neither its folder nor the run
    record knows it."""
    if not RUN_ID.match(run_id):
        return None
    folder = settings.run_dir / run_id
    if (folder / RUN_FILE).is_file():  # a recorded run's (a shell's runs keep only logs)
        if _summary(folder).get("datasource", _identity(settings)) != _identity(settings):
            return None  # another datasource's run
        return _run(folder, run_id, None, steps=True, settings=settings)
    try:
        with _record(settings) as ds:
            row = _run_row(ds, run_id) if ds is not None else None
    except SqlmlError:
        return None
    return _run(folder, run_id, row, steps=True, settings=settings) if row else None


def run_output(settings: Where, run_id: str) -> str | None:
    """What a run started from the page printed (its results, its errors with their
    hints): the end of it, or None for a run started elsewhere."""
    try:
        with (settings.run_dir / run_id / OUTPUT_FILE).open("rb") as file:
            size = file.seek(0, 2)
            file.seek(max(0, size - OUTPUT_TAIL))
            text = file.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    return text if size <= OUTPUT_TAIL else "…" + text


def resumed_chain(settings: Where, run: RunView) -> list[str]:
    """The runs ``run`` resumed, the nearest first (each one's folder says which it resumed)."""
    chain: list[str] = []
    previous = run.resumed_from
    while previous and previous not in chain and RUN_ID.match(previous):
        chain.append(previous)
        description = read_run_file(settings.run_dir / previous) or {}
        previous = description.get("resumed_from")
    return chain


def failed_attempts(log: str) -> list[dict[str, Any]]:
    """The attempts a step's log says failed: when, which, and the first line of why."""
    return [
        {"at": at, "attempt": int(attempt), "error": error}
        for at, attempt, error in _FAILED_ATTEMPT.findall(log)
    ]


def resumed_by(settings: Where, run_id: str) -> list[str]:
    """The runs in the run folder that resumed ``run_id``, oldest first."""
    return sorted(
        other
        for other, folder in _run_folders(settings.run_dir).items()
        if _summary(folder).get("resumed_from") == run_id
    )


def step_progress(settings: Where, run_id: str, step: str) -> list[str]:
    """The states of the stages ``step`` of ``run_id`` has open (a mapped step's instances'
    one after another): ``training (m): 40/100 rounds  train_mlogloss 0.2315``."""
    folder, name = settings.run_dir / run_id, _LOG_NAME.sub("_", step)
    paths = [folder / f"{name}{SUFFIX}", *sorted(folder.glob(f"{glob.escape(name)}[[]*]{SUFFIX}"))]
    return [line for path in paths for line in read_progress(path)]


def step_log(settings: Where, run_id: str, step: str) -> str | None:
    """The log of ``step`` of ``run_id`` (a mapped step's instances one after another), or
    None when it has none."""
    folder = settings.run_dir / run_id
    name = _LOG_NAME.sub("_", step)
    paths = [folder / f"{name}.log"]
    index = 0
    while (folder / f"{name}[{index}].log").exists():
        paths.append(folder / f"{name}[{index}].log")
        index += 1
    parts = []
    for path in paths:
        try:
            text = _log_tail(path)
        except OSError:
            continue
        parts.append(text if path == paths[0] else f"--- {path.stem}\n{text}")
    return "".join(parts) if parts else None


def _log_tail(path: Path) -> str:
    """A step log's last ``LOG_TAIL`` bytes, after a note of what is left out."""
    with path.open("rb") as file:
        size = file.seek(0, 2)
        file.seek(max(0, size - LOG_TAIL))
        text = file.read().decode("utf-8", errors="replace")
    if size <= LOG_TAIL:
        return text
    return f"… [{size - LOG_TAIL} bytes before these, in {path}]\n{text}"


def _run(
    folder: Path,
    run_id: str,
    row: dict[str, Any] | None,
    *,
    steps: bool,
    settings: Where | None = None,
) -> RunView:
    """The run in ``folder`` (its record's ``row`` if read); with its ``steps`` if asked,
    from the folder's states or else from the run record of ``settings``."""
    description = _description(folder) if steps else _summary(folder)
    states = read_states(folder) if steps else _ended(folder)
    run = LocalRunView(
        run_id,
        workflow=description.get("workflow") or (row or {}).get("workflow") or "",
        source=description.get("source"),
        base_dir=description.get("base_dir"),
        user=description.get("user", ""),
        host=description.get("host", ""),
        pid=description.get("pid"),
        started_at=description.get("started_at") or (row or {}).get("started_at"),
        resumed_from=description.get("resumed_from") or (row or {}).get("resumed_from"),
    )
    recorded_steps: dict[str, dict[str, Any]] = {}
    if states is None and settings is not None and steps:
        try:
            with _record(settings) as ds:
                if ds is not None:
                    row = row or _run_row(ds, run_id)
                    recorded_steps = _step_rows(ds, run_id)
        except SqlmlError:
            pass
    run.state, run.ended_at = _run_state(folder, run, states, row)
    if steps:
        run.steps = _steps(description.get("steps") or [], states, recorded_steps, run.state)
    return run


def _description(folder: Path) -> dict[str, Any]:
    """``folder``'s run description (kept: a run file never changes once written)."""
    with suppress(OSError):
        return _description_of(folder, (folder / RUN_FILE).stat().st_mtime_ns)
    return {}


@lru_cache(maxsize=32)
def _description_of(folder: Path, mtime_ns: int) -> dict[str, Any]:
    return read_run_file(folder) or {}


def _summary(folder: Path) -> dict[str, Any]:
    """``folder``'s run description without its steps, for lists of runs."""
    with suppress(OSError):
        return _summary_of(folder, (folder / RUN_FILE).stat().st_mtime_ns)
    return {}


@lru_cache(maxsize=4096)
def _summary_of(folder: Path, mtime_ns: int) -> dict[str, Any]:
    description = dict(read_run_file(folder) or {})
    description.pop("steps", None)
    return description


def _ended(folder: Path) -> RunStates | None:
    """The run's end from its states file's last line (a list of runs needs no more)."""
    end = read_run_end(folder)
    return RunStates(state=end[0], ended_at=end[1]) if end else None


def _run_state(
    folder: Path, run: RunView, states: RunStates | None, row: dict[str, Any] | None
) -> tuple[str, float | None]:
    """The run's state and end: the states file's, else the record's; a running one whose
    process on this host is gone is lost, and ended when it was last heard of (its
    heartbeat: :func:`~sqlml.backends.local.run_file.last_heard`)."""
    if states is not None and states.state:
        return states.state, states.ended_at
    if row is not None and row.get("state") != RUNNING:
        return row["state"], row.get("ended_at")
    if (
        run.pid is not None
        and run.host == socket.gethostname()
        and not sqlml_process(run.pid, run.started_at or time.time())
    ):
        return LOST, last_heard(folder)
    return RUNNING, None


def _steps(
    described: list[dict[str, Any]],
    states: RunStates | None,
    recorded: dict[str, dict[str, Any]],
    run_state: str,
) -> list[StepView]:
    """Each step as described and as it went; steps not described come from the states."""
    known = states.steps if states is not None else recorded
    names = [step["name"] for step in described]
    undescribed = set(known).difference(names)
    names += sorted(undescribed, key=lambda name: known[name].get("started_at") or 0)
    description = {step["name"]: step for step in described}
    views = []
    for name in names:
        about, went = description.get(name, {}), known.get(name, {})
        state = went.get("state", PENDING)
        if state == RUNNING and run_state in ENDED:  # stopped with its run, or lost with it
            state = LOST if run_state == LOST else CANCELLED
        views.append(
            StepView(
                name,
                kind=about.get("kind", ""),
                after=list(about.get("after", [])),
                text=about.get("text"),
                line=about.get("line"),
                column=about.get("column"),
                state=state,
                attempts=went.get("attempts") or 0,
                started_at=went.get("started_at"),
                ended_at=went.get("ended_at"),
                error=went.get("error"),
                model=_model(went),
            )
        )
    return views


def _model(went: dict[str, Any]) -> dict[str, Any] | None:
    """The model version a step trained or measured: its states entry's, else its record's
    outputs'."""
    model = went.get("model")
    if isinstance(model, dict):
        return model_of({"model": model.get("name"), "version": str(model.get("version"))})
    outputs = went.get("outputs")
    return model_of(outputs) if isinstance(outputs, dict) else None


def _run_folders(run_dir: Path) -> dict[str, Path]:
    """The run folders in ``run_dir`` that describe a recorded run."""
    try:
        entries = list(run_dir.iterdir())
    except OSError:
        return {}
    return {
        entry.name: entry
        for entry in entries
        if RUN_ID.match(entry.name) and (entry / "run.json").is_file()
    }


def _own_folders(settings: Where) -> list[str]:
    """The runs in the run folder that ran on the page's datasource (their ``run.json``
    says so: a run folder is shared by every datasource's runs)."""
    identity = _identity(settings)
    return [
        run_id
        for run_id, folder in _run_folders(settings.run_dir).items()
        if _summary(folder).get("datasource") == identity
    ]


def _identity(settings: Where) -> str:
    """The page's datasource as run folders name it."""
    return parse_url(settings.datasource).identity()


@contextmanager
def _record(settings: Where) -> Iterator[Datasource | None]:
    """The page's datasource for one read (None: an embedded database file not made yet,
    which has no record and is not created by reading it)."""
    url = parse_url(settings.datasource)
    if source_class(url).file_based and url.path != ":memory:" and not Path(url.path).exists():
        yield None
        return
    ds = connect(settings.datasource, settings.base_dir)
    try:
        yield ds
    finally:
        ds.close()


def _recorded_runs(settings: Where) -> dict[str, dict[str, Any]]:
    """The run record's runs by id (none when it has no record tables)."""
    with _record(settings) as ds:
        if ds is None or not ds.table_exists([RUNS]):
            return {}
        found = ds.execute(f"SELECT {_RUN_COLUMNS} FROM {ds.quote([RUNS])}")
        return {row[0]: _row(found.columns, row) for row in (found.rows if found else [])}


def _run_row(ds: Datasource, run_id: str) -> dict[str, Any] | None:
    if not ds.table_exists([RUNS]):
        return None
    found = ds.execute(
        f"SELECT {_RUN_COLUMNS} FROM {ds.quote([RUNS])} WHERE run_id = {ds.param}",
        [run_id],
    )
    return _row(found.columns, found.rows[0]) if found and found.rows else None


def _step_rows(ds: Datasource, run_id: str) -> dict[str, dict[str, Any]]:
    if not ds.table_exists([RUN_STEPS]):
        return {}
    return {name: asdict(step) for name, step in recorded_steps(ds, run_id).items()}


def _row(columns: list[str], row: tuple[Any, ...] | list[Any]) -> dict[str, Any]:
    return {column.lower(): value for column, value in zip(columns, row, strict=True)}
