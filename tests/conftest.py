"""Shared fixtures: datasources on DuckDB and MySQL, loaded with the iris data."""

from __future__ import annotations

import csv
import importlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sqlml.datasources import Datasource, connect
from sqlml.errors import DatasourceError

ROOT = Path(__file__).resolve().parent.parent
IRIS_CSV = ROOT / "examples" / "iris.csv"
MYSQL_URL = os.environ.get("SQLML_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test")
POSTGRESQL_URL = os.environ.get("SQLML_TEST_POSTGRESQL", "postgresql://root@127.0.0.1:5432/test")


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
    ds.write_table(["iris_train"], {k: v[~held_out] for k, v in columns.items()}, replace=True)
    ds.write_table(["iris_test"], {k: v[held_out] for k, v in columns.items()}, replace=True)


@pytest.fixture(autouse=True, scope="session")
def _input_cache_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests never write to the user's cache folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SQLML_CACHE_DIR", str(tmp_path_factory.mktemp("input-cache")))
        yield


@pytest.fixture
def duckdb_url(tmp_path: Path) -> str:
    return f"duckdb:///{tmp_path / 'test.duckdb'}"


def _server_or_skip(url: str) -> str:
    """``url`` if its server answers; in CI (CI=true) an unreachable server fails the test."""
    try:
        connect(url).close()
    except DatasourceError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the database server must be reachable in CI: {error.message}")
        pytest.skip(f"the database server is not reachable: {error.message}")
    return url


def datasource_url(kind: str, folder: Path) -> str:
    """A URL of each kind: a file in ``folder`` for the embedded ones, the test servers else."""
    if kind in ("duckdb", "sqlite"):
        return f"{kind}:///{folder / f'test.{kind}'}"
    return _server_or_skip(MYSQL_URL if kind == "mysql" else POSTGRESQL_URL)


def import_or_skip(module: str) -> Any:
    """``module``, or a skip where it is not installed; in CI (CI=true) it must be there."""
    if os.environ.get("CI") == "true":
        return importlib.import_module(module)
    return pytest.importorskip(module)


@pytest.fixture
def mysql_url() -> str:
    return _server_or_skip(MYSQL_URL)


KINDS = ["duckdb", "sqlite", "mysql", "postgresql"]


@pytest.fixture(params=KINDS)
def datasource(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Datasource]:
    """An open datasource of each kind."""
    ds = connect(datasource_url(request.param, tmp_path))
    yield ds
    ds.close()


@pytest.fixture(params=KINDS)
def iris_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A datasource URL of each kind whose database holds iris_train and iris_test."""
    url = datasource_url(request.param, tmp_path)
    ds = connect(url)
    load_iris(ds)
    ds.close()
    yield url


@pytest.fixture
def iris_duckdb_url(duckdb_url: str) -> str:
    """An embedded database holding iris_train and iris_test, for tests one database covers."""
    ds = connect(duckdb_url)
    load_iris(ds)
    ds.close()
    return duckdb_url


@pytest.fixture
def unique_name() -> str:
    """A table or model name no other test run uses (MySQL's database is shared)."""
    return f"t_{uuid.uuid4().hex[:10]}"


def run_program(tmp_path: Path, url: str, text: str, capsys) -> tuple[int, str]:
    """``sqlml run`` of ``text`` (a file in ``tmp_path``): the exit status and standard error."""
    from sqlml.cli import main

    program = tmp_path / "program.sql"
    program.write_text(text)
    status = main(["run", str(program), "--datasource", url])
    return status, capsys.readouterr().err


_HOLD = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE IF NOT EXISTS held AS SELECT 1 AS x")  # a write connection
print("open", flush=True)
sys.stdin.readline()  # until told to let it go
con.close()
"""


@contextmanager
def duckdb_held(url: str) -> Iterator[None]:
    """Another process holding the DuckDB file of ``url`` open (and writing to it: table
    ``held``) while the block runs."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, url.removeprefix("duckdb:///")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        yield
    finally:
        holder.communicate("\n", timeout=300)  # a deadlock guard
    assert holder.returncode == 0


def fetch_rows(url: str, query: str) -> list[tuple]:
    """The rows of ``query`` on ``url``, as tuples."""
    ds = connect(url)
    try:
        return [tuple(row) for row in ds.execute(query).rows]
    finally:
        ds.close()


def assert_close(found: list, expected: list, tolerance: float = 1e-6) -> None:
    """Predicted probabilities or values equal within ``tolerance``, relative and absolute
    (a model compiled into SQL sums in the database's arithmetic, TO PREDICT in float32)."""
    import numpy as np

    np.testing.assert_allclose(
        np.array(found, dtype=np.float64),
        np.array(expected, dtype=np.float64),
        rtol=tolerance,
        atol=tolerance,
    )


def _shell(url: str, folder: Path, **env: str) -> Iterator[Any]:
    from tests.test_repl import Shell

    started = Shell(url, folder / "history", **env)
    yield started
    if started.child.isalive():
        started.child.terminate(force=True)


@pytest.fixture
def shell(iris_duckdb_url: str, tmp_path: Path) -> Iterator[Any]:
    """``sqlml repl`` on the iris DuckDB in a pseudo-terminal (tests/test_repl.py's Shell)."""
    yield from _shell(iris_duckdb_url, tmp_path)


@pytest.fixture
def progress_shell(iris_duckdb_url: str, tmp_path: Path) -> Iterator[Any]:
    """The ``shell``, its statements' progress shown as plain lines (a line per stage every
    5 s, ``training (m): 40/100 rounds``): what shows a training is under way."""
    yield from _shell(iris_duckdb_url, tmp_path, SQLML_PROGRESS="1", CI="true")


@pytest.fixture
def tfjob_family() -> Iterator[None]:
    """The test family whose distributed TO TRAIN (TFJobRegressor) compiles to a TFJob."""
    from tfjob_family import TFJobFamily

    from sqlml import models

    models.register(TFJobFamily())
    yield
    models.unregister("tfjob")
