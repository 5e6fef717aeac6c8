"""The scikit-learn family: scikit-learn's estimators under their import paths
(``sklearn.ensemble.RandomForestClassifier``, ``sklearn.cluster.KMeans`` ...), trained
in-process on the rows in memory (the clustering and outlier ones without a LABEL), stored in
skops's format and loaded trusting an explicit allow-list of types, never with pickle.

This module imports no more than the interface: the estimators' declarations load on first
lookup, :mod:`.model` (scikit-learn and skops, the ``sklearn`` extra) when a model is trained
or used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlml.models.estimator import Estimator
from sqlml.models.interface import CompiledModel, Family, Trainer
from sqlml.models.sklearn.checks import skops_archive

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel


class ScikitLearn(Family):
    name = "sklearn"
    format = "skops"
    extensions = (".skops",)
    libraries = ("sklearn",)
    trainer_module = "sqlml.models.sklearn.model"
    import_formats = {"skops": (".skops",)}  # noqa: RUF012 (a declaration, never changed)
    own_extra_outputs = {  # noqa: RUF012 (a declaration, never changed)
        "score": "scikit-learn's decision_function of an outlier detector (positive for an "
        "inlier, negative for an outlier)"
    }

    def estimators(self) -> Iterable[Estimator]:
        from sqlml.models.sklearn.estimators import ESTIMATORS

        return ESTIMATORS

    def trainer(self) -> Trainer:
        """:mod:`.model`; a :class:`ModelError` naming the extra where scikit-learn or skops
        is not installed."""
        try:
            return super().trainer()
        except ModuleNotFoundError as error:
            if error.name is None or error.name.split(".")[0] not in ("sklearn", "skops"):
                raise
            from sqlml.errors import ModelError

            raise ModelError(
                f"scikit-learn models need {error.name.split('.')[0]}, which is not installed",
                hint="pip install 'sqlml[sklearn]'",
            ) from None

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        """The checked skops archive, as stored (``skops.io.load`` reads it, trusting the
        types ``skops.io.get_untrusted_types`` lists once reviewed)."""
        skops_archive(stored.data, stored.metadata["params"].get("estimator"))
        return lambda path: path.write_bytes(stored.data)

    def import_format_of(self, data: bytes) -> str | None:
        """A zip archive: skops's (:mod:`.checks` tells whether it is one)."""
        return "skops" if data.startswith(b"PK\x03\x04") else None

    def to_onnx(self, stored: StoredModel) -> bytes:
        """The pipeline converted by skl2onnx (the ``import`` extra)."""
        model: Any = self.trainer()
        return model.to_onnx(stored)

    def to_sql(self, stored: StoredModel) -> CompiledModel:
        """Linear and logistic regression as arithmetic, random forests as nested CASEs,
        k-means as the nearest centre (:mod:`.sql`), from the pipeline loaded as for scoring;
        the other estimators are refused before it is loaded."""
        from sqlml.models.sklearn.sql import check_compiled, compile_model

        check_compiled(stored)
        model: Any = self.trainer()
        return compile_model(
            stored, model.load(stored.data, stored.metadata["params"].get("estimator"))
        )

    def extra_outputs(self, metadata: Mapping[str, Any]) -> dict[str, str]:
        """A classifier's class probabilities; an outlier detector's score."""
        from sqlml.models.sklearn.estimators import CLUSTERING, UNLABELLED

        offered = super().extra_outputs(metadata)
        if metadata["params"].get("estimator") not in UNLABELLED - {CLUSTERING}:
            del offered["score"]
        return offered

    def check_metadata(self, metadata: dict[str, Any]) -> str | None:
        """Whether it names one of the family's estimators, and its classes fit it."""
        from sqlml.models.sklearn.estimators import CLUSTERING, ESTIMATORS, UNLABELLED

        params, classes = metadata["params"], metadata["labels"]["classes"]
        estimator = params.get("estimator")
        if estimator != metadata["estimator"] or estimator not in {e.name for e in ESTIMATORS}:
            return "it names no scikit-learn estimator of sqlml's"
        if estimator == CLUSTERING and classes != list(range(params.get("n_clusters") or 0)):
            return "its cluster ids do not fit its number of clusters"
        if estimator in UNLABELLED - {CLUSTERING} and classes != [-1, 1]:
            return "it does not predict -1 (outlier) and 1 (inlier)"
        if "classes" in params and len(classes) != params["classes"]:
            return "its classes do not fit its number of classes"
        return None


FAMILY = ScikitLearn()
