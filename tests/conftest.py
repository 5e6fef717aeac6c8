"""Shared fixtures: datasources on DuckDB and MySQL, loaded with the iris data."""

from __future__ import annotations

import csv
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from sqlml.errors import DatasourceError
from sqlml.runtime.datasource import Datasource, connect

ROOT = Path(__file__).resolve().parent.parent
IRIS_CSV = ROOT / "examples" / "iris.csv"
MYSQL_URL = os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test")


def iris_columns() -> dict[str, np.ndarray]:
    """The iris file as columns (id and the four measures numeric, class as text)."""
    with IRIS_CSV.open() as f:
        rows = list(csv.DictReader(f))
    columns: dict[str, np.ndarray] = {"id": np.array([int(r["id"]) for r in rows])}
    for name in ("sepal_length", "sepal_width", "petal_length", "petal_width"):
        columns[name] = np.array([float(r[name]) for r in rows])
    columns["class"] = np.array([r["class"] for r in rows], dtype=object)
    return columns


def load_iris(ds: Datasource) -> None:
    """Tables iris_train (120 rows) and iris_test (every fifth flower, 30 rows)."""
    columns = iris_columns()
    held_out = columns["id"] % 5 == 0
    ds.write_table(["iris_train"], {k: v[~held_out] for k, v in columns.items()})
    ds.write_table(["iris_test"], {k: v[held_out] for k, v in columns.items()})


@pytest.fixture
def duckdb_url(tmp_path: Path) -> str:
    return f"duckdb:///{tmp_path / 'test.duckdb'}"


def _mysql_or_skip() -> str:
    try:
        connect(MYSQL_URL).close()
    except DatasourceError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"MySQL must be reachable in CI: {error.message}")
        pytest.skip(f"MySQL is not reachable: {error.message}")
    return MYSQL_URL


@pytest.fixture
def mysql_url() -> str:
    return _mysql_or_skip()


@pytest.fixture(params=["duckdb", "mysql"])
def iris_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A datasource URL whose database holds iris_train and iris_test."""
    url = f"duckdb:///{tmp_path / 'iris.duckdb'}" if request.param == "duckdb" else None
    url = url or _mysql_or_skip()
    ds = connect(url)
    load_iris(ds)
    ds.close()
    yield url


@pytest.fixture
def unique_name() -> str:
    """A table or model name no other test run uses (MySQL's database is shared)."""
    return f"t_{uuid.uuid4().hex[:10]}"
