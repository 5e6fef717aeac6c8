"""The LightGBM family: gradient-boosted trees trained elsewhere and imported from LightGBM's
text format (TO IMPORT), scored by LightGBM. It trains nothing: it declares no estimators.

This module imports no more than the interface: LightGBM (the ``import`` extra) loads with
:mod:`.model`, when a LightGBM model is imported or used; :mod:`.checks` reads the text
without it.
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

ESTIMATOR = "lightgbm"  # the estimator every imported LightGBM model is recorded with


class LightGBM(Family):
    name = "lightgbm"
    title = "LightGBM"
    format = "lightgbm-text"
    extensions = (".txt",)
    libraries = ("lightgbm",)
    trainer_module = "sqlml.models.lightgbm.model"
    import_formats = {"lightgbm": (".txt",)}  # noqa: RUF012 (a declaration, never changed)

    def estimators(self) -> Iterable[Estimator]:
        return ()

    def trainer(self) -> Trainer:
        """:mod:`.model`; a :class:`ModelError` naming the extra where LightGBM is not
        installed."""
        try:
            return super().trainer()
        except ModuleNotFoundError as error:
            if (error.name or "").split(".")[0] not in self.libraries:
                raise
            raise ModelError(
                "LightGBM models need lightgbm, which is not installed",
                hint="pip install 'sqlml[import]'",
            ) from None

    def import_format_of(self, data: bytes) -> str | None:
        """LightGBM's text starts with the line ``tree``."""
        return "lightgbm" if data.startswith((b"tree\n", b"tree\r\n")) else None

    def exporter(self, stored: StoredModel) -> Callable[[Path], Any]:
        """The checked text, as stored (LightGBM's ``Booster(model_file=...)`` reads it)."""
        from sqlml.models.lightgbm.checks import checked_text

        checked_text(stored.data)
        return lambda path: path.write_bytes(stored.data)

    def to_onnx(self, stored: StoredModel) -> bytes:
        """The booster converted by onnxmltools (the ``import`` extra)."""
        model: Any = self.trainer()
        return model.to_onnx(stored)

    def check_metadata(self, metadata: dict[str, Any]) -> str | None:
        """Whether it names the LightGBM estimator and its classes fit its objective."""
        params, labels = metadata["params"], metadata["labels"]
        classes = params.get("classes")
        if metadata["estimator"] != ESTIMATOR or not isinstance(params.get("objective"), str):
            return "it names no LightGBM objective"
        if (labels["task"] == "classifier") is not isinstance(classes, int) or (
            isinstance(classes, int) and classes != len(labels["classes"])
        ):
            return "its classes do not fit its objective"
        return None

    def check_data(self, data: bytes, metadata: dict[str, Any], most_features: int) -> str | None:
        """What :func:`.checks.text_problem` finds: the trees' structure, before LightGBM's
        loader (which follows indices unchecked) reads them."""
        from sqlml.models.lightgbm.checks import text_problem

        return text_problem(data, most_features)


FAMILY = LightGBM()
