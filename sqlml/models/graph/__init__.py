"""The graph family: SQLFlow's model zoo GCN in numpy (graph convolutions over the
symmetric-normalised adjacency with self loops), trained in-process on one graph, the rows of
a SELECT of nodes joined with their edges; stored as JSON (the graph's columns and the
layers' weights); TO PREDICT writes each row its node's class.

This module imports no more than the interface: the estimators' declarations load on first
lookup, :mod:`.model` when a model is trained or used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlml.models.estimator import Estimator
from sqlml.models.graph.checks import gcn_document
from sqlml.models.interface import Family

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel


class Graph(Family):
    name = "graph"
    format = "gcn-json"
    extensions = (".json",)
    trainer_module = "sqlml.models.graph.model"
    # Shuffling the id or an edge column rewires the graph (their importance is the
    # edges'); Shapley values would score samples of rows, pieces of the graph.
    explainers = ("PermutationExplainer",)
    scores_together = "a node's class depends on the graph that all the rows form"

    def estimators(self) -> Iterable[Estimator]:
        from sqlml.models.graph.estimators import ESTIMATORS

        return ESTIMATORS

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        """The checked JSON document, as stored."""
        gcn_document(stored.data)
        return lambda path: path.write_bytes(stored.data)

    def check_metadata(self, metadata: dict[str, Any]) -> str | None:
        """Whether its classes fit its output's width."""
        if len(metadata["labels"]["classes"]) != metadata["params"].get("classes"):
            return "its classes do not fit its output's width"
        return None


FAMILY = Graph()
