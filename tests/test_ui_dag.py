"""sqlml ui's drawing of a run's DAG (sqlml/ui/dag.py and templates/dag.html): one SVG path
draws every edge, from the bottom of a step's box to the top of each step that waits for it
(an edge that skips layers by a lane beside them), never through another step's box; another
path draws an arrowhead at each edge's end; each node names the steps it waits for
(``data-after``)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette")
pytest.importorskip("networkx")

from sqlml.backends.runs import StepView
from sqlml.ui.dag import NODE_HEIGHT, NODE_WIDTH, layout
from sqlml.ui.pages import templates

N = r"(-?[\d.]+)"  # a number of an SVG path
C = rf"C{N} {N} {N} {N} {N} {N}"
EDGE = re.compile(rf"M{N} {N}{C}(?:L{N} {N}{C})?")  # a curve, or curve, lane and curve
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
    """The edges ``path`` draws: each one's source is the box whose bottom centre it starts
    from, its target the box whose top centre it ends at (``boxes``: top-left corners)."""
    bottoms = {(x + NODE_WIDTH / 2, y + NODE_HEIGHT): name for name, (x, y) in boxes.items()}
    tops = {(x + NODE_WIDTH / 2, y): name for name, (x, y) in boxes.items()}
    assert EDGE.sub("", path) == "", "the path holds only edges"
    drawn = []
    for found in EDGE.finditer(path):
        numbers = [float(n) for n in re.findall(N, found.group(0))]
        drawn.append((bottoms[numbers[0], numbers[1]], tops[numbers[-2], numbers[-1]]))
    assert len(drawn) == len(set(drawn)), "an edge drawn twice"
    return set(drawn)


def points(path: str, per_curve: int = 24) -> list[tuple[float, float]]:
    """Points along each line and curve of ``path`` (as EDGE draws them)."""
    found = []
    for edge in EDGE.finditer(path):
        numbers = [float(n) for n in re.findall(N, edge.group(0))]
        x, y, rest = numbers[0], numbers[1], numbers[2:]
        while rest:
            if len(rest) == 8:  # the lane (a line down), then the last curve
                (ex, ey), rest = rest[:2], rest[2:]
                found += [(ex, y + (ey - y) * i / per_curve) for i in range(per_curve + 1)]
            else:  # a curve
                (ax, ay, bx, by, ex, ey), rest = rest[:6], rest[6:]
                for i in range(per_curve + 1):
                    t = i / per_curve
                    u = 1 - t
                    found.append((
                        u**3 * x + 3 * u * u * t * ax + 3 * u * t * t * bx + t**3 * ex,
                        u**3 * y + 3 * u * u * t * ay + 3 * u * t * t * by + t**3 * ey,
                    ))  # fmt: skip
            x, y = ex, ey
    return found


def inside(point: tuple[float, float], box: tuple[float, float]) -> bool:
    """Whether ``point`` is in the box at ``box`` (its border left out)."""
    (px, py), (x, y) = point, box
    return x + 1 < px < x + NODE_WIDTH - 1 and y + 1 < py < y + NODE_HEIGHT - 1


def test_one_path_draws_each_edge_from_its_source_to_its_target() -> None:
    steps = fan_out(200)
    drawing = layout(steps)
    expected = {(before, name) for name, after in steps for before in after}
    boxes = {node.name: (node.x, node.y) for node in drawing.nodes}
    assert curves(drawing.edge_path, boxes) == expected
    waits = {(before, node.name) for node in drawing.nodes for before in node.after}
    assert waits == expected


def test_no_edge_crosses_a_box_and_each_ends_at_an_arrowhead() -> None:
    # s03 -> s07 skips the layer of s05: drawn straight, it would pass behind s05's box
    steps = [("s01", []), ("s02", ["s01"]), ("s03", ["s01"]), ("s05", ["s03"]),
             ("s07", ["s05", "s03"]), *fan_out(60)]  # fmt: skip
    drawing = layout(steps)
    boxes = {node.name: (node.x, node.y) for node in drawing.nodes}
    assert ("s03", "s07") in curves(drawing.edge_path, boxes)
    skipping = next(edge for edge in drawing.edges if (edge.source, edge.target) == ("s03", "s07"))
    assert "L" in skipping.path  # by a lane
    crossing = [
        (point, name) for point in points(drawing.edge_path) for name, box in boxes.items()
        if inside(point, box)
    ]  # fmt: skip
    assert crossing == []
    assert max(x for x, _ in points(drawing.edge_path)) <= drawing.width
    tips = re.findall(rf"M{N} {N}l-4 -8h8z", drawing.arrow_path)
    assert re.sub(rf"M{N} {N}l-4 -8h8z", "", drawing.arrow_path) == ""
    targets = {edge.target for edge in drawing.edges}
    assert {(float(x), float(y)) for x, y in tips} == {
        (boxes[name][0] + NODE_WIDTH / 2, boxes[name][1]) for name in targets
    }


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
    assert re.findall(r'<path class="arrows" d="([^"]+)"/>', svg) == [drawing.arrow_path]
    boxes = {name: (float(x), float(y)) for name, _, x, y in nodes}
    assert curves(path, boxes) == expected
    labels = re.findall(r'<tspan x="([\d.]+)" y="([\d.]+)">([^<]*)</tspan>', svg)
    assert [text for _, _, text in labels] == [
        *(name for name, _ in steps[:-1]),
        "a very long step name…",
    ]
    assert [(float(x) - 8, float(y) - 19) for x, y, _ in labels] == list(boxes.values())
