"""The model zoo: one module per library, imported only when a model of it is used."""

from __future__ import annotations

import importlib
from types import ModuleType

FAMILIES = {
    "xgboost": "sqlml.runtime.models.xgboost_model",
    "keras": "sqlml.runtime.models.keras_model",
}


def family(name: str) -> ModuleType:
    """The module that trains and predicts models of family ``name``.

    Each has ``train(x, y, labels, attributes) -> (bytes, metrics)`` and
    ``predict(data, x, metadata, batch_size) -> predictions``.
    """
    return importlib.import_module(FAMILIES[name])
