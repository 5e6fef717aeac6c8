"""Forecasting many series at once: sqlml's ARIMAWithSTLDecomposition against seasonal naive.

Data (seeded): SERIES daily series of LENGTH days, each a level, a linear trend (half of
them also a random walk), a weekly pattern of its own shape and AR(1) noise. Every series'
last HORIZON days are held out. sqlml, on DuckDB, in this process:

    SELECT store, day, sales FROM history TO TRAIN sqlflow_models.ARIMAWithSTLDecomposition
    WITH model.series_key = 'store', model.period = [7], model.horizon = 14
    LABEL sales INTO m;
    SELECT DISTINCT store FROM history TO PREDICT forecast.sales
    WITH predict.confidence_level = 0.9 USING m;

(the order chosen per series by KPSS and AIC). Measured per series on the held-out days,
then averaged: MASE (the error over the in-sample mean absolute seasonal difference) and
sMAPE, for sqlml and for seasonal naive (each held-out day is the same weekday of the last
training week); the ratio of the two; the share of series where sqlml's MASE is lower; the
90% intervals' coverage. Times, taking turns (best and median of ROUNDS, with the load
average): the SQL statements above, the same fits called in numpy without a database, and
seasonal naive. ``python benchmarks/forecast.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
from rounds import taking_turns, timed

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.timeseries import arima

SERIES = 400
LENGTH = 154  # days a series, 22 weeks
HORIZON = 14
PERIOD = 7
ROUNDS = 3
SEED = 36

PROGRAM = (
    "SELECT store, day, sales FROM history TO TRAIN sqlflow_models.ARIMAWithSTLDecomposition "
    f"WITH model.series_key = 'store', model.period = [{PERIOD}], model.horizon = {HORIZON} "
    "LABEL sales INTO m;\n"
    "SELECT DISTINCT store FROM history TO PREDICT forecast.sales "
    "WITH predict.confidence_level = 0.9 USING m;"
)


def make_series(rng: np.random.Generator) -> np.ndarray:
    """SERIES x LENGTH values."""
    t = np.arange(LENGTH)
    rows = []
    for number in range(SERIES):
        pattern = rng.normal(0, rng.uniform(1, 5), PERIOD)
        noise = np.zeros(LENGTH)
        shocks = rng.normal(0, rng.uniform(0.5, 2), LENGTH)
        for i in range(1, LENGTH):
            noise[i] = 0.5 * noise[i - 1] + shocks[i]
        walk = np.cumsum(rng.normal(0, 0.3, LENGTH)) if number % 2 else 0.0
        level, slope = rng.uniform(20, 100), rng.normal(0, 0.1)
        rows.append(level + slope * t + pattern[t % PERIOD] + noise + walk)
    return np.array(rows)


def write_history(url: str, values: np.ndarray) -> None:
    """The training days of every series as (store, day, sales), stores as text."""
    trained = LENGTH - HORIZON
    days = [(date(2025, 1, 1) + timedelta(days=i)).isoformat() for i in range(trained)]
    ds = connect(url)
    ds.write_table(
        ["history"],
        {
            "store": np.array([f"s{n:04d}" for n in range(SERIES) for _ in days], dtype=object),
            "day": np.array(days * SERIES, dtype=object),
            "sales": values[:, :trained].ravel(),
        },
        replace=True,
    )
    ds.close()


def sqlml_forecast(url: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train and predict with sqlml: the forecasts and bounds, SERIES x HORIZON."""
    if main(["-e", PROGRAM, "--datasource", url]) != 0:
        raise SystemExit("sqlml failed")
    ds = connect(url)
    rows = ds.execute("SELECT sales, sales_lower, sales_upper FROM forecast ORDER BY store, day")
    ds.close()
    found = np.array(rows.rows, dtype=np.float64).reshape(SERIES, HORIZON, 3)
    return found[:, :, 0], found[:, :, 1], found[:, :, 2]


def numpy_forecast(values: np.ndarray) -> np.ndarray:
    trained = LENGTH - HORIZON
    fitted = [arima.fit(v[:trained], None, [PERIOD]) for v in values]
    return np.array([arima.forecast(document, HORIZON) for document in fitted])


def seasonal_naive(values: np.ndarray) -> np.ndarray:
    trained = LENGTH - HORIZON
    last_week = values[:, trained - PERIOD : trained]
    return last_week[:, np.arange(HORIZON) % PERIOD]


def mase(values: np.ndarray, found: np.ndarray) -> np.ndarray:
    trained = LENGTH - HORIZON
    scale = np.abs(values[:, PERIOD:trained] - values[:, : trained - PERIOD]).mean(axis=1)
    return np.abs(values[:, trained:] - found).mean(axis=1) / scale


def smape(values: np.ndarray, found: np.ndarray) -> np.ndarray:
    truth = values[:, LENGTH - HORIZON :]
    return 200 * (np.abs(truth - found) / (np.abs(truth) + np.abs(found))).mean(axis=1)


def main_() -> None:
    values = make_series(np.random.default_rng(SEED))
    with tempfile.TemporaryDirectory() as folder:
        url = f"duckdb:///{Path(folder) / 'forecast.duckdb'}"
        write_history(url, values)
        found, lower, upper = sqlml_forecast(url)
        naive = seasonal_naive(values)
        direct = numpy_forecast(values)
        print("largest difference, SQL vs numpy:", np.abs(direct - found).max())
        if not np.allclose(direct, found, rtol=1e-4, atol=1e-4):
            raise SystemExit("the SQL forecasts differ from the fits called in numpy")
        truth = values[:, LENGTH - HORIZON :]
        ours, theirs = mase(values, found), mase(values, naive)
        print(f"{SERIES} series of {LENGTH - HORIZON} days, {HORIZON} days forecast")
        print(f"MASE   sqlml {ours.mean():.3f}  seasonal naive {theirs.mean():.3f}  "
              f"ratio {ours.mean() / theirs.mean():.3f}")  # fmt: skip
        print(f"sMAPE  sqlml {smape(values, found).mean():.2f}%  seasonal naive "
              f"{smape(values, naive).mean():.2f}%  ratio "
              f"{smape(values, found).mean() / smape(values, naive).mean():.3f}")  # fmt: skip
        print(f"series where sqlml's MASE is lower: {(ours < theirs).mean():.0%}")
        covered = ((truth >= lower) & (truth <= upper)).mean()
        print(f"90% intervals hold {covered:.1%} of the held-out days")
        runs = taking_turns(
            {
                "sqlml SQL (TO TRAIN + TO PREDICT, DuckDB)": timed(lambda: sqlml_forecast(url)),
                "the same fits in numpy": timed(lambda: numpy_forecast(values)),
                "seasonal naive": timed(lambda: seasonal_naive(values)),
            },
            ROUNDS,
        )
    for name in runs.names():
        print(f"{name}: best {runs.best(name):.3f} s, median {runs.median(name):.3f} s")
    sql, fits = runs.names()[:2]
    print(f"SQL over numpy: {runs.ratios(sql, fits)} (best, median)")
    print(f"per series (SQL, best): {1000 * runs.best(sql) / SERIES:.1f} ms")
    print(runs.load())
    sys.stdout.flush()


if __name__ == "__main__":
    start = time.perf_counter()
    main_()
    print(f"whole run {time.perf_counter() - start:.1f} s")
