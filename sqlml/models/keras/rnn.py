"""The network of the sequence classifiers (SQLFlow's StackedRNNClassifier and
StackedBiLSTMClassifier): each embedded sequence (``EMBEDDING(SEQ_CATEGORY_ID(...))``) read in
order by stacked recurrent layers, then a dense ReLU layer of ``model.hidden_size`` units.

Built from Keras's own layers only, so the model loads in safe mode: a sequence's padding is
masked by zeroing its vectors (weight 0: ``Rescaling`` and a clipped ``ReLU`` make each
weight a 0/1 mask) and ``Masking``. Numbers are normalised and other categories one-hot
encoded, as the other Keras estimators do, and join the recurrent layers' output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlml.errors import ModelError

if TYPE_CHECKING:  # the Keras trainer (runtime) calls it with its features
    from sqlml.runtime.features_apply import FeatureArrays

_LAYERS = {"rnn": "SimpleRNN", "lstm": "LSTM", "gru": "GRU"}


def network(keras, features: FeatureArrays, n_outputs: int, attributes: dict[str, Any]):
    """The inputs (named as :meth:`FeatureArrays.inputs` names them) and ``n_outputs`` raw
    scores."""
    inputs: dict[str, Any] = {}
    parts = []
    for name, _, block in features.number_inputs():
        inputs[name] = keras.Input(shape=(block.shape[1],), name=name)
        normalize = keras.layers.Normalization()
        normalize.adapt(block)
        parts.append(normalize(inputs[name]))
    sequences = 0
    for i, category in enumerate(features.categoricals):
        ids = inputs[f"ids_{i}"] = keras.Input(shape=(None,), dtype="int32", name=f"ids_{i}")
        weights = inputs[f"weights_{i}"] = keras.Input(shape=(None,), name=f"weights_{i}")
        if category.encoding == "embedding":
            sequences += 1
            parts.append(
                _recurrent(keras, category.buckets, category.dimension, ids, weights, attributes)
            )
        else:
            encode = keras.layers.CategoryEncoding(category.buckets, output_mode="count")
            parts.append(encode(ids, count_weights=weights))
    if not sequences:
        raise ModelError(
            "a sequence classifier reads an embedded sequence, but no feature is one",
            hint="add COLUMN EMBEDDING(SEQ_CATEGORY_ID(<column>, <buckets>), <dimension>)",
        )
    joined = parts[0] if len(parts) == 1 else keras.layers.Concatenate()(parts)
    hidden = keras.layers.Dense(attributes["model.hidden_size"], activation="relu")(joined)
    return inputs, keras.layers.Dense(n_outputs)(hidden)


def _recurrent(keras, buckets: int, dimension: int, ids, weights, attributes: dict[str, Any]):
    """The stacked recurrent layers' reading of one embedded sequence."""
    vectors = keras.layers.Embedding(buckets, dimension)(ids)
    present = keras.layers.ReLU(max_value=1.0)(keras.layers.Rescaling(1e9)(weights))
    present = keras.layers.Reshape((-1, 1))(present)
    sequence = keras.layers.Masking(0.0)(keras.layers.Multiply()([vectors, present]))
    layer = getattr(keras.layers, _LAYERS[attributes["model.model_type"]])
    units = attributes["model.stack_units"]
    for n, count in enumerate(units):
        recurrent = layer(count, return_sequences=n < len(units) - 1)
        if attributes["model.bidirectional"]:
            recurrent = keras.layers.Bidirectional(recurrent)
        sequence = recurrent(sequence)
    return sequence
