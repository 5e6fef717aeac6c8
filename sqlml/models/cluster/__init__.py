"""The clustering family: k-means in numpy, stored as JSON (the standardisation and the
centres), trained in-process without a LABEL; TO PREDICT writes each row's cluster id.

This module imports no more than the interface: the estimators' declarations load on first
lookup, :mod:`.model` when a model is trained or used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlml.models.cluster.checks import kmeans_document
from sqlml.models.estimator import Estimator
from sqlml.models.interface import CompiledModel, Family

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel


class Cluster(Family):
    name = "cluster"
    format = "kmeans-json"
    extensions = (".json",)
    trainer_module = "sqlml.models.cluster.model"

    def estimators(self) -> Iterable[Estimator]:
        from sqlml.models.cluster.estimators import ESTIMATORS

        return ESTIMATORS

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        """The checked JSON document, as stored."""
        kmeans_document(stored.data)
        return lambda path: path.write_bytes(stored.data)

    def to_sql(self, stored: StoredModel) -> CompiledModel:
        """The nearest centre (:mod:`.sql`)."""
        from sqlml.models.cluster.sql import compile_model

        return compile_model(stored)

    def check_metadata(self, metadata: dict[str, Any]) -> str | None:
        """Whether the cluster ids fit the number of clusters trained."""
        clusters = metadata["params"].get("n_clusters")
        if metadata["labels"]["classes"] != list(range(clusters or 0)):
            return "its cluster ids do not fit its number of clusters"
        return None


FAMILY = Cluster()
