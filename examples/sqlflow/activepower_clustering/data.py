"""Synthetic household power days for the activepower_clustering tutorial: ``activepower.train``
and, for the measure, ``activepower.pattern``.

The real data (the UCI household power consumption set, through Kaggle) may not be
downloaded or committed, so this script makes a year of days in the tutorial's shape:
``dates`` ('1/1' .. '12/31'), ``m1``..``m48`` (the power used in each half hour of the day,
each column scaled to 0..1 over the year, as SQLFlow's preprocessing script does) and
``class``. Each day follows one of three daily patterns, with noise and random appliance
bursts:

- 0, workday: a short morning peak before leaving, little during the day, a long evening peak;
- 1, weekend: a late morning, use spread over the day, a high afternoon and evening;
- 2, away: the household is on holiday, only the fridge and standby, flat and low.

``class`` is -1 on every day, as in SQLFlow's table: the tutorial's TO TRAIN selects every
column, so ``dates`` and ``class`` are features besides ``m1``..``m48`` (as in SQLFlow, the
columns COLUMN leaves out are), and a true pattern there would give the answer away. The
true pattern of each day is in ``activepower.pattern`` (``dates``, ``pattern``), which only
``measure.sql`` reads.

Run ``python examples/sqlflow/activepower_clustering/data.py > data.sql`` and then
``sqlml run data.sql --datasource URL``; the seed is fixed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqldata import emit, schema_sql, table_sql

SEED = 15
SLOTS = 48  # half hours a day
MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
FIRST_SATURDAY = 5  # day index (0 is 1/1) of the first Saturday, as in 2007
HOLIDAYS = [(40, 49), (200, 221), (355, 365)]  # [first, last) day indexes spent away
WORKDAY, WEEKEND, AWAY = 0, 1, 2

COLUMNS = [
    ("dates", "VARCHAR(20)"),
    *((f"m{slot}", "FLOAT") for slot in range(1, SLOTS + 1)),
    ("class", "INT"),
]
PATTERN_COLUMNS = [("dates", "VARCHAR(20)"), ("pattern", "INT")]


def _bump(hours: np.ndarray, centre: float, width: float, height: float) -> np.ndarray:
    return height * np.exp(-0.5 * ((hours - centre) / width) ** 2)


def _profiles() -> dict[int, np.ndarray]:
    """The mean power (kW) of each half hour, per pattern."""
    hours = np.arange(SLOTS) / 2 + 0.25
    night = 0.35
    return {
        WORKDAY: night + _bump(hours, 7.0, 0.8, 2.2) + _bump(hours, 19.5, 1.8, 2.6),
        WEEKEND: night
        + _bump(hours, 10.5, 1.5, 1.8)
        + _bump(hours, 14.0, 2.5, 1.6)
        + _bump(hours, 19.0, 2.0, 2.0),
        AWAY: np.full(SLOTS, 0.3),
    }


def _pattern(day: int) -> int:
    if any(first <= day < last for first, last in HOLIDAYS):
        return AWAY
    return WEEKEND if (day - FIRST_SATURDAY) % 7 in (0, 1) else WORKDAY


def days(rng: np.random.Generator) -> tuple[list[str], np.ndarray, list[int]]:
    """A year of days: their dates, 48 scaled half-hour readings each, their true pattern."""
    profiles = _profiles()
    dates = [f"{month}/{day}" for month, n in enumerate(MONTH_DAYS, 1) for day in range(1, n + 1)]
    patterns = [_pattern(day) for day in range(len(dates))]
    power = np.empty((len(dates), SLOTS))
    for day, pattern in enumerate(patterns):
        level = rng.lognormal(0, 0.15)  # some days use more than others
        noise = rng.gamma(8.0, 1 / 8.0, SLOTS)  # mean 1
        bursts = rng.random(SLOTS) < 0.04  # a kettle, a washing machine
        power[day] = level * profiles[pattern] * noise + bursts * rng.uniform(0.5, 2.0, SLOTS)
    scaled = (power - power.min(axis=0)) / (power.max(axis=0) - power.min(axis=0))
    return dates, scaled, patterns


def main() -> None:
    dates, scaled, patterns = days(np.random.default_rng(SEED))
    readings = zip(dates, scaled, strict=True)
    train = [[date, *(round(float(x), 6) for x in row), -1] for date, row in readings]
    truth = [[date, pattern] for date, pattern in zip(dates, patterns, strict=True)]
    emit(
        [
            schema_sql("activepower"),
            *table_sql("activepower.train", COLUMNS, train),
            *table_sql("activepower.pattern", PATTERN_COLUMNS, truth),
        ]
    )


if __name__ == "__main__":
    main()
