"""Write the examples' synthetic data sets: churn.csv, houses.csv and load_churn.sql.

Run from anywhere with ``python examples/make_data.py``; the seed is fixed, so the files
come out the same every time. The labels depend on the features (plus noise), so models
trained on them learn something real:

- churn.csv: 1,500 customers of a telephone and internet company; ``churned`` ('yes' or
  'no') is likelier for month-to-month contracts, short tenures, fibre optic service,
  electronic checks and high monthly charges.
- houses.csv: 1,000 houses; ``price`` (in thousands) grows with the size and the rooms, falls
  with the age, and depends on the neighbourhood.
- load_churn.sql: churn.csv as portable SQL (CREATE TABLE and INSERTs), for databases that
  cannot read a CSV file themselves, such as MySQL through sqlml (docs/tutorial-mysql.md).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 2026
CHURN_COLUMNS = [
    ("customer_id", "INT"),
    ("tenure", "INT"),
    ("contract", "VARCHAR(20)"),
    ("payment_method", "VARCHAR(20)"),
    ("internet_service", "VARCHAR(20)"),
    ("monthly_charges", "DOUBLE PRECISION"),
    ("churned", "VARCHAR(3)"),
]
INSERT_ROWS = 250  # rows per INSERT statement of load_churn.sql


def churn(rng: np.random.Generator, n: int = 1500) -> list[dict[str, object]]:
    """Customers and whether they left."""
    contract = rng.choice(["month-to-month", "one year", "two year"], n, p=[0.55, 0.25, 0.2])
    payment = rng.choice(
        ["electronic check", "mailed check", "bank transfer", "credit card"],
        n,
        p=[0.35, 0.2, 0.22, 0.23],
    )
    internet = rng.choice(["fiber optic", "dsl", "none"], n, p=[0.45, 0.35, 0.2])
    tenure = np.clip(rng.gamma(1.6, 18, n), 1, 72).astype(int)
    base = np.select([internet == "fiber optic", internet == "dsl"], [80.0, 55.0], 22.0)
    charges = np.round(base + rng.normal(0, 9, n), 2)
    score = (
        -1.2
        + 1.8 * (contract == "month-to-month")
        - 1.2 * (contract == "two year")
        - 0.05 * tenure
        + 0.9 * (internet == "fiber optic")
        - 0.6 * (internet == "none")
        + 0.8 * (payment == "electronic check")
        + 0.02 * (charges - 60)
        + rng.normal(0, 0.5, n)
    )
    churned = rng.random(n) < 1 / (1 + np.exp(-score))
    return [
        {
            "customer_id": i + 1,
            "tenure": int(tenure[i]),
            "contract": str(contract[i]),
            "payment_method": str(payment[i]),
            "internet_service": str(internet[i]),
            "monthly_charges": float(charges[i]),
            "churned": "yes" if churned[i] else "no",
        }
        for i in range(n)
    ]


def houses(rng: np.random.Generator, n: int = 1000) -> list[dict[str, object]]:
    """Houses and their sale prices in thousands."""
    areas = {"old town": 3.1, "riverside": 2.6, "hillside": 2.2, "suburbs": 1.7, "industrial": 1.2}
    neighbourhood = rng.choice(list(areas), n, p=[0.15, 0.2, 0.2, 0.3, 0.15])
    size = np.round(np.clip(rng.normal(110, 35, n), 35, 260), 1)
    rooms = np.clip(np.round(size / 30 + rng.normal(0, 0.7, n)), 1, 8).astype(int)
    age = np.clip(rng.exponential(25, n), 0, 110).astype(int)
    per_sqm = np.array([areas[a] for a in neighbourhood])
    price = (size * per_sqm * (1 - 0.003 * age) + 12 * rooms) * rng.normal(1, 0.08, n) + rng.normal(
        0, 20, n
    )
    return [
        {
            "house_id": i + 1,
            "size_sqm": float(size[i]),
            "rooms": int(rooms[i]),
            "age_years": int(age[i]),
            "neighbourhood": str(neighbourhood[i]),
            "price": round(float(price[i]), 1),
        }
        for i in range(n)
    ]


def write_csv(path: Path, rows: list[dict[str, object]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def sql_value(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else repr(value)


def write_load_sql(path: Path, rows: list[dict[str, object]]) -> None:
    """churn.csv as a program that creates and fills the table churn on any database."""
    columns = ", ".join(f"{name} {kind}" for name, kind in CHURN_COLUMNS)
    names = ", ".join(name for name, _ in CHURN_COLUMNS)
    lines = [
        "-- The churn data (churn.csv) as portable SQL: written by make_data.py, do not edit.",
        "-- Run with: sqlml run examples/load_churn.sql --datasource URL",
        "DROP TABLE IF EXISTS churn;",
        f"CREATE TABLE churn ({columns});",
    ]
    for start in range(0, len(rows), INSERT_ROWS):
        values = ",\n".join(
            "(" + ", ".join(sql_value(row[name]) for name, _ in CHURN_COLUMNS) + ")"
            for row in rows[start : start + INSERT_ROWS]
        )
        lines.append(f"INSERT INTO churn ({names}) VALUES\n{values};")
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    rng = np.random.default_rng(SEED)
    customers = churn(rng)
    write_csv(HERE / "churn.csv", customers)
    write_load_sql(HERE / "load_churn.sql", customers)
    write_csv(HERE / "houses.csv", houses(rng))


if __name__ == "__main__":
    main()
