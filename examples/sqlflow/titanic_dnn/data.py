"""SQL that recreates SQLFlow's titanic tables: ``python data.py > data.sql``.

The data is SYNTHETIC: Kaggle's Titanic data cannot be redistributed here, so this script
draws passengers and derives from them the 22 preprocessed features and the label of
SQLFlow's ``titanic.train`` (its tutorial's ``titanic_preprocessing.py``: one-hot class, sex,
port and title; no siblings, no parents, a cabin, a B/D/E cabin, family size, alone, mother;
age and fare per ticket standardised on the training rows). Realistic relationships: first
class is older, richer and often has a cabin; children travel with parents; survival is
likelier for women ("women and children first"), boys (Master), the upper classes and small
families; about 35% survive (38% on the ship). ``titanic.train`` holds 891 passengers and
``titanic.test`` 418 (the original's sizes), the test ones with their label too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqldata import emit, schema_sql, table_sql

FEATURES = [
    "pclass_1", "pclass_2", "pclass_3", "sex_female", "sex_male",
    "embarked_c", "embarked_q", "embarked_s",
    "title_master", "title_misc", "title_miss", "title_mr", "title_mrs",
    "nosibsp", "noparch", "nullcabin", "cabinalpha", "family", "isalone", "ismother",
]  # fmt: skip
COLUMNS = [
    *((f, "INT") for f in FEATURES),
    ("age", "FLOAT"),
    ("realfare", "FLOAT"),
    ("survived", "INT"),
]
TRAIN, TEST = 891, 418
TITLES = ["master", "misc", "miss", "mr", "mrs"]


def passengers(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """``n`` passengers: raw age and fare per ticket, the other columns as in the table."""
    pclass = rng.choice([1, 2, 3], size=n, p=[0.24, 0.21, 0.55])
    female = rng.random(n) < np.choose(pclass - 1, [0.44, 0.41, 0.29])
    age = np.clip(rng.normal(np.choose(pclass - 1, [38.0, 30.0, 27.0]), 12.0), 0.42, 80.0)
    child = age < 14
    sibsp = rng.choice([0, 1, 2, 3, 4, 5, 8], size=n, p=[0.68, 0.23, 0.03, 0.02, 0.02, 0.01, 0.01])
    parch = np.where(
        child,
        rng.choice([1, 2], size=n, p=[0.4, 0.6]),
        rng.choice([0, 1, 2, 3, 4, 5], size=n, p=[0.82, 0.09, 0.06, 0.01, 0.01, 0.01]),
    )
    married = ~child & (age >= 18) & ((sibsp > 0) | (parch > 0) | (rng.random(n) < 0.3))
    title = np.where(
        female,
        np.where(married, "mrs", "miss"),
        np.where(child, "master", "mr"),
    )
    title = np.where(rng.random(n) < 0.02, "misc", title)
    port = np.where(
        rng.random(n) < np.choose(pclass - 1, [0.4, 0.1, 0.12]),
        "c",
        np.where(rng.random(n) < 0.1, "q", "s"),
    )
    cabin = rng.random(n) < np.choose(pclass - 1, [0.8, 0.1, 0.03])
    cabinalpha = cabin & (rng.random(n) < np.choose(pclass - 1, [0.6, 0.4, 0.3]))
    family = sibsp + parch + 1
    fare = np.exp(rng.normal(np.choose(pclass - 1, [3.5, 2.6, 2.0]), 0.35))
    logit = (
        -2.85
        + 5.25 * female
        + np.choose(pclass - 1, [1.65, 0.6, -1.05])
        - 1.65 * (female & (pclass == 3))
        + 3.6 * (title == "master")
        - 0.03 * (age - 30)
        + 0.6 * cabin
        - 2.4 * (family >= 5)
        + 0.45 * (port == "c")
    )
    survived = rng.random(n) < 1 / (1 + np.exp(-logit))
    columns = {f"pclass_{c}": pclass == c for c in (1, 2, 3)}
    columns |= {"sex_female": female, "sex_male": ~female}
    columns |= {f"embarked_{p}": port == p for p in ("c", "q", "s")}
    columns |= {f"title_{t}": title == t for t in TITLES}
    columns |= {
        "nosibsp": sibsp == 0,
        "noparch": parch == 0,
        "nullcabin": cabin,
        "cabinalpha": cabinalpha,
        "family": family,
        "isalone": family == 1,
        "ismother": female & (parch > 0) & (age >= 16) & (title == "mrs"),
        "age": age,
        "realfare": fare,
        "survived": survived,
    }
    return {name: v.astype(int) if v.dtype == bool else v for name, v in columns.items()}


def main() -> None:
    data = passengers(np.random.default_rng(1912), TRAIN + TEST)
    for name in ("age", "realfare"):  # standardised with the training rows' mean and deviation
        train = data[name][:TRAIN]
        data[name] = ((data[name] - train.mean()) / train.std()).round(6)
    rows = list(zip(*(data[name] for name, _ in COLUMNS), strict=True))
    emit(
        [
            schema_sql("titanic"),
            *table_sql("titanic.train", COLUMNS, rows[:TRAIN]),
            *table_sql("titanic.test", COLUMNS, rows[TRAIN:]),
        ]
    )


if __name__ == "__main__":
    main()
