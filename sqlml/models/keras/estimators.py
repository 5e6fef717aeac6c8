"""The Keras estimators and their attributes, and those of a user's model builder."""

from __future__ import annotations

from sqlml.models.attributes import MAX_CLASSES, schema
from sqlml.models.estimator import Estimator
from sqlml.semantics.attributes import Attr

# Sane maximums: a model beyond them would not fit in memory or in the model store (1 GiB),
# or diverges at once.
MAX_UNITS = 10_000  # of a hidden layer: two such layers hold 10^8 weights (400 MB)
MAX_LEARNING_RATE = 10.0

_COMMON = (
    Attr("train.epoch", "int", 10, "passes over the training data", minimum=1),
    Attr("train.batch_size", "int", 32, "rows per gradient step", minimum=1),
    Attr("train.seed", "int", 0, "random seed for weights and shuffling", minimum=0),
    Attr(
        "optimizer.learning_rate",
        "float",
        0.01,
        "Adam learning rate",
        minimum=0,
        maximum=MAX_LEARNING_RATE,
        exclusive_minimum=True,
    ),
)

_ACTIVATIONS = ("relu", "tanh", "sigmoid", "elu", "gelu", "selu")


def _dnn(prefix: str = "") -> tuple[Attr, ...]:
    """The hidden layers' attributes: ``model.<prefix>hidden_units`` and the like."""
    return (
        Attr(
            f"model.{prefix}hidden_units",
            "int list",
            [64, 32],
            "units of each hidden layer",
            minimum=1,
            maximum=MAX_UNITS,
            architecture=True,
        ),
        Attr(
            f"model.{prefix}activation",
            "string",
            "relu",
            "activation of the hidden layers",
            choices=_ACTIVATIONS,
            architecture=True,
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


def _keras(name: str, task: str, doc: str, architecture: str, *attrs: Attr) -> Estimator:
    return Estimator(
        name,
        "keras",
        task,
        schema(*attrs, *_COMMON, parameter_servers=True),
        doc,
        {"architecture": architecture},
        inputs=_COMBINED_INPUTS if architecture == "dnn_linear_combined" else {},
    )


ESTIMATORS = (
    _keras(
        "DNNClassifier",
        "classifier",
        "a fully connected neural network classifier (Keras)",
        "dnn",
        _N_CLASSES,
        *_dnn(),
    ),
    _keras(
        "DNNRegressor",
        "regressor",
        "a fully connected neural network regressor, trained on the mean squared error (Keras)",
        "dnn",
        *_dnn(),
    ),
    _keras(
        "LinearClassifier",
        "classifier",
        "a linear (multinomial logistic) classifier over the features (Keras)",
        "linear",
        _N_CLASSES,
    ),
    _keras(
        "LinearRegressor",
        "regressor",
        "a linear regressor over the features, trained on the mean squared error (Keras)",
        "linear",
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
    ),
    _keras(
        "DNNLinearCombinedRegressor",
        "regressor",
        "a wide and deep regressor: a linear part over the features COLUMN ... FOR "
        "linear_feature_columns, a network over those FOR dnn_feature_columns; features "
        "without FOR feed both (Keras)",
        "dnn_linear_combined",
        *_dnn("dnn_"),
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
