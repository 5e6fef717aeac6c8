"""Small charts drawn as inline SVG on the server: no plotting library, no script.

:func:`scatter` draws a metric against one hyperparameter of a search's trials: numbers on a
linear axis (logarithmic when they are positive and span two orders of magnitude or more),
anything else (text, booleans, lists) as evenly spaced categories.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

WIDTH, HEIGHT = 340, 230
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 12, 44  # margins around the plotting area


@dataclass(frozen=True)
class Point:
    x: Any  # a number, or anything else as a category
    y: float
    label: str  # its tooltip
    best: bool = False


def scatter(points: Sequence[Point], x_label: str, y_label: str) -> Markup:
    """``points`` as an SVG scatter plot with labelled axes; the best one marked."""
    numeric = all(_is_number(p.x) for p in points)
    x_of, x_ticks = _numeric_axis([p.x for p in points]) if numeric else _categories(points)
    y_of, y_ticks = _numeric_axis([p.y for p in points], log=False)
    width, height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{escape(y_label)} against {escape(x_label)}">',
        f'<rect x="{LEFT}" y="{TOP}" width="{width}" height="{height}" fill="none" '
        'stroke="#d0d5dd"/>',
    ]
    for value, text in x_ticks:
        x = LEFT + value * width
        parts.append(
            f'<text x="{x:.1f}" y="{TOP + height + 14}" text-anchor="middle" '
            f'font-size="10">{escape(text)}</text>'
        )
    for value, text in y_ticks:
        y = TOP + (1 - value) * height
        parts.append(
            f'<text x="{LEFT - 4}" y="{y + 3:.1f}" text-anchor="end" font-size="10">'
            f"{escape(text)}</text>"
        )
    parts.append(
        f'<text x="{LEFT + width / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle" '
        f'font-size="11">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text transform="translate(12 {TOP + height / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" font-size="11">{escape(y_label)}</text>'
    )
    for point in points:
        cx, cy = LEFT + x_of(point.x) * width, TOP + (1 - y_of(point.y)) * height
        fill = "#c0392b" if point.best else "#2f5fd0"
        parts.append(
            f'<circle class="point{" best" if point.best else ""}" cx="{cx:.1f}" cy="{cy:.1f}" '
            f'r="{5 if point.best else 4}" fill="{fill}" fill-opacity="0.8">'
            f"<title>{escape(point.label)}</title></circle>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _numeric_axis(values: Sequence[float], log: bool = True) -> tuple[Any, list[tuple[float, str]]]:
    """Where each value lies on the axis (0 to 1), and three ticks: the ends and the middle."""
    low, high = min(values), max(values)
    logarithmic = log and low > 0 and high / low >= 100
    scale = math.log10 if logarithmic else float
    start, end = scale(low), scale(high)
    span = end - start

    def where(value: float) -> float:
        return 0.5 if span == 0 else 0.05 + 0.9 * (scale(value) - start) / span

    if span == 0:
        return where, [(0.5, _short(low))]
    middle = 10 ** ((start + end) / 2) if logarithmic else (low + high) / 2
    return where, [(where(v), _short(v)) for v in (low, middle, high)]


def _categories(points: Sequence[Point]) -> tuple[Any, list[tuple[float, str]]]:
    """Each distinct value's text at evenly spaced places, in the order of their texts."""
    texts = sorted({_text(p.x) for p in points})
    places = {text: (index + 0.5) / len(texts) for index, text in enumerate(texts)}
    return (lambda value: places[_text(value)]), [(places[t], t) for t in texts]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _short(value: float) -> str:
    return f"{value:.3g}"
