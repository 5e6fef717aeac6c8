"""The graph a SELECT's rows hold: nodes joined with their edges, one row per node and edge
(a node without edges: one row whose edge columns are NULL).

The node id and the two edge ends are features named by ``model.id_col``,
``model.from_node_col`` and ``model.to_node_col``; every other feature describes the node.
A node's features are its first row's (its training rows must agree on them and its label);
each edge counts once whichever way it is written and however many rows repeat it; an edge to
a node the rows do not hold, and one from a node to itself, is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import sparse

from sqlml.errors import ModelError

if TYPE_CHECKING:  # the GCN's trainer (runtime) calls it with its features
    from sqlml.runtime.features_apply import FeatureArrays

# Ids are read as float32 features, which hold whole numbers exactly up to 2**24.
MAX_ID = 1 << 24


@dataclass(frozen=True)
class Adjacency:
    """The normalised adjacency with self loops, D^-1/2 (A + I) D^-1/2, as its non-zero
    entries sorted by row; symmetric, so it is its own transpose."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    starts: np.ndarray  # each row's first entry (every row has one: its self loop)

    @classmethod
    def of(cls, nodes: int, first: np.ndarray, second: np.ndarray) -> Adjacency:
        """The adjacency of ``nodes`` nodes joined by the edges ``first[i]``-``second[i]``
        (node indices; repeated edges and self loops are taken once)."""
        loops = np.arange(nodes)
        keys = np.unique(
            np.concatenate([first * nodes + second, second * nodes + first, loops * nodes + loops])
        )
        rows, cols = keys // nodes, keys % nodes  # sorted by row, then column
        degree = np.bincount(rows, minlength=nodes).astype(np.float64)
        values = 1.0 / np.sqrt(degree[rows] * degree[cols])
        starts = np.searchsorted(rows, loops)
        return cls(rows, cols, values, starts)

    @property
    def edges(self) -> int:
        """The undirected edges between two distinct nodes."""
        return int((self.rows != self.cols).sum()) // 2

    def propagate(self, h: np.ndarray) -> np.ndarray:
        """The adjacency times ``h`` (nodes x columns)."""
        return np.add.reduceat(self.values[:, None] * h[self.cols], self.starts, axis=0)


@dataclass(frozen=True)
class Graph:
    """The nodes of a SELECT's rows: their features (each row scaled to sum to 1 in
    absolute value), the adjacency, and which node each row is."""

    ids: np.ndarray  # the node ids, sorted
    x: sparse.csr_array  # nodes x node features
    adjacency: Adjacency
    row_node: np.ndarray  # the node (index in ids) of each row
    first_row: np.ndarray  # the first row of each node

    def node_labels(self, y: np.ndarray) -> np.ndarray:
        """Each node's label, from its rows' ``y``; a :class:`ModelError` if they differ."""
        labels = y[self.first_row]
        odd = np.flatnonzero(labels[self.row_node] != y)
        if len(odd):
            raise ModelError(
                f"node {_id(self.ids[self.row_node[odd[0]]])} has two labels in its rows",
                hint="select one label per node: the node table's own column",
            )
        return labels


def graph_of(features: FeatureArrays, columns: dict[str, str], agreeing: bool = True) -> Graph:
    """The graph of the rows of ``features``, whose ``columns`` (by attribute: the id and the
    edge ends) are read as ids; a :class:`ModelError` where the rows do not hold one. Each
    node's features are its first row's; with ``agreeing``, its other rows must repeat them
    (a scorer takes rows whose features PermutationExplainer has shuffled)."""
    _check_named(features, columns)
    ids, first, second = (_ids(features, attribute, name) for attribute, name in columns.items())
    if np.isnan(ids).any():
        raise ModelError(
            f"column {columns['model.id_col']} (model.id_col) is NULL in "
            f"{int(np.isnan(ids).sum())} rows: each row must name its node",
            hint="select the node table's id, joined with the edges by a LEFT JOIN",
        )
    nodes, first_row, row_node = np.unique(ids, return_index=True, return_inverse=True)
    x = _node_features(features, set(columns.values()))
    odd = np.flatnonzero((x != x[first_row][row_node]).any(axis=1)) if agreeing else []
    if len(odd):
        raise ModelError(
            f"node {_id(nodes[row_node[odd[0]]])} has different features in two of its rows",
            hint="select the node features from the node table",
        )
    x = x[first_row].astype(np.float64)
    scale = np.abs(x).sum(axis=1, keepdims=True)
    x = sparse.csr_array(np.divide(x, scale, out=np.zeros_like(x), where=scale > 0))
    ends = [_node_index(nodes, end) for end in (first, second)]
    known = (ends[0] >= 0) & (ends[1] >= 0)
    adjacency = Adjacency.of(len(nodes), ends[0][known], ends[1][known])
    return Graph(nodes, x, adjacency, row_node, first_row)


def _check_named(features: FeatureArrays, columns: dict[str, str]) -> None:
    """A :class:`ModelError` unless the features hold each of the graph's ``columns``."""
    missing = [name for name in columns.values() if name not in features.names]
    if missing:
        named = ", ".join(f"{name} ({attribute})" for attribute, name in columns.items())
        raise ModelError(
            f"sqlflow_models.GCN reads the graph from the features {named}; "
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not among them "
            f"({', '.join(features.names)})",
            hint="select the nodes LEFT JOINed with their edges, their columns named as "
            "those attributes say",
        )


def _ids(features: FeatureArrays, attribute: str, name: str) -> np.ndarray:
    """The whole numbers of the feature called ``name`` (NaN for NULL)."""
    index = features.names.index(name)
    numbers = features.numbers[:, features.owners == index].astype(np.float64)
    if numbers.shape[1] != 1:
        raise ModelError(
            f"column {name} ({attribute}) must hold one node id per row, as a number",
            hint=f"select {name} as an integer column and list it as a plain column in COLUMN",
        )
    values = numbers[:, 0]
    known = values[~np.isnan(values)]
    bad = known[(known != np.round(known)) | (np.abs(known) >= MAX_ID)]
    if len(bad):
        raise ModelError(
            f"column {name} ({attribute}) holds {bad[0]:g}; node ids are whole numbers "
            f"below {MAX_ID:,} in absolute value",
            hint="number the nodes (in the node and the edge table alike) from 0",
        )
    return values


def _node_features(features: FeatureArrays, graph_columns: set[str]) -> np.ndarray:
    """The features but the graph's columns (categories one-hot, NULL 0)."""
    matrix, owners = features.matrix(one_hot=True)
    kept = [i for i, name in enumerate(features.names) if name not in graph_columns]
    if not kept:
        raise ModelError(
            "sqlflow_models.GCN has no node features: the features are the id and edge "
            "columns only",
            hint="select the node features too (COLUMN id, DENSE(features), from_node_id, "
            "to_node_id)",
        )
    x = matrix[:, np.isin(owners, kept)]
    return np.nan_to_num(x, nan=0.0, copy=False)


def _node_index(nodes: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The index in ``nodes`` of each edge end; -1 for NULL and for ids not in ``nodes``."""
    index = np.searchsorted(nodes, ends).clip(0, len(nodes) - 1)
    return np.where(nodes[index] == ends, index, -1)


def _id(value: float) -> str:
    return f"{value:.0f}"
