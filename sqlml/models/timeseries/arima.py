"""One series' ARIMA in numpy: seasonal patterns removed by moving averages, the remainder
scaled, differenced ``d`` times and fitted as ARMA(p, q) by Hannan-Rissanen least squares (a
long autoregression's residuals stand in for the errors, then one regression on ``p`` lags and
``q`` lagged errors).

Without an order, ``d`` is the number of differences after which a KPSS test no longer
rejects a stationary level (at 5%), and ``p`` and ``q`` (each up to :data:`AUTO_MAX`) are those
of the smallest AIC, all fitted on the same rows. A forecast runs the recursion with future
errors 0, undoes the differences and the scale and adds the patterns back; its standard
error is the residuals' times the root of the summed squares of the ARIMA's psi weights
(the seasonal patterns taken as known).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sqlml.errors import ModelError

AUTO_MAX = 3  # of p and of q, when the order is chosen
MAX_DIFFERENCES = 2  # of d, when the order is chosen
KPSS_5_PERCENT = 0.463  # the KPSS level-stationarity statistic's critical value at 5%


def fit(series: np.ndarray, order: list[int] | None, periods: list[int]) -> dict[str, Any]:
    """The model document of ``series``: seasonal patterns, ARMA coefficients, state and the
    residuals' variance; ``order`` [p, d, q], or None to choose it."""
    low = [0, 0, 0] if order is None else order
    needed = max([2 * k for k in periods] + [sum(low) + 2, 8 if order is None else 0])
    if len(series) < needed:
        raise ModelError(
            f"the series has {len(series)} rows, too few for order "
            f"{'auto' if order is None else order} and periods {periods} (at least {needed})",
            hint="select more rows, or lower model.order and model.period",
        )
    remainder, seasonals = series.astype(np.float64), []
    for period in periods:
        pattern = _seasonal(remainder, period)
        seasonals.append(pattern.tolist())
        remainder = remainder - pattern[np.arange(len(remainder)) % period]
    scale = float(remainder.std()) or 1.0
    x = remainder / scale
    p, d, q = _chosen(x) if order is None else order
    levels = []
    for _ in range(d):
        levels.append(float(x[-1]))
        x = np.diff(x)
    intercept, ar, ma, errors, variance = _hannan_rissanen(x, p, q)
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
        "variance": variance,
        "length": len(series),
    }


def order_of(document: dict[str, Any]) -> list[int]:
    """The [p, d, q] a document was fitted with."""
    return [len(document["ar"]), len(document["levels"]), len(document["ma"])]


def forecast(document: dict[str, Any], steps: int, start: int = 0) -> np.ndarray:
    """The ``steps`` values after the series, from the ``start``-th step after it; a
    :class:`ModelError` if they grow beyond any number."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _forecast(document, start, start + steps)


def _forecast(document: dict[str, Any], start: int, count: int) -> np.ndarray:
    ar, ma = np.array(document["ar"]), np.array(document["ma"])
    p, q = len(ar), len(ma)
    x = list(document["tail"])
    shocks = list(document["errors"]) + [0.0] * count
    known = len(document["errors"])
    for t in range(count):
        past = x[len(x) - p :][::-1] if p else []
        lagged = shocks[known + t - q : known + t][::-1] if q else []
        x.append(document["intercept"] + float(ar @ np.array(past)) + float(ma @ np.array(lagged)))
    level = np.array(x[len(document["tail"]) :])
    for last in reversed(document["levels"]):
        level = last + np.cumsum(level)
    values = level * document["scale"]
    positions = document["length"] + np.arange(count)
    for period, pattern in zip(document["periods"], document["seasonals"], strict=True):
        values += np.array(pattern)[positions % period]
    return _finite(values[start:], document)


def standard_errors(document: dict[str, Any], steps: int, start: int = 0) -> np.ndarray:
    """The forecast's standard error at each of the ``steps`` steps from the ``start``-th."""
    weights = psi(np.array(document["ar"]), np.array(document["ma"]), len(document["levels"]))
    with np.errstate(over="ignore", invalid="ignore"):
        summed = np.cumsum(weights(start + steps) ** 2)
        errors = np.sqrt(document["variance"] * summed[start:]) * abs(document["scale"])
    return _finite(errors, document)


def _finite(values: np.ndarray, document: dict[str, Any]) -> np.ndarray:
    """``values``, or a :class:`ModelError` if they outgrow floating point."""
    if not np.isfinite(values).all():
        raise ModelError(
            "the forecast grows beyond any number: the ARIMA fitted is explosive (its "
            f"autoregressive coefficients {document['ar']}, moving-average {document['ma']})",
            hint="difference the series (model.order's d), or leave model.order out",
        )
    return values


def psi(ar: np.ndarray, ma: np.ndarray, d: int) -> Any:
    """The psi weights of ARIMA(ar, d, ma) (the errors' weights in the series), as a
    function of how many."""
    polynomial = np.concatenate([[1.0], -ar])
    for _ in range(d):
        polynomial = np.convolve(polynomial, [1.0, -1.0])
    phi = -polynomial[1:]

    def weights(count: int) -> np.ndarray:
        found = np.zeros(count)
        found[0] = 1.0
        for j in range(1, count):
            lags = min(j, len(phi))
            found[j] = (ma[j - 1] if j <= len(ma) else 0.0) + phi[:lags] @ found[j - 1 :: -1][:lags]
        return found

    return weights


def kpss(x: np.ndarray) -> float:
    """The KPSS statistic of level stationarity (Newey-West long-run variance)."""
    n = len(x)
    e = x - x.mean()
    lags = int(np.floor(4 * (n / 100) ** 0.25))
    variance = e @ e / n
    for k in range(1, min(lags, n - 1) + 1):
        variance += 2 * (1 - k / (lags + 1)) * (e[k:] @ e[:-k]) / n
    if variance <= 0:
        return 0.0
    return float(np.sum(np.cumsum(e) ** 2) / (n * n * variance))


def _chosen(x: np.ndarray) -> list[int]:
    """[p, d, q] for the scaled remainder ``x``: d by KPSS, p and q by AIC."""
    d = 0
    while d < MAX_DIFFERENCES and len(x) > 12 and kpss(x) > KPSS_5_PERCENT:
        x, d = np.diff(x), d + 1
    most = max(0, min(AUTO_MAX, (len(x) - 4) // 4))
    long = _long_order(x, 2 * most)
    errors = _regress(x, long, np.zeros(len(x)), 0)[3] if most else np.zeros(len(x))
    start = long + most  # the same rows for every candidate, the errors all estimated
    best, chosen = np.inf, [0, d, 0]
    for p in range(most + 1):
        for q in range(most + 1):
            residuals = _regress(x, p, errors, q, start)[3][start:]
            n = len(residuals)
            if n <= p + q + 1:
                continue
            aic = n * np.log(max(residuals @ residuals / n, 1e-300)) + 2 * (p + q + 1)
            if aic < best - 1e-9:
                best, chosen = aic, [p, d, q]
    return chosen


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


def _long_order(x: np.ndarray, lags: int) -> int:
    """The long autoregression's order for ``lags`` ARMA lags."""
    return min(max(lags, 2 * lags + 4), max(len(x) // 3, 1))


def _hannan_rissanen(
    x: np.ndarray, p: int, q: int
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, float]:
    """ARMA(p, q) coefficients of ``x`` with an intercept, the fitted errors and their
    variance."""
    errors = np.zeros(len(x))
    if q:
        errors = _regress(x, _long_order(x, p + q), np.zeros(len(x)), 0)[3]
    start = max(p, q)
    intercept, ar, ma, residuals = _regress(x, p, errors, q, start)
    freedom = max(len(x) - start - (1 + p + q), 1)
    variance = float(residuals[start:] @ residuals[start:] / freedom)
    return intercept, ar, ma, residuals, variance


def _regress(
    x: np.ndarray, p: int, shocks: np.ndarray, q: int, start: int | None = None
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Least squares of x[t] on 1, p lags of x and q lags of ``shocks``, on the rows from
    ``start`` (max(p, q) by default); the residuals (0 before ``start``)."""
    start = max(p, q) if start is None else start
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
