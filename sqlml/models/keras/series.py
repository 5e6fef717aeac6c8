"""The network of SQLFlow's time-series regressors (RNNBasedTimeSeriesModel,
LSTMBasedTimeSeriesModel): the numeric features are a window of ``model.n_in`` past steps of
``model.n_features`` values each (in COLUMN order, step by step), normalised, read in order by
stacked recurrent layers of ``model.stack_units``, then dropout (0.2) and a dense output of
the next ``model.n_out`` values, as the zoo's model. Keras's own layers only, so the model
loads in safe mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlml.errors import ModelError

if TYPE_CHECKING:  # the Keras trainer (runtime) calls it with its features
    from sqlml.runtime.features_apply import FeatureArrays

_LAYERS = {"rnn": "SimpleRNN", "lstm": "LSTM", "gru": "GRU"}


def network(keras, features: FeatureArrays, n_outputs: int, attributes: dict[str, Any]):
    """The input ``numbers`` (the window) and ``n_outputs`` raw scores (``model.n_out``: the
    width of the label the trainer read)."""
    steps, width = attributes["model.n_in"], attributes["model.n_features"]
    blocks = features.number_inputs()
    if features.categoricals or len(blocks) != 1 or blocks[0][2].shape[1] != steps * width:
        found = sum(block.shape[1] for _, _, block in blocks)
        raise ModelError(
            f"a time-series model reads model.n_in x model.n_features = {steps * width} "
            f"numbers a row (the past steps), but the features make {found} numbers"
            + (" and categories" if features.categoricals else ""),
            hint="select one numeric column per past step (and per value of a step), or set "
            "model.n_in and model.n_features to match the columns",
        )
    name, _, block = blocks[0]
    window = keras.Input(shape=(block.shape[1],), name=name)
    normalize = keras.layers.Normalization(axis=None)  # one scale: the steps are one series
    normalize.adapt(block)
    sequence = keras.layers.Reshape((steps, width))(normalize(window))
    layer = getattr(keras.layers, _LAYERS[attributes["model.model_type"]])
    units = attributes["model.stack_units"]
    for n, count in enumerate(units):
        sequence = layer(count, return_sequences=n < len(units) - 1)(sequence)
    outputs = keras.layers.Dense(n_outputs)(keras.layers.Dropout(0.2)(sequence))
    return {name: window}, outputs
