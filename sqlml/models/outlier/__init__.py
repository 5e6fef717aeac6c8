"""The outlier family: a one-class model in numpy (an RBF kernel density over training rows,
its threshold set by the share ``nu`` of outliers), stored as JSON, trained in-process
without a LABEL; TO PREDICT writes 1 for an inlier, -1 for an outlier, as SQLFlow does, and
with ``predict.extra_outputs = 'score'`` each row's decision function, as SQLFlow's model zoo
OneClassSVM.

This module imports no more than the interface: the estimators' declarations load on first
lookup, :mod:`.model` when a model is trained or used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlml.models.estimator import Estimator
from sqlml.models.interface import Family
from sqlml.models.outlier.checks import one_class_document

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel


class Outlier(Family):
    name = "outlier"
    format = "one-class-json"
    extensions = (".json",)
    trainer_module = "sqlml.models.outlier.model"
    own_extra_outputs = {  # noqa: RUF012 (a declaration, never changed)
        "score": "the decision function: the row's density minus the model's threshold "
        "(positive for an inlier, negative for an outlier)"
    }

    def estimators(self) -> Iterable[Estimator]:
        from sqlml.models.outlier.estimators import ESTIMATORS

        return ESTIMATORS

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        """The checked JSON document, as stored."""
        one_class_document(stored.data)
        return lambda path: path.write_bytes(stored.data)

    def check_metadata(self, metadata: dict[str, Any]) -> str | None:
        """Whether it predicts -1 and 1."""
        if metadata["labels"]["classes"] != [-1, 1]:
            return "it does not predict -1 (outlier) and 1 (inlier)"
        return None


FAMILY = Outlier()
