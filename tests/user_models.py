"""Keras model builders that tests train as ``TO TRAIN user_models.<function>``.

A builder gets the processed features (a Keras tensor, rows x width), the number of outputs
and the statement's ``model.*`` attributes (without the prefix); it returns the raw scores.
"""

from __future__ import annotations

from typing import Any


def build_model(features: Any, n_outputs: int, attributes: dict[str, Any]) -> Any:
    """Dense layers of ``hidden_units`` (default [16]) then ``n_outputs`` scores."""
    import keras

    hidden = features
    for units in attributes.get("hidden_units", [16]):
        hidden = keras.layers.Dense(units, activation="relu")(hidden)
    return keras.layers.Dense(n_outputs)(hidden)


def build_keras_model(features: Any, n_outputs: int, attributes: dict[str, Any]) -> Any:
    """The same network as a ``keras.Model`` of its own input."""
    import keras

    inputs = keras.Input(shape=features.shape[1:])
    hidden = keras.layers.Dense(16, activation="tanh")(inputs)
    return keras.Model(inputs, keras.layers.Dense(n_outputs)(hidden))


def build_with_lambda(features: Any, n_outputs: int, attributes: dict[str, Any]) -> Any:
    """A network with a Lambda layer: it could not be loaded without running code."""
    import keras

    return keras.layers.Dense(n_outputs)(keras.layers.Lambda(lambda x: x * 2)(features))


def build_wrong_width(features: Any, n_outputs: int, attributes: dict[str, Any]) -> Any:
    """One output too many."""
    import keras

    return keras.layers.Dense(n_outputs + 1)(features)


NOT_A_FUNCTION = 42
