"""ARIMA with seasonal decomposition in numpy.

Training orders the rows by the feature (a date: text dates order as SQLFlow sorts them, by
their text), removes each ``model.period`` in turn (a centred moving average is the trend; the
mean of each phase of the detrended series, centred on zero, is the seasonal pattern), scales
the remainder, differences it ``d`` times and fits ARMA(p, q) by Hannan-Rissanen: a long
autoregression's residuals stand in for the errors, then one least-squares regression on
``p`` lags and ``q`` lagged errors. A forecast runs the recursion with future errors 0, undoes
the differences and the scale, and adds the seasonal patterns back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.models.store import StoredModel
from sqlml.models.timeseries.checks import arima_document
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import FeatureArrays
from sqlml.runtime.labels import LabelEncoding
from sqlml.runtime.matrix import values


def train(
    context: Context,
    features: FeatureArrays,
    y: np.ndarray,
    labels: LabelEncoding,
    attributes: dict[str, Any],
    base: StoredModel | None = None,
    **ranking: np.ndarray,
) -> tuple[bytes, dict[str, Any]]:
    """Fit the seasonal patterns and the ARIMA (anew: a base model is not continued)."""
    if len(features.names) != 1:
        raise ModelError(
            f"an ARIMA model takes one feature, the date that orders the series; the SELECT "
            f"gives {len(features.names)}: {', '.join(features.names)}",
            hint="select only the date column and the LABEL, e.g. SELECT time, purchase FROM ...",
        )
    series = np.asarray(y, dtype=np.float64)[np.argsort(_order_key(features), kind="stable")]
    if np.isnan(series).any():
        raise ModelError(
            "the series (the LABEL) holds NULL values",
            hint="fill or filter them in the SELECT",
        )
    p, d, q = _order(attributes["model.order"])
    periods = list(attributes["model.period"])
    with context.reporter.stage("training", total=1, unit="fits"):
        document = fit(series, p, d, q, periods)
        context.reporter.advance(1)
    return json.dumps(document).encode(), {
        "params": {"order": [p, d, q], "periods": periods},
        "metrics": {"train_rows": float(len(series))},
        "column_types": features.column_types,
    }


def fit(series: np.ndarray, p: int, d: int, q: int, periods: list[int]) -> dict[str, Any]:
    """The model document of ``series``: seasonal patterns, ARMA coefficients and state."""
    needed = max([2 * k for k in periods] + [p + q + d + 2])
    if len(series) < needed:
        raise ModelError(
            f"the series has {len(series)} rows, too few for order {[p, d, q]} and "
            f"periods {periods} (at least {needed})",
            hint="select more rows, or lower model.order and model.period",
        )
    remainder, seasonals = series.copy(), []
    for period in periods:
        pattern = _seasonal(remainder, period)
        seasonals.append(pattern.tolist())
        remainder -= pattern[np.arange(len(remainder)) % period]
    scale = float(remainder.std()) or 1.0
    levels, x = [], remainder / scale
    for _ in range(d):
        levels.append(float(x[-1]))
        x = np.diff(x)
    intercept, ar, ma, errors = _hannan_rissanen(x, p, q)
    return {
        "periods": periods,
        "seasonals": seasonals,
        "scale": scale,
        "levels": levels,
        "intercept": intercept,
        "ar": ar.tolist(),
        "ma": ma.tolist(),
        "tail": x[len(x) - max(p, 1) :].tolist(),
        "errors": errors[len(errors) - max(q, 1) :].tolist(),
        "length": len(series),
    }


def forecast(document: dict[str, Any], steps: int, start: int = 0) -> np.ndarray:
    """The ``steps`` values after the series, from the ``start``-th step after it."""
    ar, ma = np.array(document["ar"]), np.array(document["ma"])
    tail, errors = list(document["tail"]), list(document["errors"]) + [0.0] * (start + steps)
    count, p, q = start + steps, len(ar), len(ma)
    x = []
    for t in range(count):
        past = (tail + x)[::-1][:p]
        shocks = errors[: len(document["errors"]) + t][::-1][:q]
        x.append(
            document["intercept"] + float(ar @ np.array(past)) + float(ma @ np.array(shocks[:q]))
        )
    level = np.array(x)
    for last in reversed(document["levels"]):
        level = last + np.cumsum(level)
    values_ = level * document["scale"]
    positions = document["length"] + np.arange(count)
    for period, pattern in zip(document["periods"], document["seasonals"], strict=True):
        values_ += np.array(pattern)[positions % period]
    return values_[start:]


def scorer(
    context: Context, data: bytes, metadata: dict[str, Any]
) -> Callable[[FeatureArrays, int], np.ndarray]:
    """The forecasts, one step per row in the order the rows come (across batches)."""
    document = arima_document(data)
    done = [0]

    def score(features: FeatureArrays, batch_size: int) -> np.ndarray:
        context.token.check()
        found = forecast(document, features.rows, start=done[0])
        done[0] += features.rows
        context.reporter.advance(features.rows)
        return found

    return score


def _order_key(features: FeatureArrays) -> np.ndarray:
    """Each row's place in the series: its first feature (a category's id is the rank of its
    text: vocabularies are sorted), else the row's own place."""
    if features.categoricals:
        first = features.categoricals[0]
        if first.feature == 0:
            return first.ids[:, 0]
    x = values(features)
    return x[:, 0] if x.shape[1] else np.arange(features.rows)


def _order(order: list[int]) -> tuple[int, int, int]:
    if len(order) != 3:
        raise ModelError(
            f"model.order must be 3 numbers [p, d, q], got {order}",
            hint="e.g. model.order = [7, 0, 2]",
        )
    return order[0], order[1], order[2]


def _seasonal(x: np.ndarray, period: int) -> np.ndarray:
    """The zero-mean seasonal pattern of ``x`` (one value per phase) around its centred
    moving-average trend (2 x period for an even period)."""
    weights = np.ones(period + 1 - period % 2)
    if period % 2 == 0:
        weights[[0, -1]] = 0.5
    weights /= period
    trend = np.convolve(x, weights, mode="valid")
    half = len(weights) // 2
    detrended = x[half : half + len(trend)] - trend
    phases = (np.arange(len(detrended)) + half) % period
    pattern = np.array([detrended[phases == k].mean() for k in range(period)])
    return pattern - pattern.mean()


def _hannan_rissanen(
    x: np.ndarray, p: int, q: int
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """ARMA(p, q) coefficients of ``x`` with an intercept, and the fitted errors."""
    errors = np.zeros(len(x))
    if q:
        long = min(max(p + q, 2 * (p + q) + 4), max(len(x) // 3, 1))
        errors = _regress(x, long, np.zeros(len(x)), 0)[3]
    return _regress(x, p, errors, q)


def _regress(
    x: np.ndarray, p: int, shocks: np.ndarray, q: int
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Least squares of x[t] on 1, p lags of x and q lags of ``shocks``; the residuals (0 for
    the first max(p, q) rows)."""
    start = max(p, q)
    rows = np.arange(start, len(x))
    design = np.column_stack(
        [np.ones(len(rows))]
        + [x[rows - k] for k in range(1, p + 1)]
        + [shocks[rows - k] for k in range(1, q + 1)]
    )
    solution = np.linalg.lstsq(design, x[rows], rcond=None)[0]
    residuals = np.zeros(len(x))
    residuals[rows] = x[rows] - design @ solution
    return float(solution[0]), solution[1 : p + 1], solution[p + 1 :], residuals
