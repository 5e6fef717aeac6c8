"""SQL that recreates SQLFlow's iris tables: ``python data.py > data.sql``.

The data is the real iris data set (``examples/iris.csv``, 150 flowers), in SQLFlow's
schema: four FLOAT measures and ``class`` an INT (0 setosa, 1 versicolor, 2 virginica).
``iris.test`` holds every fifth flower (30), ``iris.train`` the other 120, shuffled with a
fixed seed (SQLFlow's copy splits the same flowers 110/10).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sqldata import emit, schema_sql, table_sql

IRIS_CSV = Path(__file__).resolve().parents[2] / "iris.csv"
MEASURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
COLUMNS = [*((name, "FLOAT") for name in MEASURES), ("class", "INT")]
CLASSES = {"setosa": 0, "versicolor": 1, "virginica": 2}


def main() -> None:
    with IRIS_CSV.open() as f:
        flowers = list(csv.DictReader(f))
    rows = [(*(float(f[m]) for m in MEASURES), CLASSES[f["class"]]) for f in flowers]
    held_out = [int(f["id"]) % 5 == 0 for f in flowers]
    train = [row for row, out in zip(rows, held_out, strict=True) if not out]
    test = [row for row, out in zip(rows, held_out, strict=True) if out]
    order = np.random.default_rng(15).permutation(len(train))
    emit(
        [
            schema_sql("iris"),
            *table_sql("iris.train", COLUMNS, [train[i] for i in order]),
            *table_sql("iris.test", COLUMNS, test),
        ]
    )


if __name__ == "__main__":
    main()
