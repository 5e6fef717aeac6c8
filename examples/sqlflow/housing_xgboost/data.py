"""SQL that recreates SQLFlow's boston housing tables: ``python data.py > data.sql``.

The data is SYNTHETIC: the Boston housing data set cannot be redistributed here, so this
script draws 506 tracts with its 14 columns, their types (SQLFlow's ``boston.train``) and
realistic ranges and relationships. A latent "urbanness" of each tract drives crime, industry,
pollution, old housing, nearness to the centres and highways, tax and pupil-teacher ratio
together; the median value ``medv`` (in $1000s, capped at 50 as in the original) rises with
the rooms ``rm`` and falls with the lower-status share ``lstat`` (the two strongest
influences, as in the real data), crime, pollution and class sizes, plus noise.
``boston.train`` holds 406 tracts and ``boston.test`` 100 (SQLFlow's copy: 496 and 10).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqldata import emit, schema_sql, table_sql

COLUMNS = [
    ("crim", "FLOAT"),
    ("zn", "FLOAT"),
    ("indus", "FLOAT"),
    ("chas", "INT"),
    ("nox", "FLOAT"),
    ("rm", "FLOAT"),
    ("age", "FLOAT"),
    ("dis", "FLOAT"),
    ("rad", "INT"),
    ("tax", "INT"),
    ("ptratio", "FLOAT"),
    ("b", "FLOAT"),
    ("lstat", "FLOAT"),
    ("medv", "FLOAT"),
]
TRACTS, TEST = 506, 100
ZONED = [12.5, 20, 22, 25, 28, 30, 33, 35, 40, 45, 52.5, 55, 60, 70, 75, 80, 85, 90, 95, 100]


def tracts(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """``n`` synthetic tracts, column by column."""
    u = rng.normal(size=n)  # urbanness
    noise = rng.normal(size=(12, n))
    crim = np.clip(np.exp(-1.3 + 1.6 * u + 1.0 * noise[0]), 0.006, 89.0)
    zoned = (u < -0.3) & (rng.random(n) < 0.6)
    zn = np.where(zoned, rng.choice(ZONED, size=n), 0.0)
    indus = np.clip(11.1 + 6.0 * u + 2.5 * noise[1], 0.46, 27.74)
    chas = (rng.random(n) < 0.07).astype(int)
    nox = np.clip(0.555 + 0.09 * u + 0.04 * noise[2], 0.385, 0.871)
    rm = np.clip(6.28 - 0.15 * u + 0.65 * noise[3], 3.56, 8.78)
    age = np.clip(68.6 + 22.0 * u + 15.0 * noise[4], 2.9, 100.0)
    dis = np.clip(np.exp(1.2 - 0.45 * u + 0.2 * noise[5]), 1.13, 12.13)
    highway = u > 1.0
    rad = np.where(highway, 24, rng.integers(1, 9, size=n))
    tax = np.where(highway, 666, np.clip(310 + 60 * u + 50 * noise[6], 187, 711)).astype(int)
    ptratio = np.where(highway, 20.2, np.clip(18.5 + 1.0 * u + 1.8 * noise[7], 12.6, 22.0))
    poor_b = rng.random(n) < 0.08 + 0.1 * (u > 0.8)
    b = np.where(poor_b, rng.uniform(0.32, 390.0, size=n), 396.9 - np.abs(noise[8]))
    lstat = np.clip(12.6 + 5.0 * u - 4.0 * (rm - 6.28) + 3.5 * noise[9], 1.73, 37.97)
    medv = (
        22.5
        + 6.0 * (rm - 6.28)
        + 8.0 * np.maximum(rm - 6.9, 0)
        - 7.0 * np.log(lstat / 11.4)
        - 0.8 * np.sqrt(crim)
        - 0.8 * (ptratio - 18.5)
        - 10.0 * (nox - 0.555)
        + 2.5 * chas
        + 3.0 * noise[10]
    )
    return {
        "crim": crim.round(5),
        "zn": zn,
        "indus": indus.round(2),
        "chas": chas,
        "nox": nox.round(3),
        "rm": rm.round(3),
        "age": age.round(1),
        "dis": dis.round(4),
        "rad": rad,
        "tax": tax,
        "ptratio": ptratio.round(1),
        "b": b.round(2),
        "lstat": lstat.round(2),
        "medv": np.clip(medv, 5.0, 50.0).round(1),
    }


def main() -> None:
    data = tracts(np.random.default_rng(506), TRACTS)
    rows = list(zip(*(data[name] for name, _ in COLUMNS), strict=True))
    emit(
        [
            schema_sql("boston"),
            *table_sql("boston.train", COLUMNS, rows[TEST:]),
            *table_sql("boston.test", COLUMNS, rows[:TEST]),
        ]
    )


if __name__ == "__main__":
    main()
