"""TO PREDICT's rows of a time-series model: each SELECT row's forecast (the next step of its
series), or with ``model.horizon`` that many steps after the end of each series the SELECT
names; with ``predict.confidence_level``, the bounds of the prediction interval beside."""

from __future__ import annotations

from collections.abc import Iterator
from statistics import NormalDist
from typing import Any

import numpy as np

from sqlml.datasources import Columns
from sqlml.errors import ModelError
from sqlml.ir import FeatureColumn
from sqlml.models.applied import Model
from sqlml.models.checks import TAMPERED_HINT
from sqlml.models.timeseries import arima
from sqlml.models.timeseries.checks import arima_document
from sqlml.models.timeseries.model.series import Steps, key_values
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import transform


def predicted_rows(
    context: Context,
    model: Model,
    batches: Iterator[Columns],
    result: str,
    attributes: dict[str, Any],
) -> Iterator[Columns]:
    """The output batches of TO PREDICT ``result`` with ``model`` for the SELECT's
    ``batches`` (its WITH ``attributes``)."""
    document = arima_document(model.stored.data)
    level = attributes.get("predict.confidence_level")
    if level is not None and any(one["variance"] is None for one in document["series"]):
        raise ModelError(
            "the model was stored by an earlier sqlml, without its residuals' variance: "
            "predict.confidence_level cannot draw its intervals",
            hint="train it again, or leave out predict.confidence_level",
        )
    bounds = [f"{result}_lower", f"{result}_upper"] if level is not None else []
    width = NormalDist().inv_cdf((1 + level) / 2) if level is not None else 0.0
    horizon = model.stored.metadata["attributes"].get("model.horizon")
    if horizon is None:
        yield from _row_steps(context, model, document, batches, result, bounds, width)
    else:
        rows = max(horizon, attributes["predict.batch_size"])  # a batch's, whole series
        yield from _horizon(context, model, document, batches, result, bounds, width, horizon, rows)


def _row_steps(
    context: Context,
    model: Model,
    document: dict[str, Any],
    batches: Iterator[Columns],
    result: str,
    bounds: list[str],
    width: float,
) -> Iterator[Columns]:
    """Each row's forecast, the next step of its series, beside the SELECT's columns."""
    label = model.stored.metadata["label"]
    steps = Steps(document)
    for columns in batches:
        taken = [name for name in bounds if name in columns and name != label]
        if taken:
            raise ModelError(
                f"the SELECT already returns {', '.join(taken)}, which the interval's bounds "
                "would replace",
                hint="name the result column differently, or leave those columns out",
            )
        values, errors = steps.forecast(transform(columns, model.features))
        output = {k: v for k, v in columns.items() if k not in (label, result, *bounds)}
        output[result] = values
        if bounds and errors is not None:
            output[bounds[0]], output[bounds[1]] = values - width * errors, values + width * errors
        context.reporter.advance(len(values))
        yield output


def _horizon(
    context: Context,
    model: Model,
    document: dict[str, Any],
    batches: Iterator[Columns],
    result: str,
    bounds: list[str],
    width: float,
    horizon: int,
    batch_rows: int,
) -> Iterator[Columns]:
    """``horizon`` rows for each series the SELECT's rows name (all of them: the one series
    of a model without keys), in the order they first come: the keys, the date, the
    forecast."""
    keys = document["keys"]
    by_name = {feature.name: feature for feature in model.features}
    date = next(feature for feature in model.features if feature.name not in keys)
    taken = {*keys, date.name} & {result, *bounds}
    if taken:
        raise ModelError(
            f"the forecast's column {', '.join(sorted(taken))} would replace the series' "
            "key or date",
            hint="name the result column differently: TO PREDICT table.<result column>",
        )
    index = {tuple(one["key"]): i for i, one in enumerate(document["series"])}
    chosen: dict[int, list[Any]] = {} if keys else {0: []}
    features = [by_name[key] for key in keys]
    for columns in batches:
        context.token.check()
        if not keys:
            continue
        found = key_values(transform(columns, features), keys)
        for row, key in enumerate(map(tuple, found.tolist())):
            if key not in index:
                named = ", ".join(f"{k} = {columns[k][row]!r}" for k in keys)
                raise ModelError(
                    f"the SELECT names a series the model was not trained on ({named})",
                    hint="select only the series the model was trained on",
                )
            chosen.setdefault(index[key], [columns[k][row] for k in keys])
    steps = np.arange(1, horizon + 1)
    per_batch = batch_rows // horizon
    order = list(chosen)
    for at in range(0, len(order), per_batch):
        part = order[at : at + per_batch]
        output: Columns = {
            key: np.array([chosen[s][k] for s in part for _ in steps], dtype=object)
            for k, key in enumerate(keys)
        }
        output[date.name] = np.concatenate(
            [_dates(date, document["series"][s], steps) for s in part]
        )
        values = [_forecast(document["series"][s], horizon) for s in part]
        output[result] = np.concatenate([v for v, _ in values])
        if bounds:
            errors = np.concatenate([e for _, e in values])
            output[bounds[0]] = output[result] - width * errors
            output[bounds[1]] = output[result] + width * errors
        context.reporter.advance(len(part) * horizon)
        yield output


def _forecast(one: dict[str, Any], horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """A series' next ``horizon`` values and their standard errors (0 if unknown)."""
    known = one["variance"] is not None
    errors = arima.standard_errors(one, horizon) if known else np.zeros(horizon)
    return arima.forecast(one, horizon), errors


def _dates(date: FeatureColumn, one: dict[str, Any], steps: np.ndarray) -> np.ndarray:
    """The dates of a series' next ``steps``: numbers go on by the series' usual step (the
    median gap between its dates); ISO dates as text by the median gap between the training
    dates."""
    vocabulary = date.params.get("vocabulary")
    if vocabulary is None:
        found = one["last"] + steps * one["step"]
        integral = float(one["last"]).is_integer() and float(one["step"]).is_integer()
        return found.astype(np.int64) if integral else found
    try:
        known = np.array(vocabulary, dtype="datetime64")
    except ValueError:
        raise ModelError(
            f"model.horizon extends the dates of {date.name}, but they are not ISO dates "
            f"(e.g. {vocabulary[0]!r})",
            hint="select the date as YYYY-MM-DD text or as a number, or train without "
            "model.horizon and select the future dates",
        ) from None
    at = int(one["last"])
    if not 0 <= at < len(known):
        raise ModelError(
            "the stored ARIMA model is invalid: a series' last date is not in its vocabulary",
            hint=TAMPERED_HINT,
        )
    gap = np.median(np.diff(np.sort(known))) if len(known) > 1 else np.timedelta64(1, "D")
    last = known[at]
    return np.array(np.datetime_as_string(last + steps * gap), dtype=object)
