"""The summary plot of TO EXPLAIN (explain.plot, summary.*): a PNG drawn with matplotlib's Agg.

By default, attributions of one output (rows x features) are drawn as a beeswarm (``dot``):
a row of dots per feature, each dot a row of the data placed by its attribution and
coloured by the feature's value (grey for features without a single numeric value, and for
NULLs). Attributions per class (rows x classes x features) are drawn as stacked bars of the
mean absolute attribution of each class. ``summary.plot_type`` chooses ``bar`` (mean
absolute attribution), ``violin`` (their density) or ``decision`` (one line per row, its
attributions added up feature by feature); ``summary.sort``, ``alpha``, ``max_display``,
``title``, ``color_bar`` and ``use_log_scale`` act as in SHAP's summary_plot. Features are
ordered by mean absolute attribution, the largest on top; the first ``max_display``
(:data:`MAX_FEATURES` by default) are drawn.

matplotlib is imported only when a plot is drawn (the ``plot`` extra).
"""

from __future__ import annotations

import inspect
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sqlml import imports
from sqlml.errors import ModelError
from sqlml.runtime.features_apply import FeatureArrays

MAX_FEATURES = 20
ROW_HEIGHT = 0.4  # inches per feature
SPREAD = 0.4  # how far dots of one feature spread from its line, in rows
BINS = 50  # attribution bins within which crowded dots are spread apart


@dataclass(frozen=True)
class Summary:
    """The ``summary.*`` options of the plot (None: the default)."""

    plot_type: str | None = None  # dot (one output), bar (per class) unless chosen
    sort: bool = True
    alpha: float = 1.0
    max_display: int = MAX_FEATURES
    title: str | None = None
    color_bar: bool = True
    log_scale: bool = False


def drawn_type(summary: Summary, per_class: bool, per_row: bool) -> tuple[str, str | None]:
    """The plot type drawn for ``summary`` and, when it is not exactly the one asked for,
    why. ``per_class``: attributions per class; ``per_row``: per row (not one importance
    per feature)."""
    asked = summary.plot_type
    if asked is None:
        return ("bar" if per_class or not per_row else "dot"), None
    if not per_row and asked != "bar":
        return "bar", "the explainer gives one importance per feature: drawn as bars"
    if per_class and asked in ("dot", "compact_dot", "violin", "layered_violin"):
        return "bar", "attributions per class are drawn as stacked bars, as SHAP's summary does"
    if asked == "layered_violin":
        return "violin", "drawn as a violin plot (sqlml draws no layered violins)"
    if asked == "compact_dot":
        return "dot", "drawn as a dot plot (compact_dot needs interaction values)"
    if asked == "decision" and per_class:
        return "decision", "a decision plot draws one output: the first class's"
    return asked, None


def save_summary_plot(
    path: Path,
    attributions: np.ndarray,
    names: list[str],
    values: list[np.ndarray | None],
    classes: list[str] | None,
    xlabel: str,
    summary: Summary | None = None,
    per_row: bool = True,
) -> str | None:
    """Draw ``attributions`` (rows x features, or rows x classes x features) to ``path``;
    return why the plot differs from the one ``summary`` asks for, if it does.

    ``values``: each feature's value per row for the colour, or None; ``classes``: the
    names of the classes of a 3-D ``attributions``; ``per_row``: False when the one row of
    ``attributions`` holds an importance per feature.
    """
    summary = summary or Summary()
    figure_class, canvas_class = matplotlib_figure("explain.plot")
    per_class = attributions.ndim == 3
    kind, why = drawn_type(summary, per_class, per_row)
    if kind == "decision" and per_class:
        attributions, per_class = attributions[:, 0, :], False
    magnitude = np.abs(attributions).mean(axis=0)
    importance = magnitude.sum(axis=0) if per_class else magnitude
    order = np.argsort(-importance, kind="stable") if summary.sort else np.arange(len(names))
    shown = order[: summary.max_display][::-1]  # drawn bottom-up: the first on top
    figure = figure_class(figsize=(8, 1.5 + ROW_HEIGHT * len(shown)), layout="constrained")
    canvas_class(figure)
    axes = figure.add_subplot()
    if per_class:
        _bars(axes, magnitude[:, shown], classes or [], summary.alpha)
        axes.set_xlabel(f"mean |{xlabel}|")
    elif kind == "bar":
        axes.barh(range(len(shown)), magnitude[shown], color="#1e88e5", alpha=summary.alpha)
        axes.set_xlabel(f"mean |{xlabel}|" if per_row else xlabel)
    elif kind == "decision":
        _decision(axes, attributions[:, shown], summary.alpha)
        axes.set_xlabel(f"cumulative {xlabel}, from the expected output")
    else:
        axes.axvline(0, color="0.6", linewidth=0.8, zorder=0)
        axes.set_xlabel(xlabel)
        columns = attributions[:, shown]
        if kind == "violin":
            _violins(axes, columns, summary.alpha)
        else:
            colours = [values[j] for j in shown]
            _beeswarm(figure, axes, columns, colours, summary.alpha, summary.color_bar)
    if summary.log_scale:
        axes.set_xscale("symlog")
    if summary.title:
        axes.set_title(summary.title)
    axes.set_yticks(range(len(shown)), [names[j] for j in shown])
    axes.set_ylim(-0.7, len(shown) - 0.3)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    write_png(figure, path, "explain.plot")
    return why


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
        canvas = imports.load("matplotlib.backends.backend_agg").FigureCanvasAgg
        figure = imports.load("matplotlib.figure").Figure
    except ImportError:
        raise ModelError(
            f"{attribute} needs matplotlib, which is not installed",
            hint="pip install 'sqlml[plot]'",
        ) from None
    return figure, canvas


def _bars(axes: Any, magnitude: np.ndarray, classes: list[str], alpha: float) -> None:
    """Stacked horizontal bars: per feature, the mean |attribution| of each class."""
    left = np.zeros(magnitude.shape[1])
    colours = _class_colours(len(magnitude))
    for c, widths in enumerate(magnitude):
        label = classes[c] if c < len(classes) else str(c)
        axes.barh(range(len(widths)), widths, left=left, color=colours[c], label=label, alpha=alpha)
        left += widths
    axes.legend(title="class", loc="lower right", frameon=False)


def _class_colours(n: int) -> list[Any]:
    from matplotlib import colormaps

    return [colormaps["tab10" if n <= 10 else "tab20"](i % 20) for i in range(n)]


def _violins(axes: Any, attributions: np.ndarray, alpha: float) -> None:
    """One horizontal violin per feature: the density of its attributions."""
    spread = attributions.max(axis=0) > attributions.min(axis=0)
    lines = np.flatnonzero(spread)
    if len(lines):
        # matplotlib 3.10 names the orientation, and deprecates vert from 3.11
        new = "orientation" in inspect.signature(axes.violinplot).parameters
        across = {"orientation": "horizontal"} if new else {"vert": False}
        parts = axes.violinplot(
            attributions[:, lines], positions=lines, showextrema=False, widths=0.8, **across
        )
        for body in parts["bodies"]:
            body.set_facecolor("#1e88e5")
            body.set_alpha(alpha)
    for line in np.flatnonzero(~spread):  # no density to draw: a tick at its one value
        axes.plot([attributions[0, line]] * 2, [line - 0.3, line + 0.3], color="#1e88e5")


def _decision(axes: Any, attributions: np.ndarray, alpha: float) -> None:
    """One line per row: its attributions added up feature by feature, bottom to top."""
    from matplotlib import colormaps

    paths = np.cumsum(np.hstack([np.zeros((len(attributions), 1)), attributions]), axis=1)
    final = paths[:, -1]
    low, high = float(final.min(initial=0)), float(final.max(initial=0))
    scaled = (final - low) / (high - low) if high > low else np.full(len(final), 0.5)
    heights = np.arange(-0.5, attributions.shape[1])
    colormap = colormaps["coolwarm"]
    for path, colour in zip(paths, scaled, strict=True):
        axes.plot(path, heights, color=colormap(colour), alpha=alpha, linewidth=0.8)
    axes.axvline(0, color="0.6", linewidth=0.8, zorder=0)


def _beeswarm(
    figure: Any,
    axes: Any,
    attributions: np.ndarray,
    values: list[np.ndarray | None],
    alpha: float,
    color_bar: bool,
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
            axes.scatter(column[~known], y[~known], s=8, color="0.7", linewidths=0, alpha=alpha)
            axes.scatter(
                column[known], y[known], s=8, c=colormap(scaled[known]), linewidths=0, alpha=alpha
            )
            coloured = True
        else:
            axes.scatter(column, y, s=8, color="0.6", linewidths=0, alpha=alpha)
    if coloured and color_bar:
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
