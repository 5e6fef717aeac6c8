"""Synthetic telco customers for the churn tutorial: ``churn.train`` and ``churn.test``.

The real data (IBM's telco customer churn set) may not be committed, so this script makes
customers with SQLFlow's columns and types (doc/datasets/popularize_churn.sql): the account
(``customerID``, ``tenure`` in months, ``Contract``, ``PaperlessBilling``,
``PaymentMethod``, ``MonthlyCharges``, ``TotalCharges``), the person (``gender``,
``SeniorCitizen`` 0 or 1, ``Partner``, ``Dependents``), the services (phone, lines,
internet and its add-ons, 'No internet service' without internet) and ``Churn`` ('Yes' or
'No'). The relationships follow the real set's well-known ones and are made strong enough
for small models to learn:

- ``SeniorCitizen`` (about 25%): seniors are mostly long-standing customers (over five
  years), while few other customers stay that long, so ``tenure`` tells seniors apart (the
  tutorial's statements learn ``SeniorCitizen`` from ``tenure``, ``gender`` and
  ``customerID``); seniors also take fibre optic more often;
- ``Contract`` gets longer with ``tenure``; ``MonthlyCharges`` adds up the services, and
  ``TotalCharges`` is about ``tenure`` times them;
- ``Churn`` (about a quarter) is likelier for month-to-month contracts, short tenures,
  fibre optic, electronic checks, paperless billing, seniors and high charges, and less
  likely with tech support or online security.

``churn.test`` holds more customers from the same generator (SQLFlow's test data has a
``churn.test`` beside ``churn.train`` too), on which ``measure.sql`` measures the model.

Run ``python examples/sqlflow/churn/data.py > data.sql`` and then
``sqlml run data.sql --datasource URL``; the seed is fixed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqldata import emit, schema_sql, table_sql

SEED = 15
TRAIN_ROWS = 1000
TEST_ROWS = 500
TEXT = "VARCHAR(255)"
COLUMNS = [
    ("customerID", f"{TEXT} PRIMARY KEY"),
    ("gender", TEXT),
    ("SeniorCitizen", "TINYINT"),
    ("Partner", TEXT),
    ("Dependents", TEXT),
    ("tenure", "INT"),
    ("PhoneService", TEXT),
    ("MultipleLines", TEXT),
    ("InternetService", TEXT),
    ("OnlineSecurity", TEXT),
    ("OnlineBackup", TEXT),
    ("DeviceProtection", TEXT),
    ("TechSupport", TEXT),
    ("StreamingTV", TEXT),
    ("StreamingMovies", TEXT),
    ("Contract", TEXT),
    ("PaperlessBilling", TEXT),
    ("PaymentMethod", TEXT),
    ("MonthlyCharges", "FLOAT"),
    ("TotalCharges", "FLOAT"),
    ("Churn", TEXT),
]
ADD_ONS = ["OnlineSecurity", "OnlineBackup", "DeviceProtection", "TechSupport"]
STREAMING = ["StreamingTV", "StreamingMovies"]
PAYMENTS = [
    "Electronic check",
    "Mailed check",
    "Bank transfer (automatic)",
    "Credit card (automatic)",
]
LETTERS = np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))


def _yes(flag: bool) -> str:
    return "Yes" if flag else "No"


def _tenure(rng: np.random.Generator, senior: bool) -> int:
    """Months as a customer: seniors mostly over five years, others mostly fewer."""
    if senior:
        return int(rng.integers(61, 73) if rng.random() < 0.85 else rng.integers(1, 61))
    kind = rng.random()
    if kind < 0.4:
        return int(rng.integers(1, 13))
    return int(rng.integers(13, 61) if kind < 0.95 else rng.integers(61, 73))


def _contract(rng: np.random.Generator, tenure: int) -> str:
    longer = min(tenure / 72, 1.0)
    odds = np.array([1.0 - 0.8 * longer, 0.15 + 0.25 * longer, 0.05 + 0.55 * longer])
    return str(rng.choice(["Month-to-month", "One year", "Two year"], p=odds / odds.sum()))


def customer(rng: np.random.Generator, ids: set[str]) -> list[object]:
    """One customer, in COLUMNS' order."""
    while True:
        key = f"{rng.integers(0, 10000):04d}-{''.join(rng.choice(LETTERS, 5))}"
        if key not in ids:
            ids.add(key)
            break
    senior = bool(rng.random() < 0.25)
    partner = bool(rng.random() < 0.48)
    dependents = bool(rng.random() < (0.5 if partner else 0.1))
    tenure = _tenure(rng, senior)
    phone = bool(rng.random() < 0.9)
    lines = _yes(rng.random() < 0.45) if phone else "No phone service"
    internet = str(
        rng.choice(
            ["DSL", "Fiber optic", "No"], p=[0.25, 0.65, 0.1] if senior else [0.36, 0.4, 0.24]
        )
    )
    services = {}
    for name, share in zip(ADD_ONS + STREAMING, [0.3, 0.35, 0.35, 0.3, 0.4, 0.4], strict=True):
        services[name] = _yes(rng.random() < share) if internet != "No" else "No internet service"
    contract = _contract(rng, tenure)
    paperless = bool(rng.random() < (0.7 if contract == "Month-to-month" else 0.45))
    payment = str(rng.choice(PAYMENTS, p=[0.34, 0.23, 0.22, 0.21]))
    monthly = (
        20.0
        + 5.0 * phone
        + 5.0 * (lines == "Yes")
        + {"DSL": 25.0, "Fiber optic": 50.0, "No": 0.0}[internet]
        + 5.0 * sum(services[name] == "Yes" for name in ADD_ONS)
        + 10.0 * sum(services[name] == "Yes" for name in STREAMING)
        + rng.normal(0, 2.0)
    )
    total = tenure * monthly * rng.uniform(0.95, 1.05)
    logit = (
        -1.8
        + 1.6 * (contract == "Month-to-month")
        - 1.0 * (contract == "Two year")
        + 0.9 * (internet == "Fiber optic")
        + 0.7 * (payment == "Electronic check")
        + 0.3 * paperless
        + 0.4 * senior
        - 0.5 * (services["TechSupport"] == "Yes")
        - 0.4 * (services["OnlineSecurity"] == "Yes")
        - 0.035 * tenure
        + 0.015 * (monthly - 65.0)
    )
    churn = bool(rng.random() < 1 / (1 + np.exp(-logit)))
    return [
        key,
        str(rng.choice(["Female", "Male"])),
        int(senior),
        _yes(partner),
        _yes(dependents),
        tenure,
        _yes(phone),
        lines,
        internet,
        *(services[name] for name in ADD_ONS + STREAMING),
        contract,
        _yes(paperless),
        payment,
        round(float(monthly), 2),
        round(float(total), 2),
        _yes(churn),
    ]


def main() -> None:
    rng = np.random.default_rng(SEED)
    ids: set[str] = set()
    train = [customer(rng, ids) for _ in range(TRAIN_ROWS)]
    test = [customer(rng, ids) for _ in range(TEST_ROWS)]
    emit(
        [
            schema_sql("churn"),
            *table_sql("churn.train", COLUMNS, train),
            *table_sql("churn.test", COLUMNS, test),
        ]
    )


if __name__ == "__main__":
    main()
