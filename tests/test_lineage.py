"""A trained version's lineage: its run and step, program and position, user and host,
libraries and the fingerprints of the tables it read; kept through --resume, free of
credentials, checked as it is read."""

from __future__ import annotations

import csv
import getpass
import io
import json
import re
import socket

import pytest
from conftest import datasource_url, load_iris

from sqlml.backends.local.record import RunRecord
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import ModelError
from sqlml.models.metadata import read_metadata
from sqlml.models.store import ModelStore
from sqlml.runtime.lineage import described as lineage_rows
from sqlml.tables import MODEL_VERSIONS

TRAIN = """\
-- a model and a search, the first statement not on line 1 nor at column 1

  SELECT sepal_length, petal_length, class FROM iris_train TO TRAIN xgboost.gbtree
  WITH objective = 'multi:softprob', train.num_boost_round = 2,
    validation.select = 'SELECT sepal_length, petal_length, class FROM iris_test'
  LABEL class INTO {m};
SELECT sepal_length, petal_length, class FROM iris_train TO TRAIN xgboost.gbtree
WITH objective = 'multi:softprob', max_depth = CHOICE(2, 3), search.trials = 2,
  search.trials_table = {t}, train.num_boost_round = 2
LABEL class INTO {sm};
SELECT sepal_length, petal_length, class FROM iris_test TO EVALUATE {m} LABEL class INTO {e};
"""


@pytest.fixture(autouse=True)
def _run_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("SQLML_RUN_DIR", str(tmp_path / "runs"))


def run(program: str, url: str, capsys, *options: str) -> tuple[int, str, str]:
    """``sqlml run`` of ``program`` (a path as given) in this process: status, run id, stderr."""
    status = main(["run", program, "--datasource", url, "--jobs", "1", *options])
    err = capsys.readouterr().err
    found = re.search(r"sqlml: run ([\w-]+)", err)
    assert found, err
    return status, found.group(1), err


def described(url: str, model: str, capsys) -> dict[str, str]:
    """DESCRIBE MODEL's rows, property -> value."""
    assert main(["-e", f"DESCRIBE MODEL {model};", "--datasource", url, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["property", "value"]
    return dict(rows[1:])


def steps(url: str, run_id: str) -> dict[str, str]:
    """The run's steps and their states."""
    ds = connect(url)
    try:
        return {name: step.state for name, step in RunRecord(ds).steps(run_id).items()}
    finally:
        ds.close()


def test_training_and_search_record_their_lineage(
    iris_url, tmp_path, unique_name, capsys, monkeypatch
):
    names = {part: f"{unique_name}_{part}" for part in ("m", "sm", "t", "e")}
    (tmp_path / "train.sql").write_text(TRAIN.format(**names))
    monkeypatch.chdir(tmp_path)
    status, run_id, err = run("train.sql", iris_url, capsys)
    assert status == 0, err
    ds = connect(iris_url)
    try:
        fingerprints = {t: ds.table_fingerprint([t]) for t in ("iris_train", "iris_test")}
        searched = ModelStore(ds).load(names["sm"]).metadata["lineage"]
        (evaluated,) = ds.execute(f"SELECT accuracy FROM {names['e']}").rows[0]
        outputs = {name: step.outputs for name, step in RunRecord(ds).steps(run_id).items()}
        ds.execute(f"DROP TABLE {names['t']}")
        ds.execute(f"DROP TABLE {names['e']}")
    finally:
        ds.close()
    rows = described(iris_url, names["m"], capsys)
    recorded = steps(iris_url, run_id)
    try:
        assert all(fingerprints.values())
        assert rows["run"] == run_id
        assert rows["step"] in recorded and rows["step"].startswith("s1-train-")
        assert rows["program"] == "train.sql"
        assert rows["position"] == "line 3, column 3"
        assert rows["user"] == getpass.getuser()
        assert rows["host"] == socket.gethostname()
        libraries = json.loads(rows["libraries"])
        assert set(libraries) == {"python", "sqlml", "xgboost"}
        assert json.loads(rows["tables"]) == fingerprints  # the cache's, of both SELECTs
        # The search's version: its best trial's training, saved by the search's own step
        assert searched["run"] == run_id and searched["step"] in recorded
        assert searched["step"].startswith("s2-train-") and recorded[searched["step"]]
        assert f"{searched['step']}-trials" in recorded  # the trials' step, mapped
        assert searched["statement"] == {"line": 7, "column": 1}
        assert searched["tables"] == {"iris_train": fingerprints["iris_train"]}
        assert searched["program"] == "train.sql" and searched["user"] == getpass.getuser()
        # The run record keeps the version each step trained or measured, and TO EVALUATE's
        # metrics of it
        assert (outputs[rows["step"]]["model"], outputs[rows["step"]]["version"]) == (
            names["m"],
            "1",
        )
        (measured,) = [o for name, o in outputs.items() if "-evaluate-" in name]
        assert (measured["model"], measured["version"]) == (names["m"], "1")
        assert json.loads(measured["metrics"])["accuracy"] == pytest.approx(evaluated)
    finally:
        ds = connect(iris_url)
        ModelStore(ds).drop(names["m"])
        ModelStore(ds).drop(names["sm"])
        ds.close()


def test_lineage_survives_resume(duckdb_url, tmp_path, capsys):
    """A resumed run skips the training that succeeded: its version keeps pointing at the
    first run; a training that runs only in the resumed run points at the new one."""
    ds = connect(duckdb_url)
    load_iris(ds)
    ds.close()
    program = tmp_path / "program.sql"
    program.write_text(
        "SELECT sepal_length, class FROM iris_train TO TRAIN xgboost.gbtree\n"
        "WITH objective = 'multi:softprob', train.num_boost_round = 2 LABEL class INTO m;\n"
        "SELECT i.sepal_length, i.class FROM iris_train AS i, later\n"
        "TO TRAIN xgboost.gbtree WITH objective = 'multi:softprob', train.num_boost_round = 2\n"
        "LABEL class INTO m2;\n"
    )
    status, first, err = run(str(program), duckdb_url, capsys)
    assert status == 1, err
    assert sorted(steps(duckdb_url, first).values()) == ["failed", "succeeded"]
    assert main(["-e", "CREATE TABLE later AS SELECT 1 AS z;", "--datasource", duckdb_url]) == 0
    capsys.readouterr()
    status, second, err = run(str(program), duckdb_url, capsys, "--resume", first)
    assert status == 0, err
    resumed = steps(duckdb_url, second)
    assert sorted(resumed.values()) == ["cached", "succeeded"]
    kept, new = described(duckdb_url, "m", capsys), described(duckdb_url, "m2", capsys)
    assert (kept["run"], kept["version"]) == (first, "1")
    assert resumed[kept["step"]] == "cached" and steps(duckdb_url, first)[kept["step"]]
    assert (new["run"], resumed[new["step"]]) == (second, "succeeded")
    assert new["position"] == "line 3, column 1"
    assert set(json.loads(new["tables"])) == {"iris_train", "later"}


def test_no_password_in_the_lineage(tmp_path, unique_name, capsys):
    """Trained over a URL with a password, the version's stored metadata holds none of it."""
    server = datasource_url("postgresql", tmp_path)  # its server trusts the test's role
    url = server.replace("://root@", "://root:s3cr3t-pw@")
    assert url != server
    ds = connect(url)
    load_iris(ds)
    ds.close()
    model = f"{unique_name}_m"
    program = tmp_path / "train.sql"
    program.write_text(
        "SELECT sepal_length, class FROM iris_train TO TRAIN xgboost.gbtree "
        f"WITH objective = 'multi:softprob', train.num_boost_round = 2 LABEL class INTO {model};"
    )
    status, run_id, err = run(str(program), url, capsys)
    assert status == 0, err
    ds = connect(url)
    try:
        query = f"SELECT metadata FROM {MODEL_VERSIONS} WHERE name = {ds.param}"
        (text,) = ds.execute(query, [model]).rows[0]
        ModelStore(ds).drop(model)
    finally:
        ds.close()
    assert json.loads(text)["lineage"]["run"] == run_id
    assert "s3cr3t" not in text and "postgresql://" not in text


def test_lineage_is_optional_and_checked_when_present():
    base = {"estimator": "e", "label": "y", "rows": 1, "statement": "s", "trained_at": "t"}
    assert read_metadata("m", 1, json.dumps(base), used=False) == base  # stored before lineage
    assert lineage_rows(base) == []  # DESCRIBE MODEL shows no lineage of it
    good = {
        "run": None, "step": None, "program": None, "statement": {"line": 2, "column": 5},
        "user": "ann", "host": "h", "libraries": {"python": "3.12"}, "tables": {"t": None},
    }  # fmt: skip
    assert read_metadata("m", 1, json.dumps({**base, "lineage": good}), used=False)
    for wrong in (
        [],
        {**good, "run": 5},
        {**good, "statement": {"line": 0, "column": 1}},
        {**good, "tables": {"t": 1}},
        {key: value for key, value in good.items() if key != "host"},
    ):
        with pytest.raises(ModelError, match=r"version 1 .*its lineage is malformed"):
            read_metadata("m", 1, json.dumps({**base, "lineage": wrong}), used=False)


def test_a_pod_records_its_workflow_as_the_run(duckdb_url, monkeypatch, capsys):
    """``python -m sqlml.runtime.step IR`` in an Argo pod: the run is ``$SQLML_RUN_ID`` (the
    Workflow's name, which the compiled template gives), the step the statement's."""
    from sqlml.grammar import parse
    from sqlml.runtime import step
    from sqlml.semantics import analyze

    ds = connect(duckdb_url)
    load_iris(ds)
    ds.close()
    (statement,) = analyze(
        parse(
            "SELECT sepal_length, class FROM iris_train TO TRAIN xgboost.gbtree WITH "
            "objective = 'multi:softprob', train.num_boost_round = 2 LABEL class INTO m;"
        )
    )
    monkeypatch.setenv("SQLML_DATASOURCE", duckdb_url)
    monkeypatch.setenv("SQLML_RUN_ID", "program-x7k2p")
    assert step.main([statement.to_json()]) == 0, capsys.readouterr().err
    ds = connect(duckdb_url)
    try:
        lineage = ModelStore(ds).load("m").metadata["lineage"]
    finally:
        ds.close()
    assert (lineage["run"], lineage["step"], lineage["program"]) == (
        "program-x7k2p",
        statement.id,
        None,
    )


def test_each_table_is_fingerprinted_once_for_the_lineage_and_the_cache(
    duckdb_url, tmp_path, monkeypatch, capsys
):
    """With the input cache on, a training's reads key the cache by the fingerprints its
    lineage took: the database computes each table's once."""
    from sqlml.datasources.duckdb.source import DuckDBSource

    ds = connect(duckdb_url)
    load_iris(ds)
    ds.close()
    monkeypatch.setenv("SQLML_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SQLML_CACHE", raising=False)
    taken: list[tuple[str, ...]] = []
    fingerprint = DuckDBSource.table_fingerprint

    def counted(self, table):
        taken.append(tuple(table))
        return fingerprint(self, table)

    monkeypatch.setattr(DuckDBSource, "table_fingerprint", counted)
    program = (
        "SELECT sepal_length, class FROM iris_train TO TRAIN xgboost.gbtree WITH "
        "objective = 'multi:softprob', train.num_boost_round = 2, "
        "validation.select = 'SELECT sepal_length, class FROM iris_test' LABEL class INTO m;"
    )
    assert main(["-e", program, "--datasource", duckdb_url]) == 0, capsys.readouterr().err
    assert sorted(taken) == [("iris_test",), ("iris_train",)]
    assert len(list((tmp_path / "cache").rglob("*.npz"))) == 2  # both reads were cached
