"""A datasource registered in the process: the toy dialect of
``tests/plugins/sqlml_toy_datasource`` (a subclass of the ``Datasource`` base class, no
built-in datasource's), imported from its folder, runs programs through the API, declares
its scheme and dialect, and leaves when unregistered. Installed with pip, through its entry
point, it runs through the ``sqlml`` command: ``tests/test_datasource_entry_point.py``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
from plugin_env import PLUGINS

from sqlml.backends.local.executor import LocalExecutor
from sqlml.datasources import (
    Datasource,
    connect,
    dialect_of,
    dialects,
    parse_url,
    register,
    source_class,
    unregister,
)
from sqlml.errors import DatasourceError

TOY = PLUGINS / "sqlml_toy_datasource" / "sqlml_toy_datasource.py"

PROGRAM = """
CREATE TABLE points (x INTEGER, y INTEGER);
INSERT INTO points
  WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < 99)
  SELECT x, CASE WHEN x >= 50 THEN 1 ELSE 0 END FROM r;
SELECT x, y FROM points TO TRAIN xgboost.gbtree
  WITH objective = "binary:logistic", train.num_boost_round = 10 LABEL y INTO toy_model;
SELECT x FROM points WHERE x IN (3, 20, 70, 96) TO PREDICT toy_predicted.y USING toy_model;
"""


@cache
def _toy_module() -> ModuleType:
    """The toy's module, from its file (its folder is not put on the path, where its
    metadata, left there by an install, would declare its entry point)."""
    spec = importlib.util.spec_from_file_location("sqlml_toy_datasource", TOY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def toy() -> Iterator[type[Datasource]]:
    """The toy dialect's class, registered; unregistered after."""
    source = _toy_module().ToySource
    register(source)
    try:
        yield source
    finally:
        unregister(source)


def test_a_toy_datasource_runs_through_the_api(toy, tmp_path):
    from sqlml.codegen import to_workflow
    from sqlml.grammar import parse
    from sqlml.semantics import analyze

    url = f"toysql:///{tmp_path / 'api.db'}"
    dialect = dialect_of(url)
    statements = analyze(parse(PROGRAM), dialect)
    result = LocalExecutor(url, tmp_path, jobs=4).run(to_workflow(statements, "toy", dialect))
    assert result.succeeded, result.error
    ds = connect(url)
    try:
        assert ds.execute("SELECT count(*) FROM toy_predicted WHERE y = (x >= 50)").rows == [(4,)]
    finally:
        ds.close()


def test_registering_declares_the_scheme_dialect_and_capabilities(toy, tmp_path):
    assert source_class("toysql:///x.db") is toy
    assert dialect_of("toysql:///x.db") == "toysql"
    assert toy.__bases__ == (Datasource,)
    assert toy.single_writer and toy.file_based and toy.fingerprint_sql is None
    assert dialects() == ["duckdb", "mysql", "sqlite", "postgres", "toysql"]
    with pytest.raises(DatasourceError) as caught:
        parse_url("oracle://x/y")
    assert "toysql:///file.toy" in caught.value.hint


def test_a_scheme_is_registered_once(toy):
    with pytest.raises(DatasourceError) as caught:

        class Other(toy):
            schemes = ("toysql",)

        register(Other)

    assert "declares the URL scheme 'toysql', which" in caught.value.message
    assert source_class("toysql:///x.db") is toy


def test_an_unregistered_scheme_is_unsupported(toy, tmp_path):
    unregister(toy)
    with pytest.raises(DatasourceError) as caught:
        parse_url(f"toysql:///{tmp_path / 'x.db'}")
    assert "unsupported datasource URL" in caught.value.message
    assert "toysql" not in caught.value.hint
    assert "toysql" not in dialects()


def test_drivers_load_only_when_their_datasource_is_used(tmp_path: Path):
    code = textwrap.dedent(
        """
        import sys
        import sqlml.cli
        from sqlml.datasources import connect, dialects
        drivers = ("duckdb", "pymysql", "psycopg", "sqlite3", "tensorflow")
        print(dialects(), sorted(m for m in drivers if m in sys.modules))
        connect(sys.argv[1]).close()
        print(sorted(m for m in drivers if m in sys.modules))
        """
    )
    url = f"sqlite:///{tmp_path / 'x.db'}"
    done = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['duckdb', 'mysql', 'sqlite', 'postgres'] []",
        "['sqlite3']",
    ]
