"""A new dialect, pip-installed: ``tests/plugins/sqlml_toy_datasource`` declares, through an
entry point of ``sqlml.datasources``, a subclass of the ``Datasource`` base class (no
built-in datasource's) with its own URL scheme, connection, catalog, SQL and sqlglot
dialect. ``python -m sqlml``, a new process of a fresh environment, trains and predicts
through it (in one process and in two workers), checks a program against it and lists its
tables in the shell; and everywhere SQL differs by database, sqlml asks the toy and gets the
toy's answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugin_env import PLUGINS, PluginEnv

PROGRAM = """
CREATE TABLE points (x INTEGER, y INTEGER);
INSERT INTO points
  WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < 99)
  SELECT x, CASE WHEN x >= 50 THEN 1 ELSE 0 END FROM r;
SELECT x, y FROM points TO TRAIN xgboost.gbtree
  WITH objective = "binary:logistic", train.num_boost_round = 10 LABEL y INTO toy_model;
SELECT x FROM points WHERE x IN (3, 20, 70, 96) TO PREDICT toy_predicted.y USING toy_model;
"""
# Two processes, each reading its part of the rows (the toy's partitioning) on its own
# connection (the toy's for_workers: the base class's, the same file).
WORKERS = """
SELECT x, y FROM points TO TRAIN xgboost.gbtree
  WITH objective = "binary:logistic", train.num_boost_round = 10, train.workers = 2
  LABEL y INTO toy_workers;
SELECT x FROM points WHERE x IN (3, 96) TO PREDICT toy_workers_predicted.y USING toy_workers;
"""

# Run in the environment with the toy's URL: what sqlml's dispatch points answer for it.
ASKED = """
import json, sys
from sqlml.backends.argo.pods import parallelism
from sqlml.datasources import Datasource, connect, dialect_of, dialects, source_class
from sqlml.repl.magic import server_version
from sqlml.runtime import partitions
from sqlml.statements.run.handler import credentials_env

url = sys.argv[1]
ds = connect(url)
number = partitions.number(ds, {"x": "i"}, 3, None)
table, relation = partitions.stage(ds, "SELECT x FROM points", {"x": "i"}, 3)
parts = [partitions.part(ds, relation, {"x": "i"}, p) for p in range(3)]
rows = [sorted(x for (x,) in ds.execute(sql).rows) for sql in parts]
partitions.drop(ds, table)
print(json.dumps({
    "class": source_class(url).__name__,
    "bases": [base.__qualname__ for base in source_class(url).__bases__],
    "base is sqlml's": source_class(url).__bases__ == (Datasource,),
    "dialect": dialect_of(url),
    "dialects": dialects(),
    "predicted": ds.execute("SELECT x, y FROM toy_predicted ORDER BY x").rows,
    "by workers": ds.execute("SELECT x, y FROM toy_workers_predicted ORDER BY x").rows,
    "version": server_version(ds),
    "parts use toy_part": "toy_part(" in number,
    "helper table dropped": not ds.table_exists([table]),
    "rows in parts": sorted(x for part in rows for x in part),
    "parts not empty": all(rows),
    "parallelism": parallelism("toysql"),
    "withheld": "TOY_PASSWORD" in credentials_env(),
}))
ds.close()
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> PluginEnv:
    where = tmp_path_factory.mktemp("toy")
    return PluginEnv.create(where / "env", PLUGINS / "sqlml_toy_datasource")


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "toy.sql"
    path.write_text(PROGRAM)
    return path


def test_a_new_dialect_trains_and_predicts_through_the_sqlml_command(env, program, tmp_path):
    url = f"toysql:///{tmp_path / 'toy.db'}"
    result = env.sqlml("run", program.name, "--datasource", url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (tmp_path / "workers.sql").write_text(WORKERS)
    result = env.sqlml("run", "workers.sql", "--datasource", url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    asked = env.run("-c", ASKED, url, cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout) == {
        "class": "ToySource",
        "bases": ["Datasource"],
        "base is sqlml's": True,
        "dialect": "toysql",
        "dialects": ["duckdb", "mysql", "sqlite", "postgres", "toysql"],
        "predicted": [[3, 0], [20, 0], [70, 1], [96, 1]],
        "by workers": [[3, 0], [96, 1]],
        "version": "ToySQL 0.1",
        "parts use toy_part": True,
        "helper table dropped": True,
        "rows in parts": list(range(100)),
        "parts not empty": True,
        "parallelism": 3,
        "withheld": True,
    }


def test_a_program_is_checked_against_the_new_dialect(env, program, tmp_path):
    url = f"toysql:///{tmp_path / 'check.db'}"
    result = env.sqlml("check", program.name, "--datasource", url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "error" not in result.stderr
    wrong = tmp_path / "wrong.sql"
    wrong.write_text(
        "SELECT x, y FROM no_such_table TO TRAIN xgboost.gbtree\n"
        '  WITH objective = "binary:logistic" LABEL y INTO other_model;\n'
    )
    result = env.sqlml("check", wrong.name, "--datasource", url, cwd=tmp_path)
    assert result.returncode == 1
    assert "no_such_table" in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_the_shell_lists_the_new_dialect_s_tables(env, tmp_path):
    url = f"toysql:///{tmp_path / 'shell.db'}"
    script = (
        "CREATE TABLE toy_a (n INTEGER, s TEXT);\nCREATE VIEW toy_b AS SELECT n FROM toy_a;\n\\dt\n"
    )
    result = env.sqlml("repl", "--datasource", url, cwd=tmp_path, input=script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-4:] == [
        "-------+---------",
        " toy_a |       2",
        " toy_b |       1",
        "(2 rows)",
    ], result.stdout
