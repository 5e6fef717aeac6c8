"""A datasource is its subclass alone: defined here, under a scheme of its own, it runs
programs through the CLI and the API like the built-in ones, and leaves when unregistered."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from sqlml.backends.local.executor import LocalExecutor
from sqlml.cli import main
from sqlml.datasources import (
    connect,
    dialect_of,
    dialects,
    parse_url,
    register,
    source_class,
    unregister,
)
from sqlml.datasources.base import ResultSet
from sqlml.datasources.sqlite.source import SQLiteSource
from sqlml.errors import DatasourceError

PROGRAM = """
CREATE TABLE points (x INTEGER, y INTEGER);
INSERT INTO points
  WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < 99)
  SELECT x, CASE WHEN x >= 50 THEN 1 ELSE 0 END FROM r;
SELECT x, y FROM points TO TRAIN xgboost.gbtree
  WITH objective = "binary:logistic", train.num_boost_round = 10 LABEL y INTO toy_model;
SELECT x FROM points WHERE x IN (3, 20, 70, 96) TO PREDICT toy_predicted.y USING toy_model;
"""


@pytest.fixture
def toy() -> Iterator[type[SQLiteSource]]:
    """SQLite under the scheme toysql, noting the statements it runs; unregistered after."""

    class ToySource(SQLiteSource):
        schemes = ("toysql", "toy")
        ran: ClassVar[list[str]] = []

        def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
            self.ran.append(sql)
            return super().execute(sql, params)

    register(ToySource)
    try:
        yield ToySource
    finally:
        unregister(ToySource)


def test_a_toy_datasource_trains_and_predicts_through_the_cli(toy, tmp_path, capsys):
    url = f"toysql:///{tmp_path / 'toy.db'}"
    program = tmp_path / "toy.sql"
    program.write_text(PROGRAM)
    assert main(["check", str(program), "--datasource", url]) == 0, capsys.readouterr().err
    assert main(["run", str(program), "--datasource", url]) == 0, capsys.readouterr().err
    assert any(sql.startswith("CREATE TABLE points") for sql in toy.ran)

    ds = connect(f"toy:///{tmp_path / 'toy.db'}")  # the alias opens the same file
    try:
        assert isinstance(ds, toy)
        assert str(ds.url) == url
        rows = ds.execute("SELECT x, y FROM toy_predicted ORDER BY x").rows
    finally:
        ds.close()
    assert rows == [(3, 0), (20, 0), (70, 1), (96, 1)]


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
    assert dialect_of("toysql:///x.db") == "sqlite"
    assert toy.single_writer and toy.file_based and toy.fingerprint_sql is None
    assert dialects() == ["duckdb", "mysql", "sqlite", "postgres"]  # sqlite is there already
    with pytest.raises(DatasourceError) as caught:
        parse_url("oracle://x/y")
    assert "toysql:///file.db" in caught.value.hint


def test_a_scheme_is_registered_once(toy):
    with pytest.raises(DatasourceError) as caught:

        class Other(SQLiteSource):
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
    assert "sqlite" in dialects()


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
