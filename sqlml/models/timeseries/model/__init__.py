"""The time-series family's trainer and scorer: one ARIMA per series
(:mod:`sqlml.models.timeseries.arima`).

The features are the date, which orders each series' rows (text dates order as SQLFlow
sorts them, by their text), and the ``model.series_key`` columns, whose values (as the
features encode them: a text's id in the vocabulary) name the series. TO PREDICT writes the
forecast of each series' next steps (:mod:`.rows`); TO EVALUATE and TO EXPLAIN score a row as
the next step of its series, in the order the rows come.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.models.store import StoredModel
from sqlml.models.timeseries import arima
from sqlml.models.timeseries.checks import arima_document
from sqlml.models.timeseries.estimators import MAX_SERIES
from sqlml.models.timeseries.model.rows import predicted_rows
from sqlml.models.timeseries.model.series import (
    Steps,
    check_whole,
    date_column,
    feature_values,
    key_columns,
    key_values,
)
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.labels import LabelEncoding

__all__ = ["predicted_rows", "scorer", "train"]


def train(
    context: Context,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
    **ranking: np.ndarray,
) -> tuple[bytes, dict[str, Any]]:
    """Fit each series' seasonal patterns and ARIMA (anew: a base model is not continued)."""
    keys = key_columns(attributes)
    date = date_column(features, keys)
    check_whole(features, [*keys, date])
    y = np.asarray(y, dtype=np.float64)
    if np.isnan(y).any():
        raise ModelError(
            "the series (the LABEL) holds NULL values", hint="fill or filter them in the SELECT"
        )
    when = feature_values(features, features.names.index(date))
    if np.isnan(when).any():
        raise ModelError(
            f"the date column {date} holds NULL values", hint="fill or filter them in the SELECT"
        )
    found = key_values(features, keys)
    groups, inverse = np.unique(found, axis=0, return_inverse=True)
    if len(groups) > MAX_SERIES:
        raise ModelError(
            f"the SELECT holds {len(groups):,} series (model.series_key = {', '.join(keys)}), "
            f"more than the {MAX_SERIES:,} one model holds",
            hint="train a model per part of the series, split by a WHERE clause",
        )
    order, periods = attributes.get("model.order"), list(attributes["model.period"])
    if order is not None and len(order) != 3:
        raise ModelError(
            f"model.order must be 3 numbers [p, d, q], got {order}",
            hint="e.g. model.order = [7, 0, 2], or leave it out to choose it",
        )
    series, orders = [], {}
    ordered = np.lexsort((when, inverse.ravel()))  # by series, then by date
    starts = np.searchsorted(inverse.ravel()[ordered], np.arange(len(groups) + 1))
    with context.reporter.stage("training", total=len(groups), unit="series"):
        for index, key in enumerate(groups):
            context.token.check()
            rows = ordered[starts[index] : starts[index + 1]]
            try:
                document = arima.fit(y[rows], order, periods)
            except ModelError as failure:
                raise _in_series(failure, keys, index, len(groups)) from None
            steps = np.diff(when[rows])
            document.update(
                key=key.tolist(),
                last=float(when[rows][-1]),
                step=float(np.median(steps)) if len(steps) else 1.0,
            )
            series.append(document)
            chosen = str(arima.order_of(document))
            orders[chosen] = orders.get(chosen, 0) + 1
            context.reporter.advance(1)
    params: dict[str, Any] = {"order": order or "auto", "periods": periods, "series": len(series)}
    if order is None:
        params["orders"] = orders  # how many series took each order
    return json.dumps({"keys": keys, "series": series}).encode(), {
        "params": params,
        "metrics": {"train_rows": float(len(y)), "series": float(len(series))},
        "column_types": features.column_types,
    }


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """The forecasts, each row the next step of its series in the order the rows come
    (across batches)."""
    steps = Steps(arima_document(data))

    def score(features: FeatureArrays, batch_size: int) -> np.ndarray:
        context.token.check()
        found = steps.forecast(features)[0]
        context.reporter.advance(features.rows)
        return found

    return score


def _in_series(failure: ModelError, keys: list[str], index: int, count: int) -> ModelError:
    """``failure`` of the ``index``-th series (in the order of its keys) of ``count``."""
    if not keys:
        return failure
    return ModelError(
        f"series {index + 1} of {count} by {', '.join(keys)} (in the keys' order): "
        f"{failure.message}",
        hint=failure.hint,
    )
