"""The summary plot of TO EXPLAIN ... WITH explain.plot: a PNG drawn with matplotlib's Agg.

Attributions of one output (rows x features) are drawn as a beeswarm: a row of dots per
feature, each dot a row of the data placed by its attribution and coloured by the feature's
value (grey for features without a single numeric value, and for NULLs). Attributions per
class (rows x classes x features) are drawn as stacked bars of the mean absolute
attribution of each class. Features are ordered by mean absolute attribution, the largest
on top; only the first :data:`MAX_FEATURES` are drawn.

matplotlib is imported only when a plot is drawn (the ``plot`` extra).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.runtime.features_apply import FeatureArrays

MAX_FEATURES = 20
ROW_HEIGHT = 0.4  # inches per feature
SPREAD = 0.4  # how far dots of one feature spread from its line, in rows
BINS = 50  # attribution bins within which crowded dots are spread apart


def save_summary_plot(
    path: Path,
    attributions: np.ndarray,
    names: list[str],
    values: list[np.ndarray | None],
    classes: list[str] | None,
    xlabel: str,
) -> None:
    """Draw ``attributions`` (rows x features, or rows x classes x features) to ``path``.

    ``values``: each feature's value per row for the colour, or None; ``classes``: the
    names of the classes of a 3-D ``attributions``.
    """
    figure_class, canvas_class = matplotlib_figure("explain.plot")
    per_class = attributions.ndim == 3
    magnitude = np.abs(attributions).mean(axis=0)
    order = np.argsort(-(magnitude.sum(axis=0) if per_class else magnitude), kind="stable")
    shown = order[:MAX_FEATURES][::-1]  # drawn bottom-up: the largest on top
    figure = figure_class(figsize=(8, 1.5 + ROW_HEIGHT * len(shown)), layout="constrained")
    canvas_class(figure)
    axes = figure.add_subplot()
    if per_class:
        _bars(axes, magnitude[:, shown], classes or [])
        axes.set_xlabel(f"mean |{xlabel}|")
    else:
        _beeswarm(figure, axes, attributions[:, shown], [values[j] for j in shown])
        axes.axvline(0, color="0.6", linewidth=0.8, zorder=0)
        axes.set_xlabel(xlabel)
    axes.set_yticks(range(len(shown)), [names[j] for j in shown])
    axes.set_ylim(-0.7, len(shown) - 0.3)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    write_png(figure, path, "explain.plot")


def feature_values(features: FeatureArrays) -> list[np.ndarray | None]:
    """Per feature, its value in each row when it is a single number, else None."""
    categorical = {c.feature for c in features.categoricals}
    values: list[np.ndarray | None] = []
    for j in range(len(features.names)):
        columns = np.flatnonzero(features.owners == j)
        single = len(columns) == 1 and j not in categorical
        values.append(features.numbers[:, columns[0]] if single else None)
    return values


def matplotlib_figure(attribute: str) -> tuple[Any, Any]:
    """matplotlib's Figure and Agg canvas classes, imported now; ``attribute``: the one that
    asked for a plot, named when matplotlib is missing."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ModelError(
            f"{attribute} needs matplotlib, which is not installed",
            hint="pip install 'sqlml[plot]'",
        ) from None
    return Figure, FigureCanvasAgg


def _bars(axes: Any, magnitude: np.ndarray, classes: list[str]) -> None:
    """Stacked horizontal bars: per feature, the mean |attribution| of each class."""
    left = np.zeros(magnitude.shape[1])
    colours = _class_colours(len(magnitude))
    for c, widths in enumerate(magnitude):
        label = classes[c] if c < len(classes) else str(c)
        axes.barh(range(len(widths)), widths, left=left, color=colours[c], label=label)
        left += widths
    axes.legend(title="class", loc="lower right", frameon=False)


def _class_colours(n: int) -> list[Any]:
    from matplotlib import colormaps

    return [colormaps["tab10" if n <= 10 else "tab20"](i % 20) for i in range(n)]


def _beeswarm(
    figure: Any, axes: Any, attributions: np.ndarray, values: list[np.ndarray | None]
) -> None:
    """One line of dots per feature, coloured from blue (low values) to red (high)."""
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable

    colormap = colormaps["coolwarm"]
    coloured = False
    for line, (column, value) in enumerate(zip(attributions.T, values, strict=True)):
        y = line + _jitter(column)
        scaled = None if value is None else _scaled(value)
        if scaled is not None:
            known = ~np.isnan(scaled)
            axes.scatter(column[~known], y[~known], s=8, color="0.7", linewidths=0)
            axes.scatter(column[known], y[known], s=8, c=colormap(scaled[known]), linewidths=0)
            coloured = True
        else:
            axes.scatter(column, y, s=8, color="0.6", linewidths=0)
    if coloured:
        bar = figure.colorbar(ScalarMappable(cmap=colormap), ax=axes, ticks=[0, 1], aspect=40)
        bar.set_ticklabels(["low", "high"])
        bar.set_label("feature value")


def _jitter(column: np.ndarray) -> np.ndarray:
    """Vertical offsets that spread the dots of one feature where they crowd.

    Dots fall into bins of attribution; within a bin they alternate above and below the
    line, further out the more dots the bin holds (so the spread shows the density).
    """
    if len(column) == 0:
        return column
    low, high = float(column.min()), float(column.max())
    bins = np.zeros(len(column), np.int64)
    if high > low:
        bins = np.minimum(((column - low) / (high - low) * BINS).astype(np.int64), BINS - 1)
    order = np.argsort(bins, kind="stable")
    counts = np.bincount(bins, minlength=BINS)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(len(column), np.int64)
    rank[order] = np.arange(len(column)) - starts[bins[order]]
    side = np.where(rank % 2 == 0, 1, -1)
    step = SPREAD / max(int(counts.max()), 1)
    return side * ((rank + 1) // 2) * step * 2


def _scaled(value: np.ndarray) -> np.ndarray | None:
    """Values mapped to [0, 1] between their 5th and 95th percentiles; NaN stays NaN."""
    value = value.astype(np.float64)
    known = value[~np.isnan(value)]
    if len(known) == 0:
        return None
    low, high = np.percentile(known, [5, 95])
    if high <= low:
        low, high = float(known.min()), float(known.max())
    if high <= low:
        return np.where(np.isnan(value), np.nan, 0.5)
    return np.clip((value - low) / (high - low), 0, 1)


def write_png(figure: Any, path: Path, attribute: str) -> None:
    """Save as PNG through a temporary file beside ``path``: a reader never sees half a plot.
    ``attribute``: the one that named the file, for the error's hint."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with temporary.open("xb") as file:
            figure.savefig(file, format="png", dpi=100)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise ModelError(
            f"cannot write the plot {path}: {error.strerror}",
            hint=f"{attribute} must name a file in an existing folder you can write to",
        ) from None
