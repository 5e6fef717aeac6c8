"""SQLFlow's GCN in numpy: train on one graph, semi-supervised (the labels of
``model.train_ratio`` of the nodes, drawn with ``train.seed``, train it; those of
``model.eval_ratio`` more measure it), and score each row of a graph by its node.

A graph is scored whole: TO PREDICT's rows must come in one batch (``predict.batch_size``
rows, 65,536 by default), and a scorer refuses a second batch rather than score a part of a
graph without the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.metric_values import compute
from sqlml.metrics import TASKS, split_names
from sqlml.models.graph import network
from sqlml.models.graph.checks import gcn_document
from sqlml.models.graph.estimators import GRAPH_COLUMNS
from sqlml.models.graph.nodes import Graph, graph_of
from sqlml.models.store import StoredModel
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.labels import LabelEncoding

WARM_UP = 50  # epochs before early stopping may stop
PATIENCE = 10  # it stops when the evaluation loss exceeds its mean over this many epochs


def train(
    context: Context,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
    **ranking: np.ndarray,
) -> tuple[bytes, dict[str, Any]]:
    """Train on the graph of the rows (from the base model's weights, with ``base``)."""
    classes = len(labels.classes)
    given = attributes.get("model.nclass")
    if given is not None and given != classes:
        raise ModelError(
            f"model.nclass is {given}, but the LABEL column holds {classes} classes",
            hint=f"set model.nclass = {classes}, or leave it out",
        )
    columns = {name: attributes[name] for name in GRAPH_COLUMNS}
    graph = graph_of(features, columns)
    node_y = graph.node_labels(y)
    rng = np.random.default_rng(attributes["train.seed"])
    train_nodes, eval_nodes = _split(len(graph.ids), attributes, rng)
    if base is None:
        widths = [graph.x.shape[1], *[attributes["model.nhid"]] * (attributes["model.nlayer"] - 1)]
        layers = network.initial([*widths, classes], rng)
    else:
        layers = _layers(gcn_document(base.data), graph)
    layers, epochs = _fit(context, layers, graph, node_y, train_nodes, eval_nodes, attributes, rng)
    done = network.forward(layers, graph.x, graph.adjacency)
    metrics = {
        "loss": network.loss(layers, done, node_y, train_nodes, attributes["model.weight_decay"]),
        "train_accuracy": _accuracy(done.probabilities, node_y, train_nodes),
        **_validation(done.probabilities, node_y, eval_nodes, attributes),
    }
    document = {
        "columns": columns,
        "node_features": int(graph.x.shape[1]),
        "layers": [{"weights": w.tolist(), "bias": b.tolist()} for w, b in layers],
    }
    params = {
        "classes": classes,
        "nodes": len(graph.ids),
        "edges": graph.adjacency.edges,
        "train_nodes": len(train_nodes),
        "eval_nodes": len(eval_nodes),
        "epochs": epochs,
    }
    return json.dumps(document).encode(), {
        "params": params,
        "metrics": metrics,
        "column_types": features.column_types,
    }


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """Each row's class probabilities: its node's, the graph of the rows scored whole."""
    document = gcn_document(data)
    batches = 0

    def score(features: FeatureArrays, batch_size: int) -> np.ndarray:
        nonlocal batches
        batches += 1
        if batches > 1:
            raise ModelError(
                f"{metadata['estimator']} scores a graph whole, but the SELECT returns more "
                f"than one batch of {batch_size:,} rows",
                hint="raise predict.batch_size to the number of rows of the SELECT",
            )
        graph = graph_of(features, document["columns"], agreeing=False)
        layers = _layers(document, graph)
        context.reporter.advance(features.rows)
        return network.forward(layers, graph.x, graph.adjacency).probabilities[graph.row_node]

    return score


def _split(
    nodes: int, attributes: dict[str, Any], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The training and the evaluation nodes, drawn at random."""
    share, held = attributes["model.train_ratio"], attributes["model.eval_ratio"]
    if share + held > 1:
        raise ModelError(
            f"model.train_ratio ({share}) and model.eval_ratio ({held}) add up to more than 1",
            hint="lower one of them: they are shares of the same nodes",
        )
    order = rng.permutation(nodes)
    count = max(1, round(share * nodes))
    evaluated = min(round(held * nodes), nodes - count)
    return np.sort(order[:count]), np.sort(order[count : count + evaluated])


def _fit(
    context: Context,
    layers: list[network.Layer],
    graph: Graph,
    y: np.ndarray,
    train_nodes: np.ndarray,
    eval_nodes: np.ndarray,
    attributes: dict[str, Any],
    rng: np.random.Generator,
) -> tuple[list[network.Layer], int]:
    """The layers after ``model.epochs`` Adam steps, or fewer (early stopping); and the
    number of steps."""
    adam = network.Adam(layers, attributes["optimizer.learning_rate"])
    decay, dropout = attributes["model.weight_decay"], attributes["model.dropout"]
    stopping = attributes["model.early_stopping"] and len(eval_nodes) > 0
    losses: list[float] = []  # the evaluation nodes' cross-entropy after each epoch
    epoch = 0
    with context.reporter.stage("training", total=attributes["model.epochs"], unit="epochs"):
        for epoch in range(1, attributes["model.epochs"] + 1):
            context.token.check()
            done = network.forward(layers, graph.x, graph.adjacency, dropout, rng)
            grads = network.gradients(layers, done, graph.adjacency, y, train_nodes, decay)
            layers = adam.step(layers, grads)
            context.reporter.advance()
            if not stopping:
                continue
            done = network.forward(layers, graph.x, graph.adjacency)
            losses.append(network.loss(layers, done, y, eval_nodes, 0.0))
            if epoch > WARM_UP and losses[-1] > np.mean(losses[-PATIENCE - 1 : -1]):
                break
    return layers, epoch


def _layers(document: dict[str, Any], graph: Graph) -> list[network.Layer]:
    """The stored layers, checked to take the graph's node features."""
    width = graph.x.shape[1]
    if width != document["node_features"]:
        raise ModelError(
            f"the node features make {width} columns, but the model was trained on "
            f"{document['node_features']}",
            hint="select the node features the model was trained on",
        )
    return [(np.array(layer["weights"]), np.array(layer["bias"])) for layer in document["layers"]]


def _accuracy(probabilities: np.ndarray, y: np.ndarray, nodes: np.ndarray) -> float:
    return float((probabilities[nodes].argmax(axis=1) == y[nodes]).mean())


def _validation(
    probabilities: np.ndarray, y: np.ndarray, nodes: np.ndarray, attributes: dict[str, Any]
) -> dict[str, float]:
    """TO EVALUATE's metrics and ``validation.metrics`` on the evaluation nodes, named
    ``validation_<metric>`` (those the nodes leave undefined left out); none without them."""
    if not len(nodes):
        return {}
    names = [*TASKS["classifier"], *split_names(attributes.get("validation.metrics") or "")]
    found = compute("classifier", y[nodes], probabilities[nodes], names)
    return {f"validation_{name}": v for name, v in found.items() if np.isfinite(v)}
