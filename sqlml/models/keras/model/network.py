"""A Keras network: built from the features and attributes, compiled, fitted (cancellable,
stopping on divergence), saved in the ``.keras`` format and loaded in safe mode (no code
runs)."""

from __future__ import annotations

import contextlib
import io
import math
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from sqlml import imports
from sqlml.errors import ModelError
from sqlml.models.checks import MAX_MODEL_BYTES
from sqlml.models.keras.checks import (
    MAX_RATIO,
    SMALL_MEMBER,
    foreign,
    keras_archive,
    keras_error,
)
from sqlml.models.keras.estimators import (
    DEFAULT_OPTIMIZER,
    OPTIMIZERS,
    USER_MODEL_ATTRIBUTES,
)
from sqlml.models.store import StoredModel
from sqlml.runtime.cancel import Token
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays, check_column_types
from sqlml.runtime.labels import LabelEncoding


def details(params: dict[str, Any], history, features: FeatureArrays) -> dict[str, Any]:
    """What a training stores besides the model: its parameters, metrics and the types of
    the columns its features read."""
    return {"params": params, "metrics": _metrics(history), "column_types": features.column_types}


def compiled(
    keras,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None,
):
    """The compiled model to fit (the base model, or a new network for ``features``) and
    the parameters stored with it."""
    keras.utils.set_random_seed(attributes["train.seed"])
    classifier = labels.task == "classifier"
    if base is not None:
        check_column_types(features, base.metadata)
        params = base.metadata["params"]
        model = load(keras, base.data)
    elif classifier:
        params = {"n_classes": _n_classes(labels, attributes)}
        inputs, scores = _network(keras, features, params["n_classes"], attributes)
        model = keras.Model(inputs, keras.layers.Activation("softmax")(scores))
    else:
        params = {}
        outputs = 1 if y.ndim == 1 else y.shape[1]  # a time series' model.n_out values a row
        inputs, scores = _network(keras, features, outputs, attributes)
        # Outputs in the label's units: the network learns the standardised label.
        scale, offset = float(y.std(dtype=np.float64)) or 1.0, float(y.mean(dtype=np.float64))
        model = keras.Model(inputs, keras.layers.Rescaling(scale, offset)(scores))
    if base is None and attributes.get("architecture") == "custom":
        _check_built_in(keras, model, attributes["builder"])
    model.compile(
        optimizer=_optimizer(keras, attributes),
        loss="sparse_categorical_crossentropy" if classifier else "mean_squared_error",
        metrics=["accuracy"] if classifier else ["mae"],
    )
    return model, params


def trained(
    context: Context,
    keras,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None,
) -> tuple[Any, dict[str, Any]]:
    """A network of ``attributes`` (from the weights of ``base`` if given) fitted on the rows
    as :func:`fit` fits it, and its details; a :class:`ModelError` if the training diverged."""
    model, params = compiled(keras, features, y, labels, attributes, base)
    history = fit(
        context,
        keras,
        model,
        features.inputs(),
        y,
        epochs=attributes["train.epoch"],
        max_steps=attributes.get("train.max_steps"),
        batch_size=attributes["train.batch_size"],
    )
    return model, details(params, history, features)


def _optimizer(keras, attributes: dict[str, Any]):
    """The Keras optimizer ``model.optimizer`` names, with its ``optimizer.*`` arguments."""
    name = attributes.get("model.optimizer") or DEFAULT_OPTIMIZER
    arguments = {
        argument: attributes[f"optimizer.{argument}"]
        for argument in OPTIMIZERS[name]
        if attributes.get(f"optimizer.{argument}") is not None
    }
    return getattr(keras.optimizers, name)(attributes["optimizer.learning_rate"], **arguments)


def fit(
    context: Context,
    keras,
    model,
    *data: Any,
    epochs: int,
    max_steps: int | None = None,
    **options: Any,
):
    """``model.fit``, stopped between batches once ``context``'s token is cancelled, or after
    ``max_steps`` batches (0 or None: no limit); while its progress is shown, the first batch
    (which builds TensorFlow's graph of the network: seconds) is a stage of its own,
    ``compiling the network``, and then each epoch's loss and metrics go to the ``training``
    stage, named as the training's summary names them (the last epoch's are the stored
    ones)."""
    reporter = context.reporter
    callbacks = [_cancellation(keras, context.token), _divergence(keras)]
    if max_steps:
        callbacks.append(_step_limit(keras, max_steps))
    with contextlib.ExitStack() as stages:
        stages.enter_context(reporter.stage("compiling the network", unit=""))
        if reporter.shown():

            class EpochProgress(keras.callbacks.Callback):
                compiled = False

                def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
                    if not self.compiled:
                        self.compiled = True
                        stages.close()
                        stages.enter_context(
                            reporter.stage("training", total=epochs, unit="epochs")
                        )

                def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
                    reporter.advance(1, **_named(logs or {}))

            callbacks.append(EpochProgress())
        return model.fit(*data, epochs=epochs, verbose=0, callbacks=callbacks, **options)


def _cancellation(keras, token: Token):
    """A callback that stops fitting or predicting between batches once ``token`` (the
    statement's) is cancelled (:meth:`Token.check` raises out of Keras's loop)."""

    class Cancellation(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
            token.check()

        def on_predict_batch_end(self, batch: int, logs: dict | None = None) -> None:
            token.check()

    return Cancellation()


def _step_limit(keras, steps: int):
    """A callback that stops fitting after ``steps`` batches (SQLFlow's train.max_steps)."""

    class StepLimit(keras.callbacks.Callback):
        done = 0

        def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
            self.done += 1
            if self.done >= steps:
                self.model.stop_training = True

    return StepLimit()


def _divergence(keras):
    """A callback that stops fitting at the first NaN or infinite loss: the training
    diverged, and raises a :class:`ModelError` (nothing is saved)."""

    class Divergence(keras.callbacks.Callback):
        def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
            loss = float((logs or {}).get("loss", 0.0))
            if not math.isfinite(loss):
                raise _diverged(f"train_loss = {loss}")

    return Divergence()


def _diverged(shown: str) -> ModelError:
    return ModelError(
        f"the training diverged: {shown}; the model is not saved",
        hint="lower optimizer.learning_rate, or scale the features or LABEL values down",
    )


def predict_callbacks(context: Context, keras, rows: int, batch_size: int) -> list:
    """The cancellation callback and, while ``context``'s progress is shown, one that
    reports each predicted batch's rows."""
    reporter = context.reporter
    if not reporter.shown():
        return [_cancellation(keras, context.token)]

    class BatchProgress(keras.callbacks.Callback):
        def on_predict_batch_end(self, batch: int, logs: dict | None = None) -> None:
            reporter.advance(min(batch_size, rows - batch * batch_size))

    return [_cancellation(keras, context.token), BatchProgress()]


def _metrics(history) -> dict[str, float]:
    """The last epoch's loss and metrics; a :class:`ModelError` if one is NaN or infinite
    (the training diverged): nothing is saved."""
    metrics = _named({name: values[-1] for name, values in history.history.items()})
    bad = {name: value for name, value in metrics.items() if not math.isfinite(value)}
    if bad:
        raise _diverged(", ".join(f"{name} = {value}" for name, value in bad.items()))
    return metrics


def _named(logs: dict[str, Any]) -> dict[str, float]:
    """An epoch's loss and metrics as the training stores them: ``train_<name>``."""
    return {f"train_{name}": float(value) for name, value in logs.items()}


def saved(model) -> bytes:
    """The model in the ``.keras`` format."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.keras"
        model.save(path)
        return path.read_bytes()


def _n_classes(labels: LabelEncoding, attributes: dict[str, Any]) -> int:
    """``model.n_classes``, or the number of classes of the label when it is omitted."""
    given, found = attributes.get("model.n_classes"), len(labels.classes)
    if given is not None and given < found:
        raise ModelError(
            f"model.n_classes is {given}, but the label has {found} classes",
            hint=f"set model.n_classes = {found} or leave it out",
        )
    return given or found


def _network(keras, features: FeatureArrays, n_outputs: int, attributes: dict[str, Any]):
    """The estimator's network: the feature inputs, and its ``n_outputs`` raw scores.

    ``architecture``: "dnn" (dense layers), "linear" (one dense layer, no activation),
    "dnn_linear_combined" (the sum of a linear part and a dense network, each over the
    features meant for it) or "custom" (the user's ``builder``).
    """
    architecture = attributes.get("architecture", "dnn")  # IR of older versions: DNNClassifier
    if architecture == "rnn":  # the sequence classifiers
        from sqlml.models.keras.rnn import network

        return network(keras, features, n_outputs, attributes)
    if architecture == "series":  # the time-series regressors
        from sqlml.models.keras.series import network

        return network(keras, features, n_outputs, attributes)
    inputs, parts = _inputs(keras, features)
    if architecture == "dnn":
        outputs = _dnn(keras, _joined(keras, parts), n_outputs, attributes, "model.")
    elif architecture == "linear":
        outputs = keras.layers.Dense(n_outputs)(_joined(keras, parts))
    elif architecture == "dnn_linear_combined":
        wide = keras.layers.Dense(n_outputs)(_joined(keras, parts, "linear"))
        deep = _dnn(keras, _joined(keras, parts, "dnn"), n_outputs, attributes, "model.dnn_")
        outputs = keras.layers.Add()([wide, deep])
    else:
        outputs = _user_outputs(keras, _joined(keras, parts), n_outputs, attributes)
    return inputs, outputs


def _inputs(keras, features: FeatureArrays) -> tuple[dict[str, Any], list[tuple[str | None, Any]]]:
    """The Keras inputs of the features, and each input's processed tensor with its target.

    Numbers are normalised with the training data's statistics; categories embedded or
    one-hot encoded. Only built-in layers, so the model loads in safe mode. An embedding is
    the weighted sum of its row's id vectors (``Dot`` with the weights, which carry the
    combiner).
    """
    inputs, parts = {}, []
    for name, target, block in features.number_inputs():
        inputs[name] = keras.Input(shape=(block.shape[1],), name=name)
        normalize = keras.layers.Normalization()
        normalize.adapt(block)
        parts.append((target, normalize(inputs[name])))
    for i, category in enumerate(features.categoricals):
        ids = inputs[f"ids_{i}"] = keras.Input(shape=(None,), dtype="int32", name=f"ids_{i}")
        weights = inputs[f"weights_{i}"] = keras.Input(shape=(None,), name=f"weights_{i}")
        if category.encoding == "embedding":
            vectors = keras.layers.Embedding(
                category.buckets, category.dimension, embeddings_initializer=category.initializer
            )(ids)
            encoded = keras.layers.Dot(axes=1)([weights, vectors])
        else:
            encode = keras.layers.CategoryEncoding(category.buckets, output_mode="count")
            encoded = encode(ids, count_weights=weights)
        parts.append((features.targets[category.feature], encoded))
    return inputs, parts


def _joined(keras, parts: list[tuple[str | None, Any]], target: str | None = None):
    """The processed inputs meant for ``target`` (all without one), side by side."""
    chosen = [tensor for feeds, tensor in parts if target is None or feeds in (None, target)]
    return chosen[0] if len(chosen) == 1 else keras.layers.Concatenate()(chosen)


def _dnn(keras, hidden, n_outputs: int, attributes: dict[str, Any], prefix: str):
    """Dense layers as ``<prefix>hidden_units``, ``activation`` and ``dropout`` say, each
    batch-normalised with ``model.batch_norm``."""
    for units in attributes[f"{prefix}hidden_units"]:
        hidden = keras.layers.Dense(units, activation=attributes[f"{prefix}activation"])(hidden)
        if attributes[f"{prefix}dropout"]:
            hidden = keras.layers.Dropout(attributes[f"{prefix}dropout"])(hidden)
        if attributes.get("model.batch_norm"):
            hidden = keras.layers.BatchNormalization()(hidden)
    return keras.layers.Dense(n_outputs)(hidden)


def _user_outputs(keras, features, n_outputs: int, attributes: dict[str, Any]):
    """The raw scores of the user's model builder ``builder``, called with the processed
    features, ``n_outputs`` and the ``model.*`` attributes (without the prefix)."""
    path = attributes["builder"]
    module, _, function = path.rpartition(".")
    own = {
        name.removeprefix("model."): value
        for name, value in attributes.items()
        if name.startswith("model.") and name not in USER_MODEL_ATTRIBUTES
    }
    try:
        outputs = getattr(imports.load(module), function)(features, n_outputs, own)
        if isinstance(outputs, keras.Model):
            outputs = outputs(features)
    except Exception as error:  # the user's code: any error it raises
        raise ModelError(
            f"building the model with {path} failed: {type(error).__name__}: {error}",
            hint=_BUILDER_HINT,
        ) from None
    tensor = isinstance(outputs, keras.KerasTensor)
    if not tensor or tuple(outputs.shape[1:]) != (n_outputs,):
        got = f"shape {tuple(outputs.shape)}" if tensor else type(outputs).__name__
        raise ModelError(
            f"{path} must return the Keras tensor of {n_outputs} scores per row, got {got}",
            hint=_BUILDER_HINT,
        )
    return outputs


_BUILDER_HINT = (
    "a user model is a function (features, n_outputs, attributes) returning the Keras tensor "
    "of n_outputs raw scores computed from features (or a keras.Model taking features)"
)


def _check_built_in(keras, model, path: str) -> None:
    """A :class:`ModelError` if the model holds anything but Keras's own layers and functions:
    it could not be loaded without running the user's code."""
    found = foreign(keras.saving.serialize_keras_object(model))
    if found:
        raise ModelError(
            f"the model built by {path} holds {found}, which cannot be loaded without running code",
            hint="build it from Keras's own layers only (no Lambda, no custom classes)",
        )


def load(keras, data: bytes):
    """A stored model, loaded in safe mode: no code in it runs.

    The archive and its configuration are checked first (:func:`keras_archive`), then its
    weights (:func:`_check_weights`); Keras gets a new archive of the checked members only.
    """
    archive = keras_archive(data)
    with zipfile.ZipFile(io.BytesIO(archive)) as members:
        _check_weights(members.read("model.weights.h5"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.keras"
        path.write_bytes(archive)
        try:
            return keras.saving.load_model(path, compile=False, safe_mode=True)
        except Exception as error:  # Keras reports a bad archive with many exception types
            raise keras_error(f"{type(error).__name__}: {error}") from None


def _check_weights(weights: bytes) -> None:
    """A :class:`ModelError` unless the weights file is plain HDF5 as Keras writes it: no
    links to other files or places, no external or virtual data, and datasets whose size
    is at most what they store times :data:`MAX_RATIO` (a small file must not inflate)."""
    h5py = imports.load("h5py")
    problems: list[str] = []
    total = 0

    def visit(name: str, link: Any) -> None:
        nonlocal total
        if not isinstance(link, h5py.HardLink):
            problems.append(f"{name} is a link")
            return
        item = file[name]
        if isinstance(item, h5py.Dataset):
            stored = item.id.get_storage_size()
            if (
                item.is_virtual
                or item.external
                or item.nbytes > max(SMALL_MEMBER, MAX_RATIO * stored)
            ):
                problems.append(f"{name} holds {item.nbytes:,} bytes in {stored:,}")
            total += item.nbytes

    try:
        with h5py.File(io.BytesIO(weights), "r") as file:
            file.visititems_links(visit)
    except (OSError, ValueError, KeyError) as error:
        raise keras_error(f"its weights are not readable HDF5 ({error})") from None
    if total > MAX_MODEL_BYTES:
        problems.append(f"the weights hold {total:,} bytes")
    if problems:
        raise keras_error(f"its weights file is not one Keras writes: {problems[0]}")
