"""The Keras estimators and their attributes, and those of a user's model builder."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from sqlml.models.attributes import MAX_CLASSES, PAI_RESOURCES, schema
from sqlml.models.estimator import Estimator
from sqlml.models.keras.size import WHOLE, check_units
from sqlml.semantics.attributes import Attr, not_applied

# Sane maximums: a model beyond them would not fit in memory or in the model store (1 GiB),
# or diverges at once.
MAX_UNITS = 10_000  # of a hidden layer: two such layers hold 10^8 weights (400 MB); a
# network's layers together hold at most size.MAX_WEIGHTS
MAX_LEARNING_RATE = 10.0

DEFAULT_OPTIMIZER = "Adam"
DEFAULT_LEARNING_RATE = 0.01
# Keras's optimizers (keras.optimizers.<name>), each with its arguments besides learning_rate.
OPTIMIZERS: dict[str, tuple[str, ...]] = {
    "Adam": ("beta_1", "beta_2", "epsilon", "amsgrad"),
    "SGD": ("momentum", "nesterov"),
    "RMSprop": ("rho", "momentum", "epsilon", "centered"),
    "Adagrad": ("initial_accumulator_value", "epsilon"),
    "Adadelta": ("rho", "epsilon"),
    "Adamax": ("beta_1", "beta_2", "epsilon"),
    "Ftrl": (
        "learning_rate_power",
        "initial_accumulator_value",
        "l1_regularization_strength",
        "l2_regularization_strength",
        "l2_shrinkage_regularization_strength",
        "beta",
    ),
    "Nadam": ("beta_1", "beta_2", "epsilon"),
}
# Other names of them: TensorFlow 1's (SQLFlow on PAI), SQLFlow's spelling, lower case.
_OPTIMIZER_NAMES = {
    "AdagradOptimizer": "Adagrad",
    "AdamOptimizer": "Adam",
    "FtrlOptimizer": "Ftrl",
    "RMSPropOptimizer": "RMSprop",
    "RMSProp": "RMSprop",
    "GradientDescentOptimizer": "SGD",
    "GradientDescent": "SGD",
    "AdadeltaOptimizer": "Adadelta",
    **{name.lower(): name for name in OPTIMIZERS},
}
# The optimizers' arguments: type, doc and bounds.
_ARGUMENTS: dict[str, tuple[str, str, dict[str, float]]] = {
    "beta_1": ("float", "decay of the first moment estimates", {"minimum": 0, "maximum": 1}),
    "beta_2": ("float", "decay of the second moment estimates", {"minimum": 0, "maximum": 1}),
    "epsilon": ("float", "small constant for numerical stability", {"minimum": 0}),
    "amsgrad": ("bool", "use the AMSGrad variant", {}),
    "momentum": ("float", "momentum", {"minimum": 0}),
    "nesterov": ("bool", "use Nesterov momentum", {}),
    "rho": ("float", "decay of the moving average of squared gradients", {"minimum": 0}),
    "centered": ("bool", "normalise by the estimated variance of the gradient", {}),
    "initial_accumulator_value": ("float", "initial value of the accumulators", {"minimum": 0}),
    "learning_rate_power": ("float", "power of the learning rate decrease", {"maximum": 0}),
    "l1_regularization_strength": ("float", "L1 regularisation", {"minimum": 0}),
    "l2_regularization_strength": ("float", "L2 regularisation", {"minimum": 0}),
    "l2_shrinkage_regularization_strength": ("float", "L2 shrinkage", {"minimum": 0}),
    "beta": ("float", "Ftrl's beta", {"minimum": 0}),
}


def _optimizer(also: str | None = None) -> tuple[Attr, ...]:
    """``model.optimizer`` and its arguments ``optimizer.*``; ``also``: another prefix they
    are written under (``dnn_optimizer``: ``model.dnn_optimizer``, ``dnn_optimizer.*``)."""

    def aliases(name: str) -> tuple[str, ...]:
        return (name.replace("optimizer", also, 1),) if also else ()

    used_by = {
        argument: tuple(name for name, takes in OPTIMIZERS.items() if argument in takes)
        for argument in _ARGUMENTS
    }
    return (
        Attr(
            "model.optimizer",
            "string",
            None,
            f"the Keras optimizer, {DEFAULT_OPTIMIZER} when omitted (TensorFlow 1 names such as "
            "AdagradOptimizer or GradientDescentOptimizer are taken as Keras's); its arguments "
            "are optimizer.*",
            choices=tuple(OPTIMIZERS),
            renamed=_OPTIMIZER_NAMES,
            aliases=aliases("model.optimizer"),
        ),
        Attr(
            "optimizer.learning_rate",
            "float",
            DEFAULT_LEARNING_RATE,
            "the optimizer's learning rate",
            minimum=0,
            maximum=MAX_LEARNING_RATE,
            exclusive_minimum=True,
            aliases=aliases("optimizer.learning_rate"),
        ),
        *(
            Attr(
                f"optimizer.{argument}",
                kind,
                None,
                f"{doc} ({', '.join(used_by[argument])}); Keras's default when omitted",
                only_with=("model.optimizer", used_by[argument], DEFAULT_OPTIMIZER),
                aliases=aliases(f"optimizer.{argument}"),
                **bounds,
            )
            for argument, (kind, doc, bounds) in _ARGUMENTS.items()
        ),
    )


_TRAIN = (
    Attr("train.epoch", "int", 10, "passes over the training data", minimum=1),
    Attr("train.batch_size", "int", 32, "rows per gradient step", minimum=1),
    Attr("train.seed", "int", 0, "random seed for weights and shuffling", minimum=0),
    # SQLFlow's, for TensorFlow's estimators: taken, not applied.
    Attr(
        "train.max_steps",
        "int",
        None,
        "stop after this many gradient steps (batches), even within an epoch; 0: no limit",
        minimum=0,
    ),
    not_applied(
        "train.verbose",
        "int",
        "SQLFlow: how much the training logs",
        "sqlml reports each epoch to its progress display",
        minimum=0,
        maximum=2,
    ),
    not_applied(
        "train.save_checkpoints_steps",
        "int",
        "SQLFlow: steps between checkpoints",
        "sqlml saves the model once, trained",
        minimum=1,
    ),
    not_applied(
        "train.log_every_n_iter",
        "int",
        "SQLFlow: steps between log lines",
        "sqlml reports each epoch to its progress display",
        minimum=1,
    ),
    *(
        not_applied(
            f"validation.{name}",
            "int",
            f"SQLFlow: {doc}",
            "sqlml validates the model once, after training, on every validation row",
            minimum=0,
        )
        for name, doc in (
            ("steps", "batches of each validation"),
            ("start_delay_secs", "seconds before the first validation"),
            ("throttle_secs", "seconds between validations"),
        )
    ),
    *PAI_RESOURCES,
)
_COMMON = (*_TRAIN, *_optimizer())

_ACTIVATIONS = ("relu", "tanh", "sigmoid", "elu", "gelu", "selu")


def _dnn(prefix: str = "") -> tuple[Attr, ...]:
    """The hidden layers' attributes: ``model.<prefix>hidden_units`` and the like."""
    return (
        Attr(
            f"model.{prefix}hidden_units",
            "int list",
            [64, 32],
            f"units of each hidden layer; {WHOLE}",
            minimum=1,
            maximum=MAX_UNITS,
            architecture=True,
            whole=check_units,
        ),
        Attr(
            f"model.{prefix}activation",
            "string",
            "relu",
            "activation of the hidden layers",
            choices=_ACTIVATIONS,
            architecture=True,
            aliases=(f"model.{prefix}activation_fn",),
            renamed={f"tf.nn.{name}": name for name in _ACTIVATIONS},
        ),
        Attr(
            f"model.{prefix}dropout",
            "float",
            0.0,
            "dropout rate after each hidden layer",
            minimum=0,
            maximum=1,
            architecture=True,
        ),
    )


_BATCH_NORM = Attr(
    "model.batch_norm",
    "bool",
    None,
    "batch normalisation after each hidden layer",
    architecture=True,
)
_LABEL_DIMENSION = Attr(
    "model.label_dimension",
    "int",
    None,
    "values predicted per row: one (SQLFlow's default; sqlml's regressors predict one)",
    minimum=1,
    maximum=1,
    architecture=True,
)


def _sparse_combiner(name: str) -> Attr:
    return not_applied(
        name,
        "string",
        "SQLFlow: how the linear model combines a categorical column's ids",
        "each categorical feature is combined as its feature column says (EMBEDDING's "
        "combiner; CATEGORY_ID, CATEGORY_HASH and INDICATOR sum their ids' weights)",
        choices=("mean", "sqrtn", "sum"),
    )


# The wide and deep estimators' optimizers: SQLFlow's model.dnn_optimizer trains the model.
_COMBINED_OPTIMIZERS = (
    *_optimizer("dnn_optimizer"),
    not_applied(
        "model.linear_optimizer",
        "string",
        "SQLFlow: the optimizer of the linear part (its arguments: linear_optimizer.*)",
        "one optimizer, model.dnn_optimizer (or model.optimizer), trains the whole model",
    ),
    *(
        not_applied(
            f"linear_optimizer.{argument}",
            kind,
            f"SQLFlow: the linear part's optimizer's {doc}",
            "one optimizer, model.dnn_optimizer (or model.optimizer), trains the whole model",
        )
        for argument, (kind, doc, _) in {
            "learning_rate": ("float", "learning rate", {}),
            **_ARGUMENTS,
        }.items()
    ),
)

_N_CLASSES = Attr(
    "model.n_classes",
    "int",
    None,
    "number of classes; inferred from the label when omitted",
    minimum=2,
    maximum=MAX_CLASSES,
    architecture=True,
)

# COLUMN ... FOR of the DNNLinearCombined estimators: SQLFlow's names and short ones.
_COMBINED_INPUTS = {
    "linear_feature_columns": "linear",
    "dnn_feature_columns": "dnn",
    "linear": "linear",
    "dnn": "dnn",
}


# SQLFlow's first releases passed unprefixed WITH attributes to the estimator's constructor
# (n_classes = 3, hidden_units = [10, 20]); its design documents also write layers for the
# hidden units and learning_rate for the optimizer's.
_FORMER = {"model.hidden_units": ("layers",), "optimizer.learning_rate": ("learning_rate",)}


def _former(attr: Attr) -> Attr:
    """``attr``, taken under SQLFlow's older names too: a ``model.*`` one (and its aliases)
    unprefixed, and those of :data:`_FORMER`."""
    written = (attr.name, *attr.aliases)
    names = tuple(name.removeprefix("model.") for name in written if name.startswith("model."))
    names += _FORMER.get(attr.name, ())
    return dataclasses.replace(attr, former=names) if names else attr


def _keras(name: str, task: str, doc: str, architecture: str, *attrs: Attr) -> Estimator:
    combined = architecture == "dnn_linear_combined"
    optimizers = _COMBINED_OPTIMIZERS if combined else _optimizer()
    return Estimator(
        name,
        "keras",
        task,
        schema(*map(_former, (*attrs, *_TRAIN, *optimizers)), parameter_servers=True),
        doc,
        {"architecture": architecture},
        inputs=_COMBINED_INPUTS if combined else {},
    )


ESTIMATORS = (
    _keras(
        "DNNClassifier",
        "classifier",
        "a fully connected neural network classifier (Keras)",
        "dnn",
        _N_CLASSES,
        *_dnn(),
        _BATCH_NORM,
    ),
    _keras(
        "DNNRegressor",
        "regressor",
        "a fully connected neural network regressor, trained on the mean squared error (Keras)",
        "dnn",
        *_dnn(),
        _BATCH_NORM,
        _LABEL_DIMENSION,
    ),
    _keras(
        "LinearClassifier",
        "classifier",
        "a linear (multinomial logistic) classifier over the features (Keras)",
        "linear",
        _N_CLASSES,
        _sparse_combiner("model.sparse_combiner"),
    ),
    _keras(
        "LinearRegressor",
        "regressor",
        "a linear regressor over the features, trained on the mean squared error (Keras)",
        "linear",
        _LABEL_DIMENSION,
        _sparse_combiner("model.sparse_combiner"),
    ),
    _keras(
        "DNNLinearCombinedClassifier",
        "classifier",
        "a wide and deep classifier: a linear part over the features COLUMN ... FOR "
        "linear_feature_columns, a network over those FOR dnn_feature_columns; features "
        "without FOR feed both (Keras)",
        "dnn_linear_combined",
        _N_CLASSES,
        *_dnn("dnn_"),
        _BATCH_NORM,
        _sparse_combiner("model.linear_sparse_combiner"),
    ),
    _keras(
        "DNNLinearCombinedRegressor",
        "regressor",
        "a wide and deep regressor: a linear part over the features COLUMN ... FOR "
        "linear_feature_columns, a network over those FOR dnn_feature_columns; features "
        "without FOR feed both (Keras)",
        "dnn_linear_combined",
        *_dnn("dnn_"),
        _BATCH_NORM,
        _LABEL_DIMENSION,
        _sparse_combiner("model.linear_sparse_combiner"),
    ),
)

# A user's model builder takes these; its own model.* attributes pass to it unchecked.
USER_MODEL_ATTRIBUTES = schema(
    Attr(
        "model.n_classes",
        "int",
        None,
        "number of classes; when given, the model is a classifier even of numeric labels",
        minimum=2,
        maximum=MAX_CLASSES,
        architecture=True,
    ),
    *_COMMON,
    parameter_servers=True,
)


def builder_estimator(name: str) -> Estimator:
    """The estimator of the user's model builder ``name`` (``module.function``)."""
    return Estimator(
        name,
        "keras",
        "auto",
        USER_MODEL_ATTRIBUTES,
        f"a Keras model built by {name}",
        {"architecture": "custom", "builder": name},
        open_prefix="model.",
        classes_attribute="model.n_classes",
    )


# SQLFlow's model zoo (sqlflow_models.*) names of networks sqlml's own estimators train: each
# trains the estimator named, with a warning of what differs.
def _zoo(name: str, trains: str, instead: str) -> Estimator:
    from dataclasses import replace  # here: the module's head is the attributes' part

    own = next(estimator for estimator in ESTIMATORS if estimator.name == trains)
    return replace(
        own,
        name=f"sqlflow_models.{name}",
        doc=f"SQLFlow's model zoo {name}, trained as sqlml's {trains}: {own.doc}",
        instead=f"sqlml trains its {trains} instead: {instead}",
    )


# sqlflow_models.AutoClassifier's search (:mod:`sqlml.models.keras.model.tuning`): each network
# with each learning rate. One narrow layer, sqlml's default network, two wide layers; Adam's
# rates from careful to fast (a short training of few rows needs a fast one, a long one of
# many rows a careful one).
AUTO_GRID: dict[str, tuple[Any, ...]] = {
    "model.hidden_units": ([16], [64, 32], [100, 100]),
    "optimizer.learning_rate": (0.003, 0.01, 0.1),
}


def _auto_classifier() -> Estimator:
    """sqlflow_models.AutoClassifier: DNNClassifier's attributes, of which those the search
    varies have no default (given, they are not searched)."""
    from dataclasses import replace

    own = _zoo(
        "AutoClassifier",
        "DNNClassifier",
        "a grid of its networks (model.hidden_units x optimizer.learning_rate), the one of "
        "least validation loss kept, where the zoo's AdaNet grows an ensemble of subnetworks",
    )
    searched = {
        name: replace(
            own.attributes[name],
            default=None,
            doc=f"{own.attributes[name].doc}; searched when omitted: "
            + ", ".join(json.dumps(value) for value in values),
        )
        for name, values in AUTO_GRID.items()
    }
    return replace(
        own,
        attributes={**own.attributes, **searched},
        doc="SQLFlow's model zoo AutoClassifier, a search of networks: sqlml trains a "
        "DNNClassifier of each model.hidden_units with each optimizer.learning_rate searched, "
        "train.epoch epochs each, and keeps the one of least validation loss (cross-entropy) "
        "on the validation rows (with validation.split = 0, on a fifth of the training rows "
        "held out for the choice, then retrained on all of them) (Keras)",
        fixed={"architecture": "auto"},
    )


ESTIMATORS += (
    _zoo(
        "DNNClassifier",
        "DNNClassifier",
        "hidden layers with model.activation (relu) and Adam, where the zoo's are linear and "
        "trained with Adagrad",
    ),
    _zoo(
        "DNNRegressor",
        "DNNRegressor",
        "hidden layers with model.activation (relu) and Adam, where the zoo's are linear",
    ),
    _zoo(
        "dnnclassifier_functional_model",
        "DNNClassifier",
        "the same dense layers as the zoo's example, with model.activation (relu) and Adam",
    ),
    _auto_classifier(),
    _zoo(
        "ScoreCard",
        "LinearClassifier",
        "a logistic regression on the features, without the score card's binning into "
        "weights of evidence",
    ),
)


def _sequence_classifier(name: str, doc: str, model_type: str, bidirectional: bool) -> Estimator:
    """A classifier of embedded sequences (:mod:`sqlml.models.keras.rnn`)."""
    return _keras(
        f"sqlflow_models.{name}",
        "classifier",
        doc,
        "rnn",
        _N_CLASSES,
        Attr(
            "model.stack_units",
            "int list",
            [32],
            f"units of each stacked recurrent layer; {WHOLE}",
            minimum=1,
            maximum=MAX_UNITS,
            architecture=True,
            whole=check_units,
        ),
        Attr(
            "model.hidden_size",
            "int",
            64,
            "units of the dense ReLU layer after them",
            minimum=1,
            maximum=MAX_UNITS,
            architecture=True,
        ),
        Attr(
            "model.model_type",
            "string",
            model_type,
            "the recurrent layer: rnn (SimpleRNN), lstm or gru",
            choices=("rnn", "lstm", "gru"),
            architecture=True,
        ),
        Attr(
            "model.bidirectional",
            "bool",
            bidirectional,
            "read each sequence both ways",
            architecture=True,
        ),
    )


ESTIMATORS += (
    _sequence_classifier(
        "StackedRNNClassifier",
        "stacked recurrent layers over embedded sequences, then a dense layer (Keras)",
        "rnn",
        False,
    ),
    _sequence_classifier(
        "StackedBiLSTMClassifier",
        "stacked bidirectional LSTM layers over embedded sequences, then a dense layer (Keras)",
        "lstm",
        True,
    ),
)


def _series_regressor(name: str, model_type: str) -> Estimator:
    """A regressor of a window of past values (:mod:`sqlml.models.keras.series`)."""
    return _keras(
        f"sqlflow_models.{name}",
        "regressor",
        "stacked recurrent layers over a window of model.n_in past steps (the numeric "
        "columns), predicting the next model.n_out values (Keras)",
        "series",
        Attr(
            "model.stack_units",
            "int list",
            [500, 500],
            f"units of each stacked recurrent layer; {WHOLE}",
            minimum=1,
            maximum=MAX_UNITS,
            architecture=True,
            whole=check_units,
        ),
        Attr(
            "model.n_in",
            "int",
            7,
            "past steps a row holds (its numeric columns: n_in x n_features, step by step)",
            minimum=1,
            architecture=True,
        ),
        Attr(
            "model.n_out",
            "int",
            1,
            "future values predicted a row: one, a numeric LABEL; more, a LABEL of as many "
            "comma-separated numbers (concat(a, ',', b) AS label), which TO PREDICT writes "
            "back as such a text",
            minimum=1,
            maximum=MAX_UNITS,
            architecture=True,
        ),
        Attr(
            "model.n_features",
            "int",
            1,
            "values of each past step",
            minimum=1,
            architecture=True,
        ),
        Attr(
            "model.model_type",
            "string",
            model_type,
            "the recurrent layer: rnn (SimpleRNN), lstm or gru",
            choices=("rnn", "lstm", "gru"),
            architecture=True,
        ),
    )


ESTIMATORS += (
    _series_regressor("RNNBasedTimeSeriesModel", "rnn"),
    _series_regressor("LSTMBasedTimeSeriesModel", "lstm"),
)
