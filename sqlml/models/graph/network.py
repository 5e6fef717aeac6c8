"""A graph convolutional network (Kipf and Welling) in numpy, forward and backward by hand.

Each layer is ``Â (dropout(h) W) + b``, with ``Â`` the normalised adjacency; ReLU after the
hidden layers, softmax after the last. Training is full batch: the cross-entropy of the
training nodes plus ``weight_decay`` times the hidden layers' sums of squared weights, with
Adam's steps.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from sqlml.models.graph.nodes import Adjacency

Layer = tuple[np.ndarray, np.ndarray]  # weights (inputs x units), bias (units)


def initial(widths: list[int], rng: np.random.Generator) -> list[Layer]:
    """Layers between ``widths`` (inputs, hidden..., classes): Glorot-uniform weights, zero
    biases."""
    layers = []
    for inputs, units in itertools.pairwise(widths):
        limit = np.sqrt(6.0 / (inputs + units))
        layers.append((rng.uniform(-limit, limit, (inputs, units)), np.zeros(units)))
    return layers


@dataclass(frozen=True)
class Pass:
    """What a forward pass keeps for the backward one: each layer's (dropped-out) input, its
    dropout mask (None without dropout, and for the sparse features, whose gradient is not
    needed) and its output before the activation."""

    inputs: list[sparse.csr_array | np.ndarray]
    masks: list[np.ndarray | None]
    outputs: list[np.ndarray]
    probabilities: np.ndarray


def forward(
    layers: list[Layer],
    x: sparse.csr_array,
    adjacency: Adjacency,
    dropout: float = 0.0,
    rng: np.random.Generator | None = None,
) -> Pass:
    """The class probabilities of every node (with dropout when ``rng`` is given); the node
    features ``x`` are sparse (bags of words mostly are), dropped out where they are not 0."""
    drop = rng is not None and dropout > 0
    h: sparse.csr_array | np.ndarray = x
    if drop:
        h = x.copy()
        h.data *= (rng.random(x.nnz) >= dropout) / (1.0 - dropout)
    inputs, masks, outputs = [], [], []
    for number, (weights, bias) in enumerate(layers):
        mask = None
        if drop and number:
            mask = (rng.random(h.shape) >= dropout) / (1.0 - dropout)
            h = h * mask
        z = adjacency.propagate(h @ weights) + bias
        inputs.append(h)
        masks.append(mask)
        outputs.append(z)
        h = np.maximum(z, 0.0) if number < len(layers) - 1 else z
    return Pass(inputs, masks, outputs, softmax(h))


def loss(
    layers: list[Layer], done: Pass, y: np.ndarray, train: np.ndarray, weight_decay: float
) -> float:
    """The training nodes' mean cross-entropy plus the hidden layers' weight decay."""
    chosen = done.probabilities[train, y[train]]
    penalty = sum(float((weights**2).sum()) for weights, _ in layers[:-1])
    return float(-np.log(np.clip(chosen, 1e-15, 1.0)).mean()) + weight_decay * penalty


def gradients(
    layers: list[Layer],
    done: Pass,
    adjacency: Adjacency,
    y: np.ndarray,
    train: np.ndarray,
    weight_decay: float,
) -> list[Layer]:
    """The gradient of :func:`loss` with respect to each layer's weights and bias."""
    dz = np.zeros_like(done.probabilities)
    dz[train] = done.probabilities[train]
    dz[train, y[train]] -= 1.0
    dz /= len(train)
    found: list[Layer] = []
    for number in range(len(layers) - 1, -1, -1):
        weights, _ = layers[number]
        spread = adjacency.propagate(dz)  # Â is symmetric: its own transpose
        dw = done.inputs[number].T @ spread
        if number < len(layers) - 1:
            dw += 2.0 * weight_decay * weights
        found.append((dw, dz.sum(axis=0)))
        if number:
            dh = spread @ weights.T
            mask = done.masks[number]
            if mask is not None:
                dh *= mask
            dz = dh * (done.outputs[number - 1] > 0)
    return found[::-1]


class Adam:
    """Adam's steps (Kingma and Ba) on a list of layers."""

    def __init__(self, layers: list[Layer], learning_rate: float) -> None:
        self.rate = learning_rate
        self.steps = 0
        self.first = [(np.zeros_like(w), np.zeros_like(b)) for w, b in layers]
        self.second = [(np.zeros_like(w), np.zeros_like(b)) for w, b in layers]

    def step(self, layers: list[Layer], grads: list[Layer]) -> list[Layer]:
        """The layers moved one step against ``grads``."""
        self.steps += 1
        beta1, beta2, epsilon = 0.9, 0.999, 1e-8
        rate = self.rate * np.sqrt(1 - beta2**self.steps) / (1 - beta1**self.steps)
        moved: list[Layer] = []
        for i, (layer, grad) in enumerate(zip(layers, grads, strict=True)):
            pairs = []
            for j in range(2):
                m = beta1 * self.first[i][j] + (1 - beta1) * grad[j]
                v = beta2 * self.second[i][j] + (1 - beta2) * grad[j] ** 2
                pairs.append((m, v, layer[j] - rate * m / (np.sqrt(v) + epsilon)))
            self.first[i] = (pairs[0][0], pairs[1][0])
            self.second[i] = (pairs[0][1], pairs[1][1])
            moved.append((pairs[0][2], pairs[1][2]))
        return moved


def softmax(z: np.ndarray) -> np.ndarray:
    """Each row's softmax."""
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
