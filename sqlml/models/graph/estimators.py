"""The graph estimator: SQLFlow's model zoo GCN, a graph convolutional network trained on
one graph, semi-supervised (:mod:`.model`), with SQLFlow's attributes."""

from __future__ import annotations

import dataclasses

from sqlml.models.attributes import VALIDATION
from sqlml.models.estimator import MATRIX_FEATURE_KINDS, Estimator
from sqlml.semantics.attributes import Attr, not_applied

MAX_HIDDEN = 4_096  # units of a hidden layer
MAX_LAYERS = 10

# The columns that hold the graph, by the attribute naming each, with SQLFlow's defaults.
GRAPH_COLUMNS = {
    "model.id_col": "id",
    "model.from_node_col": "from_node_id",
    "model.to_node_col": "to_node_id",
}

_GCN = (
    Attr(
        "model.nhid",
        "int",
        16,
        "units of each hidden graph convolution",
        minimum=1,
        maximum=MAX_HIDDEN,
        architecture=True,
    ),
    Attr(
        "model.nclass",
        "int",
        None,
        "number of classes (the output's width); the LABEL's classes decide it, so given, it "
        "must equal their number",
        minimum=2,
        architecture=True,
    ),
    Attr(
        "model.nlayer",
        "int",
        2,
        "graph convolutions: nlayer - 1 hidden ones (ReLU) and the output one (softmax)",
        minimum=2,
        maximum=MAX_LAYERS,
        architecture=True,
    ),
    Attr("model.epochs", "int", 200, "full-batch Adam steps", minimum=1, maximum=100_000),
    Attr(
        "model.train_ratio",
        "float",
        0.15,
        "share of the nodes whose labels train the model (drawn with train.seed)",
        minimum=0,
        maximum=1,
        exclusive_minimum=True,
    ),
    Attr(
        "model.eval_ratio",
        "float",
        0.2,
        "share of the nodes, others than the training ones, that measure it (the "
        "validation_* metrics); 0: none",
        minimum=0,
        maximum=1,
    ),
    Attr(
        "model.early_stopping",
        "bool",
        True,
        "after 50 epochs, stop once the evaluation nodes' loss exceeds its mean over the 10 "
        "epochs before",
    ),
    Attr(
        "model.dropout",
        "float",
        0.5,
        "share of the inputs of each graph convolution dropped while training",
        minimum=0,
        maximum=1,
    ),
    Attr(
        "model.weight_decay",
        "float",
        5e-4,
        "L2 penalty (times the sum of squares) on the hidden convolutions' weights",
        minimum=0,
    ),
    Attr(
        "optimizer.learning_rate",
        "float",
        0.01,
        "Adam's learning rate",
        minimum=0,
        maximum=10,
        exclusive_minimum=True,
    ),
    Attr("train.seed", "int", 0, "seed of the weights, the dropout and the node split", minimum=0),
    *(
        Attr(name, "string", column, f"the column holding {what}")
        for (name, column), what in zip(
            GRAPH_COLUMNS.items(),
            ("each node's id", "the id of an edge's first node", "the id of its second node"),
            strict=True,
        )
    ),
    not_applied(
        "model.feature_col",
        "string",
        "SQLFlow: the column holding the node features",
        "every feature but the id and edge columns is a node feature",
    ),
    not_applied(
        "validation.split",
        "float",
        "the share of rows held out",
        "the GCN holds out model.eval_ratio of the nodes, not rows of the join",
        minimum=0,
        maximum=0.9,
    ),
)

_METRICS = dataclasses.replace(
    next(attr for attr in VALIDATION if attr.name == "validation.metrics"),
    doc="comma-separated metrics to compute on the evaluation nodes too, besides those of a "
    "classifier, under the names written: sqlml's (as TO EVALUATE's) or SQLFlow's "
    "scikit-learn and Keras names (accuracy_score, CategoricalAccuracy ...)",
)

ESTIMATORS = (
    Estimator(
        "sqlflow_models.GCN",
        "graph",
        "classifier",
        {attr.name: attr for attr in (*_GCN, _METRICS)},
        "graph convolutional network (numpy): classifies the nodes of a graph from their "
        "features and their neighbours', on a SELECT of nodes joined with their edges",
        fixed={"validation.split": 0.0, "validation.seed": 0},
        feature_kinds=MATRIX_FEATURE_KINDS,
        reads=tuple(GRAPH_COLUMNS),
    ),
)
