"""The plots TO EVALUATE and TO EXPLAIN drew of a model version (``evaluate.plot``,
``explain.plot``), and the metrics TO EVALUATE measured of it, found through the run record.

The record says which steps succeeded and, in their outputs, which version of the model each
measured and TO EVALUATE's metrics; each run's description (from the default backend's run
views: the statement's text and the folder its paths start from) says what they were. A
step's statement is analysed again, as the run analysed it, for its model and plot file: no
text of a message is relied on. Only PNG files that still exist are shown; a file drawn again
by a later run is shown once, with the version the later run drew. A step recorded without
its version (by an earlier sqlml) is shown on no version.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlml.backends import DEFAULT, backend
from sqlml.datasources import Datasource
from sqlml.errors import SqlmlError
from sqlml.runtime.outcome import model_of
from sqlml.semantics.lowering import slug
from sqlml.tables import RUN_STEPS

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_STEPS = 50  # the newest evaluate and explain steps of a model that are looked at
_ATTRIBUTES = {"evaluate": "evaluate.plot", "explain": "explain.plot"}


@dataclass(frozen=True)
class RecordedPlot:
    """A plot a step of a recorded run drew of a model."""

    run_id: str
    step: str
    kind: str  # evaluate or explain
    path: Path
    ended_at: float | None
    statement: str


@dataclass(frozen=True)
class Evaluation:
    """The metrics a TO EVALUATE step of a recorded run measured of a model version."""

    run_id: str
    step: str
    metrics: dict[str, float]


@dataclass(frozen=True)
class Measured:
    """What the recorded runs drew and measured of one version of a model."""

    plots: list[RecordedPlot]
    evaluations: list[Evaluation]


def recorded(
    datasource: Datasource, run_dir: Path, model: str, version: int, trained_at: str
) -> Measured:
    """The plots of ``version`` of ``model`` (stored at ``trained_at``, its metadata's) that
    exist, the newest first, one per file, and the TO EVALUATE metrics measured of it, the
    newest first. A step that ended before the version was stored measured another model of
    the name (one dropped, whose version numbers the new one counts again)."""
    plots, evaluations, seen = [], [], set()
    stored = _seconds(trained_at)
    for run_id, step, ended_at, outputs in _steps(datasource, model):
        measured = model_of(outputs)
        if measured is None or measured["name"] != model:
            continue
        if measured["version"] == version and _before(ended_at, stored):
            measured = {**measured, "version": None}  # of a dropped model of the name
        plot = step_plot(run_dir, run_id, step, model, datasource.dialect)
        if plot is not None and plot.path not in seen:
            seen.add(plot.path)
            if measured["version"] == version:
                plots.append(dataclasses.replace(plot, ended_at=ended_at))
        metrics = _metrics(outputs.get("metrics"))
        if measured["version"] == version and metrics is not None:
            evaluations.append(Evaluation(run_id, step, metrics))
    return Measured(plots, evaluations)


def _seconds(timestamp: str) -> float | None:
    """An ISO date and time (a version's ``trained_at``, to the second) in seconds since the
    epoch; None if it is not one."""
    try:
        return datetime.datetime.fromisoformat(timestamp).timestamp()
    except (TypeError, ValueError):
        return None


def _before(ended_at: Any, stored: float | None) -> bool:
    """Whether a step that ended at ``ended_at`` ended before the second ``stored`` began."""
    return isinstance(ended_at, int | float) and stored is not None and ended_at < stored


def _steps(datasource: Datasource, model: str) -> list[tuple[str, str, Any, dict[str, Any]]]:
    """The newest succeeded TO EVALUATE and TO EXPLAIN steps of ``model``: run, step, end
    and outputs."""
    if not datasource.table_exists([RUN_STEPS]):
        return []
    p, name = datasource.param, slug(model)
    found = datasource.execute(
        f"SELECT run_id, step, ended_at, outputs FROM {datasource.quote([RUN_STEPS])} "
        f"WHERE state = 'succeeded' AND (step LIKE {p} OR step LIKE {p}) "
        f"ORDER BY ended_at DESC LIMIT {MAX_STEPS}",
        [f"%-evaluate-{name}", f"%-explain-{name}"],
    )
    return [
        (str(run_id), str(step), ended_at, _json_object(outputs))
        for run_id, step, ended_at, outputs in (found.rows if found else ())
    ]


def _json_object(text: Any) -> dict[str, Any]:
    try:
        found = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _metrics(text: Any) -> dict[str, float] | None:
    """TO EVALUATE's metrics as its step's outputs keep them (JSON), or None."""
    found = _json_object(text)
    numbers = {k: v for k, v in found.items() if isinstance(v, int | float)}
    return numbers if found and len(numbers) == len(found) else None


def step_plot(
    run_dir: Path, run_id: str, step: str, model: str, dialect: str
) -> RecordedPlot | None:
    """The plot the step ``step`` of the run ``run_id`` drew of ``model``, if it did and the
    file is still a PNG."""
    if "/" in run_id or "\\" in run_id or run_id in ("", ".", ".."):
        return None
    views = backend(DEFAULT).run_views()
    run = views.described(run_dir, run_id) if views is not None else None
    described = run.step(step) if run is not None else None
    if run is None or described is None or described.kind not in _ATTRIBUTES:
        return None
    kind, text = described.kind, described.text or ""
    drawn = _plot_of(text, dialect, kind, model)
    if drawn is None:
        return None
    path = Path(drawn).expanduser()
    path = path if path.is_absolute() else Path(run.base_dir or ".") / path
    if not is_png(path):
        return None
    return RecordedPlot(run_id, step, kind, path, None, text)


@functools.lru_cache(maxsize=1024)
def _plot_of(text: str, dialect: str, kind: str, model: str) -> str | None:
    """The plot file the statement ``text`` draws of ``model``, as written (or defaulted)."""
    from sqlml.grammar import parse
    from sqlml.semantics import analyze

    try:
        statements = analyze(parse(text), dialect)
    except SqlmlError:
        return None
    for statement in statements:
        if getattr(statement, "model", None) == model:
            plot = getattr(statement, "attributes", {}).get(_ATTRIBUTES[kind])
            if isinstance(plot, str) and plot:
                return plot
    return None


def is_png(path: Path) -> bool:
    """Whether the file ``path`` starts as a PNG image does."""
    try:
        with path.open("rb") as file:
            return file.read(len(PNG_MAGIC)) == PNG_MAGIC
    except OSError:
        return False


def png(path: Path) -> bytes | None:
    """The PNG image in the file ``path``; None if there is none."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if data.startswith(PNG_MAGIC) else None
