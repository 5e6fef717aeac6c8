"""The plots TO EVALUATE and TO EXPLAIN drew of a model (``evaluate.plot``, ``explain.plot``),
found through the run record.

The record says which steps succeeded; each run's description (from the default backend's
run views: the statement's text and the folder its paths start from) says what they were. A
step's statement is analysed again, as the run analysed it, for its model and plot file: no
text of a message is relied on. Only PNG files that still exist are shown; a file drawn again
by a later run is shown once.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path

from sqlml.backends import DEFAULT, backend
from sqlml.datasources import Datasource
from sqlml.errors import SqlmlError
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


def recorded_plots(datasource: Datasource, run_dir: Path, model: str) -> list[RecordedPlot]:
    """The plots of ``model`` that exist, the newest first, one per file."""
    if not datasource.table_exists([RUN_STEPS]):
        return []
    p, name = datasource.param, slug(model)
    found = datasource.execute(
        f"SELECT run_id, step, ended_at FROM {datasource.quote([RUN_STEPS])} "
        f"WHERE state = 'succeeded' AND (step LIKE {p} OR step LIKE {p}) "
        f"ORDER BY ended_at DESC LIMIT {MAX_STEPS}",
        [f"%-evaluate-{name}", f"%-explain-{name}"],
    )
    plots, seen = [], set()
    for run_id, step, ended_at in found.rows if found else ():
        plot = step_plot(run_dir, str(run_id), str(step), model, datasource.dialect)
        if plot is not None and plot.path not in seen:
            seen.add(plot.path)
            plots.append(dataclasses.replace(plot, ended_at=ended_at))
    return plots


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
