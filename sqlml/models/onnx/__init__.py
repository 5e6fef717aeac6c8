"""The ONNX family: models trained elsewhere and imported from ONNX files (TO IMPORT), scored
by onnxruntime. It trains nothing: it declares no estimators.

This module imports no more than the interface: onnx and onnxruntime (the ``import`` extra)
load with :mod:`.model` and :mod:`.checks`, when an ONNX model is imported or used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlml.errors import ModelError
from sqlml.models.estimator import Estimator
from sqlml.models.interface import Family, Trainer

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel

ESTIMATOR = "onnx"  # the estimator every imported ONNX model is recorded with
INPUT_TYPES = ("float32", "float64", "int64", "int32")  # numpy's types of the inputs it feeds


class Onnx(Family):
    name = "onnx"
    title = "ONNX"
    format = "onnx"
    extensions = (".onnx",)
    libraries = ("onnx", "onnxruntime")
    trainer_module = "sqlml.models.onnx.model"
    import_formats = {"onnx": (".onnx",)}  # noqa: RUF012 (a declaration, never changed)

    def estimators(self) -> Iterable[Estimator]:
        return ()

    def trainer(self) -> Trainer:
        """:mod:`.model`; a :class:`ModelError` naming the extra where onnx or onnxruntime
        is not installed."""
        try:
            return super().trainer()
        except ModuleNotFoundError as error:
            library = (error.name or "").split(".")[0]
            if library not in self.libraries:
                raise
            raise ModelError(
                f"ONNX models need {library}, which is not installed",
                hint="pip install 'sqlml[import]'",
            ) from None

    def import_format_of(self, data: bytes) -> str | None:
        """A protocol buffer starting with a ModelProto's first field, ``ir_version``."""
        return "onnx" if data[:1] == b"\x08" else None

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        """The checked model, as stored (the bytes imported)."""
        self.to_onnx(stored)
        return lambda path: path.write_bytes(stored.data)

    def to_onnx(self, stored: StoredModel) -> bytes:
        """The model's own bytes, checked as for scoring."""
        self.trainer()
        from sqlml.models.onnx.checks import checked_model

        checked_model(stored.data)
        return stored.data

    def check_metadata(self, metadata: dict[str, Any]) -> str | None:
        """Whether it names the ONNX estimator, how it feeds its inputs and reads its outputs."""
        params, labels = metadata["params"], metadata["labels"]
        inputs, types, ranks = params.get("inputs"), params.get("input_types"), params.get("ranks")
        if metadata["estimator"] != ESTIMATOR or params.get("mode") not in ("matrix", "columns"):
            return "it names no ONNX model's inputs"
        if not (
            isinstance(inputs, list)
            and isinstance(types, list)
            and isinstance(ranks, list)
            and len(inputs) == len(types) == len(ranks) >= 1
            and all(isinstance(name, str) for name in inputs)
            and all(kind in INPUT_TYPES for kind in types)
            and all(rank in (1, 2) for rank in ranks)
            and isinstance(params.get("width"), int)
            and isinstance(params.get("output"), str)
            and isinstance(params.get("zipmap"), bool)
        ):
            return "its ONNX inputs or output are malformed"
        if labels["task"] == "classifier" and params.get("classes") != len(labels["classes"]):
            return "its classes do not fit its number of classes"
        return None

    def check_data(self, data: bytes, metadata: dict[str, Any], most_features: int) -> str | None:
        """What :func:`.checks.model_problem` finds (onnx parses the protocol buffer; no
        operator runs)."""
        self.trainer()
        from sqlml.models.onnx.checks import model_problem

        return model_problem(data)


FAMILY = Onnx()
