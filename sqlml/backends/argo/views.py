"""Argo runs in sqlml ui: the runs ``sqlml run --backend argo`` submitted (their records in
the run folder, :mod:`sqlml.backends.argo.submission`), shown as local runs are. Their state,
their steps' states and errors are their Workflow's, their logs their pods', read through the
Argo backend; Stop asks Argo to stop, as ``sqlml stop`` does.

A run's page (``templates/argo_run.html``) and its live state answer at the same addresses
as a local run's (``/runs/RUN/...``), in the JSON shapes ``static/runs.js`` reads. A
Workflow read is kept a moment (the list's for :data:`LIST_SECONDS`, a page's for
:data:`PAGE_SECONDS`; an ended one for good), and a cluster that cannot be reached is named
in a note instead of failing the page (the list asks it again after :data:`DOWN_SECONDS`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from sqlml.backends.runs import (
    CANCELLED,
    ENDED,
    FAILED,
    PENDING,
    RUN_ID,
    RUNNING,
    RunView,
    RunViews,
    StepView,
    ViewError,
    Where,
    clock,
)
from sqlml.datasources.redaction import scrubber
from sqlml.errors import SqlmlError

LIST_SECONDS = 5.0  # how long the list keeps a running Workflow's read
PAGE_SECONDS = 1.0  # how long a run's page keeps it (the page polls every second)
DOWN_SECONDS = 30.0  # how long the list does not ask again a cluster it could not read
UNKNOWN = "unknown"  # the state of a run whose cluster cannot be read now
RUN_STATES = {"Pending": RUNNING, "Running": RUNNING, "Succeeded": "succeeded"}
STEP_STATES = {"Pending": PENDING, "Running": RUNNING, "Succeeded": "succeeded"}
STEP_STATES |= {"Skipped": "skipped", "Omitted": "omitted", "Failed": FAILED, "Error": FAILED}
STOPPED = "Stopped with strategy"  # Argo's message of a Workflow that was stopped
SHUTDOWN = "shutdown with strategy"  # and of a step the stop ended


@dataclass
class ArgoRunView(RunView):
    """An Argo run: a :class:`RunView` with where it runs, and a note when its cluster
    cannot be read now. Stopped from any machine that reaches the cluster; not resumed."""

    backend: ClassVar[str] = "argo"
    namespace: str = ""
    server: str = ""
    context: str | None = None
    note: str | None = None

    @property
    def resumable(self) -> bool:
        return False

    @property
    def stoppable(self) -> bool:
        return self.state == RUNNING

    @property
    def badge(self) -> tuple[str, str] | None:
        return "Argo", f"on Argo Workflows, namespace {self.namespace}"


class GoneError(SqlmlError):
    """The run's Workflow is no longer in its namespace."""


class ArgoRunViews(RunViews):
    """The Argo runs recorded in the page's run folder, read from their clusters."""

    page: ClassVar[str] = "argo_run.html"
    templates: ClassVar[Path | None] = Path(__file__).parent / "templates"

    def runs(self, where: Where) -> tuple[list[RunView], str | None]:
        """The Argo runs of the page's datasource (and those whose datasource is the
        cluster's Secret's, which may be it), with their states; and a note naming the
        clusters that cannot be read now."""
        try:
            key = _datasource_key(where.datasource)
        except SqlmlError:
            key = None
        scrub = scrubber(where.datasource)
        now = time.monotonic()
        with _lock:  # clusters found unreachable a moment ago are not asked again yet
            down = {
                cluster: note for cluster, (at, note) in _down.items() if now - at < DOWN_SECONDS
            }
        notes: dict[str, None] = {}
        runs: list[RunView] = []
        for record in _records(where.run_dir):
            if record.get("datasource") not in (None, key):
                continue
            workflow, note = None, down.get(_where(record))
            if note is None:
                try:
                    workflow = _workflow(record, LIST_SECONDS)
                except SqlmlError as error:
                    note = scrub(_said(error))
                    if not isinstance(error, GoneError):  # the cluster's trouble, not the run's
                        down[_where(record)] = note
                        with _lock:
                            _down[_where(record)] = (now, note)
            if note is not None:
                notes[note] = None
            runs.append(_view(record, workflow, note, scrub, steps=False))
        said = "; ".join(notes)
        return runs, f"the states of some Argo runs cannot be read now: {said}" if said else None

    def owns(self, where: Where, run_id: str) -> bool:
        return _record(where.run_dir, run_id) is not None

    def run(self, where: Where, run_id: str) -> RunView | None:
        record = _record(where.run_dir, run_id)
        return None if record is None else _read(where, record)

    def state(self, run: RunView) -> dict[str, Any]:
        """As for a local run; 503 with the reason when its cluster cannot be read (the page
        says live updates paused)."""
        assert isinstance(run, ArgoRunView)
        if run.note is not None:
            raise ViewError(503, run.note)
        return super().state(run)

    def step_details(self, where: Where, run: RunView, step: StepView) -> dict[str, Any]:
        """Its details, and its failed attempts as the Workflow's nodes say."""
        from sqlml.backends.argo import submit

        record = _record(where.run_dir, run.run_id)
        scrub = scrubber(where.datasource)
        try:
            nodes = submit.nodes(_workflow(record, PAGE_SECONDS)) if record else []
        except SqlmlError:  # the step as described; its attempts when the cluster answers again
            nodes = []
        failed = [
            {"at": clock(_seconds(node.started)), "attempt": number, "error": scrub(node.message)}
            for number, node in enumerate((n for n in nodes if n.task == step.name), start=1)
            if STEP_STATES.get(node.phase) == FAILED
        ]
        return {**step.details(), "failed_attempts": failed}

    def log(self, where: Where, run_id: str, step: str) -> str:
        """The logs of the step's pods (each attempt's), and of its training job's replicas
        or its Experiment's trials."""
        from sqlml.backends.argo import submit

        record = _record(where.run_dir, run_id)
        scrub = scrubber(where.datasource)
        if record is None or not any(s["name"] == step for s in record.get("steps") or []):
            raise ViewError(404, "there is no such step in this run")
        try:
            workflow = _workflow(record, PAGE_SECONDS)
            kube = _kube(record)
            attempts = [n for n in submit.nodes(workflow) if n.task == step]
            parts = [
                (node.label, _pod_log(kube, node.pod, submit.CONTAINER))
                for node in attempts
                if node.pod and node.phase in submit.STARTED
            ]
            creates = {name for name, _ in submit.created_by(workflow)[0]}
            if step in creates and any(n.phase in submit.STARTED for n in attempts):
                for source in submit.sources(kube, submit.owned(kube, workflow, step)):
                    text = (
                        _pod_log(kube, source.pod, source.container) if source.scheduled else None
                    )
                    parts.append(
                        (source.label, text or f"(its pod {source.pod} waits for a node)\n")
                    )
        except SqlmlError as error:
            raise ViewError(503, scrub(_said(error))) from None
        if not parts:
            raise ViewError(404, f"step {step} has no log (it did not start in this run)")
        if len(parts) == 1:
            return scrub(parts[0][1])
        return scrub("".join(f"--- {label}\n{text}" for label, text in parts))

    def resume(self, where: Where, run_id: str) -> str:
        record = _record(where.run_dir, run_id) or {"name": run_id}
        raise ViewError(
            409,
            f"run {record['name']} ran on Argo: sqlml ui resumes local runs only",
            hint="run the program again: sqlml run FILE.sql --backend argo",
        )

    def stop(self, where: Where, run_id: str) -> str:
        """Ask Argo to stop the run (and delete the training jobs it created), as ``sqlml
        stop`` does."""
        from sqlml.backends.argo import submit

        record = _record(where.run_dir, run_id)
        if record is None:
            raise ViewError(404, f"there is no run {run_id}")
        run = _read(where, record)
        if run.note is not None:
            raise ViewError(503, run.note)
        if not run.stoppable:
            raise ViewError(409, f"run {run.run_id} has ended: {run.state}")
        try:
            submit.stop(_kube(record), record["name"])
        except SqlmlError as error:
            raise ViewError(503, scrubber(where.datasource)(_said(error))) from None
        _forget(record)
        return run.run_id


VIEWS = ArgoRunViews()


# -- records and Workflows


def _records(run_dir: Path) -> Iterator[dict[str, Any]]:
    """The Argo runs' records in ``run_dir``."""
    from sqlml.backends.argo.submission import ARGO_FILE

    with suppress(OSError):
        for entry in run_dir.iterdir():
            with suppress(OSError):
                if RUN_ID.match(entry.name) and (entry / ARGO_FILE).is_file():
                    record = _record(run_dir, entry.name)
                    if record is not None:
                        yield record


def _record(run_dir: Path, run_id: str) -> dict[str, Any] | None:
    """The record of the Argo run ``run_id``, or None when there is none."""
    from sqlml.backends.argo.submission import ARGO_FILE

    if not RUN_ID.match(run_id):
        return None
    folder = run_dir / run_id
    try:
        return _record_of(folder, (folder / ARGO_FILE).stat().st_mtime_ns)
    except OSError:
        return None


@lru_cache(maxsize=4096)
def _record_of(folder: Path, mtime_ns: int) -> dict[str, Any] | None:
    from sqlml.backends.argo.submission import read

    return read(folder)


def _datasource_key(url: str | None) -> str:
    from sqlml.backends.argo.submission import datasource_key

    return datasource_key(url)


def _where(record: dict[str, Any]) -> tuple[Any, ...]:
    return (record.get("kubeconfig"), record.get("context"), record.get("namespace"))


def _kube(record: dict[str, Any]) -> Any:
    from sqlml.backends.argo.kube import Cluster, Kube

    return Kube(Cluster(*_where(record)))


_read_at: dict[tuple[Any, ...], tuple[float, dict[str, Any]]] = {}  # run -> (when, Workflow)
_down: dict[tuple[Any, ...], tuple[float, str]] = {}  # cluster -> (when, why), for the list
_lock = threading.Lock()


def _workflow(record: dict[str, Any], max_age: float) -> dict[str, Any]:
    """The run's Workflow, as read at most ``max_age`` seconds ago (an ended one: ever)."""
    from sqlml.backends.argo import submit
    from sqlml.backends.argo.kube import ApiError

    key = (*_where(record), record["name"])
    with _lock:
        kept = _read_at.get(key)
    if kept is not None:
        phase = (kept[1].get("status") or {}).get("phase")
        if phase in submit.DONE or time.monotonic() - kept[0] < max_age:
            return kept[1]
    try:
        workflow = submit.get(_kube(record), record["name"])
    except ApiError as error:
        if error.missing != "object":
            raise
        raise GoneError(
            f"the Workflow of run {record['name']} is no longer in namespace "
            f"{record.get('namespace')!r} (deleted, as Argo deletes ended runs after their TTL)"
        ) from None
    with _lock:
        _read_at[key] = (time.monotonic(), workflow)
    return workflow


def _forget(record: dict[str, Any]) -> None:
    with _lock:
        _read_at.pop((*_where(record), record["name"]), None)


def _pod_log(kube: Any, pod: str, container: str) -> str:
    """The log of ``container`` of ``pod`` as it is now, or why there is none."""
    from sqlml.backends.argo import submit
    from sqlml.backends.argo.kube import ApiError

    try:
        return "".join(f"{line}\n" for line in submit.pod_log(kube, pod, False, container))
    except ApiError as error:
        if error.missing == "object":
            return f"(no log: its pod {pod} was deleted)\n"
        if error.status == 400 and "is waiting to start" in error.detail:
            return f"(no log yet: {error.detail})\n"
        raise


def _said(error: SqlmlError) -> str:
    return f"{error.message} (hint: {error.hint})" if error.hint else error.message


# -- views


def _read(where: Where, record: dict[str, Any]) -> ArgoRunView:
    """The run with its steps, from its Workflow read now (or a moment ago)."""
    scrub = scrubber(where.datasource)
    try:
        workflow, note = _workflow(record, PAGE_SECONDS), None
    except SqlmlError as error:
        workflow, note = None, scrub(_said(error))
    return _view(record, workflow, note, scrub, steps=True)


def _view(
    record: dict[str, Any],
    workflow: dict[str, Any] | None,
    note: str | None,
    scrub: Callable[[str], str],
    *,
    steps: bool,
) -> ArgoRunView:
    """The run ``record`` describes, as ``workflow`` (None: not read) says it goes."""
    from sqlml.backends.argo import submit

    status = (workflow or {}).get("status") or {}
    phase, message = status.get("phase") or "Pending", status.get("message") or ""
    if workflow is None:
        state = UNKNOWN
    elif phase in ("Failed", "Error"):
        state = CANCELLED if message.startswith(STOPPED) else FAILED
    else:
        state = RUN_STATES.get(phase, RUNNING)
    run = ArgoRunView(
        record["name"],
        workflow=record.get("workflow") or "",
        source=record.get("source"),
        user=record.get("user") or "",
        host=record.get("host") or "",
        started_at=_seconds(status.get("startedAt")) or record.get("submitted_at"),
        ended_at=_seconds(status.get("finishedAt")) if state in ENDED else None,
        state=state,
        namespace=record.get("namespace") or "",
        server=record.get("server") or "",
        context=record.get("context"),
        note=note,
    )
    if not steps:
        return run
    attempts: dict[str, list[Any]] = {}
    for node in submit.nodes(workflow) if workflow is not None else []:
        attempts.setdefault(node.task, []).append(node)
    described = list(record.get("steps") or [])
    known = {step["name"] for step in described}
    described += [{"name": task} for task in attempts if task not in known]
    run.steps = [
        _step(about, attempts.get(about["name"], []), run.state, scrub) for about in described
    ]
    return run


def _step(
    about: dict[str, Any], attempts: list[Any], run_state: str, scrub: Callable[[str], str]
) -> StepView:
    """A step as its record describes it and as its attempts' nodes say it went."""
    last = attempts[-1] if attempts else None
    state = STEP_STATES.get(last.phase, RUNNING) if last is not None else PENDING
    if any(STEP_STATES.get(node.phase) in (PENDING, RUNNING) for node in attempts):
        state = RUNNING
    if last is not None and state == FAILED and SHUTDOWN in last.message:
        state = CANCELLED
    if state == RUNNING and run_state in ENDED:
        state = CANCELLED
    return StepView(
        about["name"],
        kind=about.get("kind", ""),
        after=list(about.get("after", [])),
        text=about.get("text"),
        line=about.get("line"),
        column=about.get("column"),
        state=state,
        attempts=len(attempts),
        started_at=_seconds(attempts[0].started) if attempts else None,
        ended_at=_seconds(last.finished) if last is not None else None,
        error=scrub(last.message) if last is not None and state in (FAILED, CANCELLED) else None,
    )


def _seconds(stamp: str | None) -> float | None:
    """An RFC 3339 time of the API server (``2026-01-01T00:00:00Z``) as epoch seconds."""
    if not stamp:
        return None
    with suppress(ValueError):
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return None
