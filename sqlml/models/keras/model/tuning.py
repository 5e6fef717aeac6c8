"""sqlflow_models.AutoClassifier: a small search of fully connected networks, in-process.

The candidates are the points of the grid :data:`AUTO_GRID` over the attributes the statement
leaves out (a given ``model.hidden_units`` or ``optimizer.learning_rate`` is not searched),
enumerated as the hyperparameter search enumerates a grid (:func:`sqlml.search_space.plan`).
Each is a DNNClassifier trained ``train.epoch`` epochs on the training rows, seeded with
``train.seed`` (the same draws whatever the order); the one of least validation loss (the
cross-entropy of its class probabilities) wins, the first on a tie. The rows that choose:

- the statement's validation rows (``validation.split``'s held-out rows, or
  ``validation.select``'s): the winner is kept as trained, and the validation metrics stored
  with it are measured on the rows that chose it;
- without any (``validation.split = 0``): :data:`CHOICE_SHARE` of the training rows of each
  class, drawn with ``validation.seed``, held out for the choice only (a class too small to
  spare one is an error); the winner is then trained again, on every training row.

With both attributes given there is one candidate, trained as it is.

A candidate that diverges is recorded and passed over. The stored attributes hold the
winner's values; ``network_search`` the candidates, their validation losses and the winner.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.models.keras.estimators import AUTO_GRID, DEFAULT_LEARNING_RATE
from sqlml.models.keras.model import network
from sqlml.models.store import StoredModel
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.in_memory import split
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.rows import SCORE_BATCH
from sqlml.search_space import grid_points, plan

CHOICE_SHARE = 0.2  # of the training rows, held out for the choice without validation rows
_SMALLEST_PROBABILITY = 1e-7  # a probability of 0 would make the loss infinite

Rows = tuple[FeatureArrays, np.ndarray]


def candidates(attributes: dict[str, Any], grid: dict[str, tuple[Any, ...]]) -> list[dict]:
    """Each candidate's values, in order: the points of ``grid`` over the attributes that
    ``attributes`` leave out (None); one empty candidate when every one is given."""
    space = {
        name: {"kind": "choice", "values": list(values)}
        for name, values in grid.items()
        if attributes.get(name) is None
    }
    return plan(space, "grid", grid_points(space), 0)


def search(
    context: Context,
    keras,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    validation: Rows | None,
    grid: dict[str, tuple[Any, ...]] = AUTO_GRID,
) -> tuple[bytes, dict[str, Any]]:
    """Train every candidate, keep the one of least validation loss: the model's bytes and
    details, with the winner's values in ``attributes`` and the search in ``network_search``.

    Reports each candidate to ``context``'s reporter and checks its token between them.
    """
    points = candidates(attributes, grid)
    if len(points) == 1:  # every searched attribute given: nothing to choose
        model, details = _trained(context, keras, features, y, labels, attributes)
        return network.saved(model), {
            **details,
            "network_search": {"winner": 0, "candidates": points},
        }
    if validation is not None:
        train_x, train_y, (held_x, held_y) = features, y, validation
        chosen_on = {"rows": "validation", "kept": "as trained"}
    else:
        kept, held = split(y, True, CHOICE_SHARE, attributes["validation.seed"])
        train_x, train_y = features.take(kept), y[kept]
        held_x, held_y = features.take(held), y[held]
        chosen_on = {"rows": f"{CHOICE_SHARE:g} of the training rows", "kept": "retrained"}
        if not len(held):
            raise ModelError(
                f"sqlflow_models.AutoClassifier chooses its network on {CHOICE_SHARE:g} of each "
                "class's training rows without validation rows, but the classes have too few",
                hint="give validation.select, or model.hidden_units and optimizer.learning_rate",
            )
    results, best, best_loss = [], None, math.inf
    with context.reporter.stage("searching networks", total=len(points), unit="candidates"):
        for number, values in enumerate(points):
            context.token.check()
            try:
                model, details = _trained(
                    context, keras, train_x, train_y, labels, {**attributes, **values}
                )
                loss = _loss(context, keras, model, held_x, held_y)
            except ModelError as error:  # diverged: passed over
                results.append({**values, "error": error.message})
                context.reporter.advance(1)
                continue
            results.append({**values, "validation_loss": loss})
            context.reporter.advance(1, validation_loss=loss)
            if loss < best_loss:
                best, best_loss = (number, model, details), loss
    if best is None:
        raise ModelError(
            f"every network the search trained diverged: {results[-1]['error']}",
            hint="give a smaller optimizer.learning_rate, or scale the features down",
        )
    number, model, details = best
    winner = {**attributes, **points[number]}
    if validation is None:  # trained again, on every training row
        model, details = _trained(context, keras, features, y, labels, winner)
    return network.saved(model), {
        **details,
        "attributes": winner,
        "network_search": {
            "metric": "validation_loss",
            "held_out_rows": len(held_y),
            **chosen_on,
            "winner": number,
            "candidates": results,
        },
    }


def continued(attributes: dict[str, Any], base: StoredModel) -> dict[str, Any]:
    """The attributes of an AutoClassifier's training continued from ``base``: its network,
    and unless one is given the learning rate its search chose (a continued base records
    none: then DNNClassifier's default)."""
    chosen = base.metadata["attributes"].get("optimizer.learning_rate", DEFAULT_LEARNING_RATE)
    rate = attributes.get("optimizer.learning_rate") or chosen
    return {**attributes, "architecture": "dnn", "optimizer.learning_rate": rate}


def _trained(
    context: Context,
    keras,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
) -> tuple[Any, dict[str, Any]]:
    """A DNNClassifier of ``attributes`` trained on the rows, and its details; a
    :class:`ModelError` if the training diverged."""
    dnn = {**attributes, "architecture": "dnn"}
    return network.trained(context, keras, features, y, labels, dnn, None)


def _loss(context: Context, keras, model, features: FeatureArrays, y: np.ndarray) -> float:
    """The mean cross-entropy of the model's class probabilities for the rows' classes; a
    :class:`ModelError` when it is not a number (the training diverged)."""
    inputs, of_class = features.inputs(), []
    for start in range(0, len(y), SCORE_BATCH):  # called, not predict: no tracing per model
        context.token.check()
        batch = {name: values[start : start + SCORE_BATCH] for name, values in inputs.items()}
        probabilities = np.asarray(model(batch, training=False))
        rows = np.arange(len(probabilities))
        of_class.append(probabilities[rows, y[start : start + len(rows)]].astype(np.float64))
    of_class = np.concatenate(of_class)
    loss = float(-np.log(np.clip(of_class, _SMALLEST_PROBABILITY, 1.0)).mean())
    if not math.isfinite(loss):
        raise ModelError(f"the validation loss is {loss}", hint="the training diverged")
    return loss
