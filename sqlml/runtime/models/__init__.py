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

    Each has ``FORMAT``, ``train(features, y, labels, attributes, base=None) -> (bytes,
    details)`` (``base``: a stored model of the same estimator whose training continues) and
    ``predict_scores(data, features, metadata, batch_size)``: class probabilities (rows x
    classes) for classifiers, values for regressors; ``features`` are
    :class:`~sqlml.runtime.feature_arrays.FeatureArrays`.
    """
    return importlib.import_module(FAMILIES[name])
