"""A run's DAG laid out in layers (Sugiyama-style) for an SVG drawing, computed on the server.

Each step goes in the layer after its latest dependency (networkx's topological
generations), the steps of a layer are ordered to cross fewer edges (barycentre sweeps,
starting from the program's order), and each layer is centred under the widest.

An edge between adjacent layers is a curve through the gap between them. An edge that skips
layers (``s03 -> s07`` past ``s05``) never crosses a step's box: it curves out of its
source's gap into a lane beside the widest layer (left or right, the side of its source),
runs down the lane and curves into its target; edges whose lanes would overlap get lanes of
their own (the fewest: interval colouring). An arrowhead points at each edge's target.

All the edges are drawn as one SVG path (:attr:`Layout.edge_path`), and all the arrowheads
as another (:attr:`Layout.arrow_path`), each step naming the steps it waits for
(:attr:`Node.after`); with the labels in one text element too (templates/dag.html), a browser
draws a run of 1,000 steps (about 2,000 edges) with about two thirds of the main-thread CPU
time that a path per edge and a text per node took (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import networkx as nx

NODE_WIDTH, NODE_HEIGHT = 168, 30
GAP_X, GAP_Y = 22, 54
MARGIN = 12
SWEEPS = 4  # down and up passes of the barycentre ordering
LANE_GAP = 8  # between two lanes of edges that skip layers, and between a lane and a box
ARROW = 8  # an arrowhead's length (and width)


@dataclass(frozen=True)
class Node:
    """A step's box: its top-left corner, and the steps it waits for (its edges' sources)."""

    name: str
    x: float
    y: float
    after: tuple[str, ...] = ()


@dataclass(frozen=True)
class Edge:
    """A dependency: ``source`` runs before ``target``; ``path`` is its SVG path, which ends
    at the middle of the top of ``target``'s box."""

    source: str
    target: str
    path: str


@dataclass(frozen=True)
class Layout:
    nodes: list[Node]
    edges: list[Edge]
    width: float
    height: float

    @cached_property
    def edge_path(self) -> str:
        """Every edge's line, in one SVG path."""
        return "".join(edge.path for edge in self.edges)

    @cached_property
    def arrow_path(self) -> str:
        """An arrowhead at the top of each box that edges end at, in one SVG path."""
        return "".join(
            f"M{node.x + NODE_WIDTH / 2:g} {node.y:g}l{-ARROW / 2:g} {-ARROW}h{ARROW}z"
            for node in self.nodes
            if node.after
        )


def layout(steps: Sequence[tuple[str, Sequence[str]]]) -> Layout:
    """The drawing of ``steps`` (each a name and the names it waits for, in the program's
    order); dependencies on names that are not steps are left out."""
    graph = nx.DiGraph()
    graph.add_nodes_from(name for name, _ in steps)
    graph.add_edges_from(
        (before, name) for name, after in steps for before in after if before in graph
    )
    rank = {name: index for index, (name, _) in enumerate(steps)}
    layers = [
        sorted(generation, key=rank.__getitem__) for generation in nx.topological_generations(graph)
    ]
    _order(graph, layers)
    depth = {name: index for index, layer in enumerate(layers) for name in layer}
    widest = max((len(layer) for layer in layers), default=0)
    inner = widest * (NODE_WIDTH + GAP_X) - GAP_X
    long = [(a, b) for a, b in graph.edges if depth[b] - depth[a] > 1]
    side = {  # a source right of the middle, or in it (every other one): the right side
        name: index > (len(layer) - 1) / 2 or (2 * index == len(layer) - 1 and rank[name] % 2)
        for layer in layers
        for index, name in enumerate(layer)
    }
    right = [(a, b) for a, b in long if side[a]]
    left = [(a, b) for a, b in long if not side[a]]
    right_lanes, left_lanes = _lanes(right, depth), _lanes(left, depth)
    left_width = (max(left_lanes.values(), default=-1) + 1) * LANE_GAP
    right_width = (max(right_lanes.values(), default=-1) + 1) * LANE_GAP
    origin = MARGIN + left_width
    nodes: dict[str, Node] = {}
    for index, layer in enumerate(layers):
        start = origin + (widest - len(layer)) * (NODE_WIDTH + GAP_X) / 2
        y = _top(index)
        for position, name in enumerate(layer):
            x = start + position * (NODE_WIDTH + GAP_X)
            nodes[name] = Node(name, x, y, tuple(graph.pred[name]))
    lane_x = {edge: origin + inner + (lane + 1) * LANE_GAP for edge, lane in right_lanes.items()}
    lane_x |= {edge: origin - (lane + 1) * LANE_GAP for edge, lane in left_lanes.items()}
    edges = [Edge(a, b, _path(nodes[a], nodes[b], lane_x.get((a, b)))) for a, b in graph.edges]
    width = left_width + inner + right_width + 2 * MARGIN
    height = len(layers) * (NODE_HEIGHT + GAP_Y) - GAP_Y + 2 * MARGIN
    return Layout([nodes[name] for name, _ in steps], edges, max(width, 0), max(height, 0))


def _top(depth: int) -> float:
    """The y of the top of the boxes of layer ``depth``."""
    return MARGIN + depth * (NODE_HEIGHT + GAP_Y)


def _order(graph: nx.DiGraph, layers: list[list[str]]) -> None:
    """Reorder each layer by the mean place of its steps' neighbours in the layers already
    placed, sweeping down (predecessors) then up (successors)."""
    place = {
        name: index - (len(layer) - 1) / 2 for layer in layers for index, name in enumerate(layer)
    }
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        neighbours = graph.pred if down else graph.succ
        for layer in layers[1:] if down else reversed(layers[:-1]):
            if len(layer) < 2:
                continue
            keys = {}
            for name in layer:
                near = neighbours[name]
                keys[name] = (
                    sum(place[other] for other in near) / len(near) if near else place[name]
                )
            layer.sort(key=keys.__getitem__)
            middle = (len(layer) - 1) / 2
            for index, name in enumerate(layer):
                place[name] = index - middle


def _lanes(edges: list[tuple[str, str]], depth: dict[str, int]) -> dict[tuple[str, str], int]:
    """A lane (0: nearest the boxes) for each edge that skips layers, two edges sharing one
    only where their runs down it (the layers they skip) are apart: the fewest lanes
    (interval colouring, edges taken by the first layer they skip)."""
    lanes: dict[tuple[str, str], int] = {}
    ending: list[tuple[int, int]] = []  # (the last layer it skips, lane) of lanes in use
    free: list[int] = []
    count = 0  # lanes opened
    for edge in sorted(edges, key=lambda e: (depth[e[0]], depth[e[1]])):
        first, last = depth[edge[0]] + 1, depth[edge[1]] - 1
        while ending and ending[0][0] < first:
            heapq.heappush(free, heapq.heappop(ending)[1])
        lane = heapq.heappop(free) if free else count
        count = max(count, lane + 1)
        lanes[edge] = lane
        heapq.heappush(ending, (last, lane))
    return lanes


def _path(source: Node, target: Node, lane: float | None) -> str:
    """From the bottom of ``source``'s box to the top of ``target``'s: a curve through the
    gap between their layers or, with a ``lane`` (its x), a curve into the lane, the lane
    down past the layers between, and a curve out of it."""
    x1, y1 = source.x + NODE_WIDTH / 2, source.y + NODE_HEIGHT
    x2, y2 = target.x + NODE_WIDTH / 2, target.y
    if lane is None:
        return _curve(x1, y1, x2, y2, start=True)
    down, up = y1 + GAP_Y, y2 - GAP_Y  # the top of the next layer, the bottom of the last
    return _curve(x1, y1, lane, down, start=True) + f"L{lane:g} {up:g}" + _curve(lane, up, x2, y2)


def _curve(x1: float, y1: float, x2: float, y2: float, start: bool = False) -> str:
    """A curve from (x1, y1) down to (x2, y2), leaving and arriving upright (``start``: as
    a new subpath)."""
    middle = (y1 + y2) / 2
    move = f"M{x1:g} {y1:g}" if start else ""
    return f"{move}C{x1:g} {middle:g} {x2:g} {middle:g} {x2:g} {y2:g}"
