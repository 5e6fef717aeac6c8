"""Synthetic credit-card transactions for the fraud_dnn tutorial: ``creditcard.creditcard``.

The real data (Kaggle's credit-card fraud set) may not be downloaded or committed, so this
script makes rows of the same shape: ``time`` (seconds over two days, fewer at night),
``v1``..``v28`` (PCA-like components: independent, centred, their spread falling from v1 to
v28), ``amount`` (a skewed purchase amount) and ``class`` (1 for a fraud, about 2% of the
rows). Frauds stand apart on a few components, as in the real set (v14, v12, v10 and v17
lower, v4 and v11 higher, v3 lower), with more spread and somewhat different amounts; the
other components carry no signal.

``creditcard.holdout`` holds more rows from the same generator, never seen in training, on
which ``measure.sql`` measures the model.

Run ``python examples/sqlflow/fraud_dnn/data.py > data.sql`` and then
``sqlml run data.sql --datasource URL``; the seed is fixed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqldata import emit, schema_sql, table_sql

SEED = 15
ROWS = 2000  # creditcard.creditcard: few, as train.epoch = 100 runs over them all
HOLDOUT_ROWS = 2000
FRAUD_RATE = 0.02
TWO_DAYS = 172_800
COMPONENTS = 28
# Spread of v1..v28, falling as the variance explained by each PCA component does.
SPREAD = np.linspace(1.9, 0.35, COMPONENTS)
# The shift of a fraud's components (in units of each one's spread), 0 where no signal.
SHIFT = np.zeros(COMPONENTS)
for number, shift in {14: -3.0, 12: -2.4, 10: -2.2, 17: -2.2, 4: 2.0, 11: 1.8, 3: -1.5}.items():
    SHIFT[number - 1] = shift

COLUMNS = [
    ("time", "INT"),
    *[(f"v{number}", "FLOAT") for number in range(1, COMPONENTS + 1)],
    ("amount", "FLOAT"),
    ("class", "INT"),
]


def transactions(rng: np.random.Generator, n: int) -> list[list[object]]:
    """``n`` transactions in time order, about FRAUD_RATE of them frauds."""
    fraud = rng.random(n) < FRAUD_RATE
    # Fewer purchases at night: accept a uniform time with a probability that follows the day.
    times = []
    while len(times) < n:
        t = rng.integers(0, TWO_DAYS)
        hour = (t / 3600) % 24
        if rng.random() < 0.25 + 0.75 * np.sin(np.pi * max(hour - 6, 0) / 18) ** 2:
            times.append(int(t))
    times = np.sort(np.array(times))
    v = rng.normal(size=(n, COMPONENTS)) * SPREAD
    v[fraud] = (rng.normal(size=(fraud.sum(), COMPONENTS)) * 1.4 + SHIFT) * SPREAD
    amount = np.where(
        fraud,
        rng.lognormal(mean=3.2, sigma=1.6, size=n),
        rng.lognormal(mean=3.0, sigma=1.3, size=n),
    )
    rows = []
    for i in range(n):
        rows.append(
            [
                int(times[i]),
                *(round(float(x), 6) for x in v[i]),
                round(float(amount[i]), 2),
                int(fraud[i]),
            ]
        )
    return rows


def main() -> None:
    rng = np.random.default_rng(SEED)
    emit(
        [
            schema_sql("creditcard"),
            *table_sql("creditcard.creditcard", COLUMNS, transactions(rng, ROWS)),
            *table_sql("creditcard.holdout", COLUMNS, transactions(rng, HOLDOUT_ROWS)),
        ]
    )


if __name__ == "__main__":
    main()
