"""Shapley values of any model's output by permutation sampling: TO EXPLAIN's ShapleyExplainer.

A row's value of feature ``j`` is the average, over feature orders and background rows, of
how much the output moves when ``j`` takes the row's value, the features before ``j`` in the
order already taken from the row and the others still the background row's. In each order
the moves add up to ``f(row) - f(background row)``, so a row's values sum to
``f(row) - E[f]`` exactly, ``E[f]`` being the mean output over the background rows. With no
more orders than ``permutations``, all of them are used (exact Shapley values against the
background); else half are sampled and the other half are their reverses (antithetic). No
label is needed: the model's output is explained, not its loss.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from itertools import permutations as all_orders

import numpy as np

from sqlml.runtime.cancel import Token
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.progress import Progress

CHUNK = 100_000  # mixed rows scored at a time


def mixed(
    x: FeatureArrays,
    x_rows: np.ndarray,
    base: FeatureArrays,
    base_rows: np.ndarray,
    mask: np.ndarray,
) -> FeatureArrays:
    """Rows whose feature ``j`` is ``x``'s row where ``mask[:, j]``, else ``base``'s row."""
    numbers = np.where(mask[:, x.owners], x.numbers[x_rows], base.numbers[base_rows])
    categoricals = []
    for mine, theirs in zip(x.categoricals, base.categoricals, strict=True):
        chosen = mask[:, mine.feature][:, None]
        categoricals.append(
            replace(
                mine,
                ids=np.where(chosen, mine.ids[x_rows], theirs.ids[base_rows]),
                weights=np.where(chosen, mine.weights[x_rows], theirs.weights[base_rows]),
            )
        )
    return replace(x, numbers=numbers, categoricals=categoricals)


def orders(features: int, count: int, rows: int, rng: np.random.Generator) -> np.ndarray:
    """Feature orders per row (rows x orders x features): all of them when there are no more
    than ``count``, else ``count // 2`` sampled and their reverses."""
    if math.factorial(features) <= count:
        every = np.array(list(all_orders(range(features))), dtype=np.int64)
        return np.broadcast_to(every, (rows, *every.shape))
    half = np.argsort(rng.random((rows, count // 2, features)), axis=2)
    return np.concatenate([half, half[:, :, ::-1]], axis=1)


def shapley_values(
    output: Callable[[FeatureArrays], np.ndarray],
    x: FeatureArrays,
    background: FeatureArrays,
    permutations: int,
    seed: int,
    token: Token,
    reporter: Progress | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``x``, each feature's Shapley value of ``output`` (rows x outputs x
    features) and the expected output (per output) over the ``background`` rows.

    ``output``: the model's outputs (rows x outputs) for some rows. The rows are explained
    a few at a time (:data:`CHUNK` mixed rows scored): ``token`` is checked before each
    chunk, and its rows are reported to ``reporter``'s current stage (None: nowhere).
    """
    reporter = reporter or Progress()
    d, b = len(x.names), background.rows
    rng = np.random.default_rng(seed)
    order = orders(d, permutations, x.rows, rng)
    p = order.shape[1]
    rank = np.argsort(order, axis=2)  # position of each feature in each order
    # per row, order and step k (0..d): which features come from the row
    taken = rank[:, :, None, :] < np.arange(d + 1)[None, None, :, None]
    expected = output(background).mean(axis=0)
    values = np.empty((x.rows, len(expected), d))
    per_row = p * (d + 1) * b
    step = max(1, CHUNK // per_row)
    for start in range(0, x.rows, step):
        token.check()
        rows = np.arange(start, min(start + step, x.rows))
        mask = np.repeat(taken[rows].reshape(-1, d), b, axis=0)
        x_rows = np.repeat(rows, per_row)
        base_rows = np.tile(np.arange(b), len(rows) * p * (d + 1))
        scores = output(mixed(x, x_rows, background, base_rows, mask))
        scores = scores.reshape(len(rows), p, d + 1, b, -1).mean(axis=3)
        moves = np.diff(scores, axis=2)  # (rows, orders, d, outputs): the k-th feature's move
        by_feature = np.take_along_axis(moves, rank[rows][..., None], axis=2)
        values[rows] = by_feature.mean(axis=1).transpose(0, 2, 1)
        reporter.advance(len(rows))
    return values, expected
