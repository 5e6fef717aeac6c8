"""LightGBM models: imported (TO IMPORT) from LightGBM's text format, checked before LightGBM
reads it (:mod:`.checks`), scored by LightGBM. A binary model's classes are 0 and 1, a
multiclass one's 0 to n-1 (LightGBM keeps none); any other objective predicts values.

LightGBM is imported here only, when a LightGBM model is imported or used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lightgbm
import numpy as np

from sqlml import imports
from sqlml.errors import ModelError
from sqlml.models.checks import TAMPERED_HINT
from sqlml.models.interface import Imported, onnx_converted
from sqlml.models.lightgbm import ESTIMATOR
from sqlml.models.lightgbm.checks import Header, Refused, checked_text, trees_text
from sqlml.models.store import StoredModel
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays


def import_model(data: bytes) -> Imported:
    """The model in a LightGBM text file (``save_model``), checked, then read by LightGBM;
    stored as LightGBM writes it back."""
    try:
        header = checked_text(data)
    except Refused as why:
        raise _not_imported(str(why)) from None
    booster = _booster(data, _not_imported)
    text = booster.model_to_string().encode("ascii")
    params: dict[str, Any] = {"objective": header.objective}
    classes: list[Any] = []
    if header.objective == "binary":
        classes = [0, 1]
    elif header.objective in ("multiclass", "multiclassova"):
        classes = list(range(header.classes))
    if classes:
        params["classes"] = len(classes)
    return Imported(
        data=text,
        estimator=ESTIMATOR,
        params=params,
        task="classifier" if classes else "regressor",
        classes=classes,
        inputs=header.features,
        names=header.names,
    )


def _booster(data: bytes, error: Callable[[str], ModelError]) -> lightgbm.Booster:
    """LightGBM's booster of the checked text ``data`` (its trees: :func:`.trees_text`)."""
    try:
        return lightgbm.Booster(model_str=trees_text(data))
    except lightgbm.basic.LightGBMError as failure:
        raise error(f"LightGBM cannot read it ({str(failure).strip()[:300]})") from None


def _not_imported(why: str) -> ModelError:
    return ModelError(
        f"the LightGBM model file is not imported: {why}",
        hint="save the model with LightGBM's save_model (its text format) to a .txt file",
    )


def _damaged(why: str) -> ModelError:
    return ModelError(f"the stored LightGBM model is not loaded: {why}", hint=TAMPERED_HINT)


def checked(data: bytes) -> tuple[Header, lightgbm.Booster]:
    """The stored model's header and booster, its text checked first."""
    try:
        header = checked_text(data)
    except Refused as why:
        raise _damaged(str(why)) from None
    return header, _booster(data, _damaged)


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """The stored model, checked and loaded once, as a scoring function: class
    probabilities (rows x classes) or values."""
    header, booster = checked(data)
    classes = metadata["params"].get("classes")

    def score(features: FeatureArrays, batch_size: int) -> np.ndarray:
        x = features.matrix(one_hot=True)[0].astype(np.float64)
        if x.shape[1] != header.features:
            raise ModelError(
                f"the features make {x.shape[1]} columns, but the model reads {header.features}",
                hint=TAMPERED_HINT,
            )
        parts = []
        for batch in context.batches(x, batch_size):
            parts.append(np.asarray(booster.predict(batch, num_threads=1), dtype=np.float64))
        found = np.concatenate(parts) if parts else np.empty((0, classes or 1))
        if classes == 2 and found.ndim == 1:
            return np.column_stack([1 - found, found])
        return found.reshape(len(x), classes) if classes else found.reshape(len(x))

    return score


def to_onnx(stored: StoredModel) -> bytes:
    """The booster converted by onnxmltools: a float input ``input`` of its features; a
    classifier's outputs are the class id ``label`` and ``probabilities``."""
    onnxmltools = imports.load("onnxmltools")
    tensor = imports.load("onnxmltools.convert.common.data_types").FloatTensorType
    header, booster = checked(stored.data)
    inputs = [("input", tensor([None, header.features]))]
    return onnx_converted(
        stored.name,
        "onnxmltools",
        lambda: onnxmltools.convert_lightgbm(booster, initial_types=inputs, zipmap=False),
        "LightGBM's format (sqlml export MODEL FILE.txt)",
    )
