"""A run's DAG laid out in layers (Sugiyama-style) for an SVG drawing, computed on the server.

Each step goes in the layer after its latest dependency (networkx's topological
generations), the steps of a layer are ordered to cross fewer edges (barycentre sweeps,
starting from the program's order), and each layer is centred under the widest.

All the edges are drawn as one SVG path (:attr:`Layout.edge_path`), each step naming the
steps it waits for (:attr:`Node.after`); with the labels in one text element too
(templates/dag.html), a browser draws a run of 1,000 steps (about 2,000 edges) with about
two thirds of the main-thread CPU time that a path per edge and a text per node took
(benchmarks/RESULTS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import networkx as nx

NODE_WIDTH, NODE_HEIGHT = 168, 30
GAP_X, GAP_Y = 22, 54
MARGIN = 12
SWEEPS = 4  # down and up passes of the barycentre ordering


@dataclass(frozen=True)
class Node:
    """A step's box: its top-left corner, and the steps it waits for (its edges' sources)."""

    name: str
    x: float
    y: float
    after: tuple[str, ...] = ()


@dataclass(frozen=True)
class Edge:
    """A dependency: ``source`` runs before ``target``; ``path`` is its SVG path."""

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
        """Every edge's curve, in one SVG path."""
        return "".join(edge.path for edge in self.edges)


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
    widest = max((len(layer) for layer in layers), default=0)
    width = widest * (NODE_WIDTH + GAP_X) - GAP_X + 2 * MARGIN
    nodes: dict[str, Node] = {}
    for depth, layer in enumerate(layers):
        left = MARGIN + (widest - len(layer)) * (NODE_WIDTH + GAP_X) / 2
        y = MARGIN + depth * (NODE_HEIGHT + GAP_Y)
        for index, name in enumerate(layer):
            x = left + index * (NODE_WIDTH + GAP_X)
            nodes[name] = Node(name, x, y, tuple(graph.pred[name]))
    edges = [Edge(a, b, _path(nodes[a], nodes[b])) for a, b in graph.edges]
    height = len(layers) * (NODE_HEIGHT + GAP_Y) - GAP_Y + 2 * MARGIN
    return Layout([nodes[name] for name, _ in steps], edges, max(width, 0), max(height, 0))


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


def _path(source: Node, target: Node) -> str:
    """A curve from the bottom of ``source``'s box to the top of ``target``'s."""
    x1, y1 = source.x + NODE_WIDTH / 2, source.y + NODE_HEIGHT
    x2, y2 = target.x + NODE_WIDTH / 2, target.y
    middle = (y1 + y2) / 2
    return f"M{x1:g} {y1:g}C{x1:g} {middle:g} {x2:g} {middle:g} {x2:g} {y2:g}"
