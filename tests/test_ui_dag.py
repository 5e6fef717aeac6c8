"""sqlml ui's drawing of a run's DAG (sqlml/ui/dag.py and templates/dag.html): one SVG path
draws every edge, a curve from the bottom of a step's box to the top of each step that waits
for it, and each node names the steps it waits for (``data-after``)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette")
pytest.importorskip("networkx")

from sqlml.backends.runs import StepView
from sqlml.ui.dag import NODE_HEIGHT, NODE_WIDTH, layout
from sqlml.ui.pages import templates

N = r"(-?[\d.]+)"  # a number of an SVG path
CURVE = re.compile(rf"M{N} {N}C{N} {N} {N} {N} {N} {N}")
NODE = re.compile(
    r'<g class="node" data-step="([^"]+)" data-state="[^"]+"(?: data-after="([^"]+)")? '
    r'transform="translate\(([\d.]+),([\d.]+)\)"'
)


def fan_out(steps: int) -> list[tuple[str, list[str]]]:
    """A DAG where most steps feed several others: s0 feeds every step."""
    names = [f"s{i}" for i in range(steps)]
    return [
        (name, [names[j] for j in (0, i - 1, i - 3, i // 2) if 0 <= j < i])
        for i, name in enumerate(names)
    ]


def curves(path: str, boxes: dict[str, tuple[float, float]]) -> set[tuple[str, str]]:
    """The edges ``path`` draws: each curve's source is the box whose bottom centre it starts
    from, its target the box whose top centre it ends at (``boxes``: top-left corners)."""
    bottoms = {(x + NODE_WIDTH / 2, y + NODE_HEIGHT): name for name, (x, y) in boxes.items()}
    tops = {(x + NODE_WIDTH / 2, y): name for name, (x, y) in boxes.items()}
    assert CURVE.sub("", path) == "", "the path holds only curves"
    drawn = [
        (bottoms[float(x1), float(y1)], tops[float(x2), float(y2)])
        for x1, y1, _, _, _, _, x2, y2 in CURVE.findall(path)
    ]
    assert len(drawn) == len(set(drawn)), "an edge drawn twice"
    return set(drawn)


def test_one_path_draws_each_edge_from_its_source_to_its_target() -> None:
    steps = fan_out(200)
    drawing = layout(steps)
    expected = {(before, name) for name, after in steps for before in after}
    boxes = {node.name: (node.x, node.y) for node in drawing.nodes}
    assert curves(drawing.edge_path, boxes) == expected
    waits = {(before, node.name) for node in drawing.nodes for before in node.after}
    assert waits == expected


def test_the_page_draws_every_step_its_edges_and_its_label() -> None:
    steps = [*fan_out(40), ("a very long step name that is cut short", ["s39"])]
    drawing = layout(steps)
    views = {name: StepView(name, state="succeeded") for name, _ in steps}
    svg = templates.get_template("dag.html").render(
        drawing=drawing, steps=views, node_width=NODE_WIDTH, node_height=NODE_HEIGHT,
        label_characters=22,
    )  # fmt: skip
    nodes = NODE.findall(svg)
    assert [name for name, *_ in nodes] == [name for name, _ in steps]
    waits = {(before, name) for name, after, _, _ in nodes for before in after.split()}
    expected = {(before, name) for name, after in steps for before in after}
    assert waits == expected
    (path,) = re.findall(r'<path class="edges" d="([^"]+)"/>', svg)
    boxes = {name: (float(x), float(y)) for name, _, x, y in nodes}
    assert curves(path, boxes) == expected
    labels = re.findall(r'<tspan x="([\d.]+)" y="([\d.]+)">([^<]*)</tspan>', svg)
    assert [text for _, _, text in labels] == [
        *(name for name, _ in steps[:-1]),
        "a very long step name…",
    ]
    assert [(float(x) - 8, float(y) - 19) for x, y, _ in labels] == list(boxes.values())
