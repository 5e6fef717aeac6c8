"""A `sqlml run` killed (SIGKILL) half way through saving a model or writing predictions, and
at random points of a run, on all four databases: the models and the table keep their
previous complete versions, what the killed run left behind is dropped or ignored, and the
next run succeeds."""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import pytest
from conftest import KINDS, datasource_url
from fault_support import (
    Child,
    drop,
    model_versions,
    predict_sql,
    rows,
    run,
    run_id,
    step_records,
    table_rows,
    tables_like,
    train_sql,
    write,
)

# Runs sqlml, pausing (to be killed) inside the model save's transaction, after two of the
# model's chunks were inserted, or inside a prediction's write, after half its rows went to
# the staging table; "run" runs it as it is (to be killed at a random moment).
CHILD = """
import sys, time
from sqlml.cli import main
from sqlml.models import store as model_store
from sqlml.datasources.duckdb import source as duckdb
from sqlml.datasources.mysql import source as mysql
from sqlml.datasources.postgresql import source as postgresql
from sqlml.datasources.sqlite import source as sqlite

url, program, where = sys.argv[1:4]
source = {
    "duckdb": duckdb.DuckDBSource,
    "sqlite": sqlite.SQLiteSource,
    "mysql": mysql.MySQLSource,
    "postgresql": postgresql.PostgreSQLSource,
}[url.split(":")[0]]
execute, insert = source.execute, source._insert

def pause():
    print("paused", flush=True)
    time.sleep(600)

def saving(self, sql, params=()):
    if sql.startswith(f"INSERT INTO {self.quote([model_store.CHUNKS])}") and params[2] == 2:
        pause()
    return execute(self, sql, params)

def writing(self, table, columns):
    insert(self, table, {k: v[: len(v) // 2] for k, v in columns.items()})
    pause()

model_store.CHUNK_BYTES = 1024
if where == "save":
    source.execute = saving
elif where == "write":
    source._insert = writing
print("started", flush=True)
sys.exit(main(["run", program, "--datasource", url, "--jobs", "1"]))
"""


def _setup(url: str, tmp_path: Path, name: str, capsys, count: int = 2_000) -> tuple[str, ...]:
    """A model (version 1: 5 rounds), its predictions and a program that trains version 2
    (8 rounds) and predicts again."""
    train, test = f"{name}_train", f"{name}_test"
    model, predictions = f"{name}_m", f"{name}_p"
    write(url, train, rows(count, seed=1))
    write(url, test, rows(count, seed=2))
    program = tmp_path / "program.sql"
    program.write_text(train_sql(train, model, 8) + predict_sql(test, predictions, model, 2))
    first = train_sql(train, model, 5) + predict_sql(test, predictions, model, 1)
    status, err = run(["-e", first, "--datasource", url], capsys)
    assert status == 0, err
    return str(program), model, predictions, train, test


@pytest.fixture(params=KINDS)
def trained(request, tmp_path: Path, unique_name, monkeypatch, capsys):
    """A URL, a model, its predictions and a program that trains and predicts again."""
    monkeypatch.setenv("SQLML_CACHE", "off")
    url = datasource_url(request.param, tmp_path)
    program, model, predictions, train, test = _setup(url, tmp_path, unique_name, capsys)
    yield url, program, model, predictions
    drop(url, [train, test, predictions], [model])


def kill_when_paused(url: str, program: str, where: str) -> str:
    """Run ``program`` in a child killed at ``where``; the killed run's id."""
    child = Child(CHILD, url, program, where)
    try:
        child.wait_for("started")
        child.wait_for("paused")
        os.kill(child.process.pid, signal.SIGKILL)
        status, err = child.finish()
    finally:
        child.kill()
    assert status == -signal.SIGKILL
    return run_id(err)


def test_a_run_killed_while_saving_a_model(trained, capsys):
    url, program, model, predictions = trained
    old = table_rows(url, predictions)
    killed = kill_when_paused(url, program, "save")
    assert model_versions(url, model) == {1: 5}  # and no chunk of the killed save
    assert table_rows(url, predictions) == old
    # the record cannot know: the killed step stays "running", and resuming runs it again
    assert sorted(state for state, _, _ in step_records(url, killed).values()) == ["running"]

    status, err = run(["run", program, "--datasource", url, "--resume", killed], capsys)
    assert status == 0, err
    assert model_versions(url, model) == {1: 5, 2: 8}
    assert table_rows(url, predictions) != old


def test_a_run_killed_while_writing_predictions(trained, capsys):
    url, program, model, predictions = trained
    old = table_rows(url, predictions)
    kill_when_paused(url, program, "write")
    assert table_rows(url, predictions) == old
    left = tables_like(url, f"{predictions}__sqlml")
    # The others write in one transaction, which the kill rolled back; MySQL keeps the
    # staging table (its DDL commits at once)
    assert len(left) == (1 if url.startswith("mysql") else 0)
    assert model_versions(url, model) == {1: 5, 2: 8}  # the training before it was done

    status, err = run(["run", program, "--datasource", url], capsys)
    assert status == 0, err
    new = table_rows(url, predictions)
    assert len(new) == len(old) and new != old
    assert [row[0] for row in new] == [row[0] for row in old]  # every id once
    assert tables_like(url, f"{predictions}__sqlml") == []  # the next write dropped it
    assert model_versions(url, model) == {1: 5, 2: 8, 3: 8}


KILLS = 4  # random kills per database


@pytest.mark.parametrize("kind", KINDS)
def test_runs_killed_at_random_moments_leave_whole_models_and_tables(
    kind, tmp_path, unique_name, monkeypatch, capsys
):
    """Each kill lands somewhere in reading, training, saving, predicting or writing; after
    each, every stored version is whole and the predictions are one run's, all of them."""
    monkeypatch.setenv("SQLML_CACHE", "off")
    url = datasource_url(kind, tmp_path)
    program, model, predictions, train, test = _setup(url, tmp_path, unique_name, capsys)
    seed = random.randrange(2**32)
    moments = random.Random(seed)
    try:
        ids = [row[0] for row in table_rows(url, predictions)]
        child = Child(CHILD, url, program, "run")  # how long a whole run takes in a child
        child.wait_for("started")
        started = time.monotonic()
        status, err = child.finish()
        assert status == 0, err
        whole_run = time.monotonic() - started
        for _ in range(KILLS):
            child = Child(CHILD, url, program, "run")
            try:
                child.wait_for("started")
                time.sleep(moments.uniform(0, whole_run * 1.2))
                os.kill(child.process.pid, signal.SIGKILL)
                child.finish()
            finally:
                child.kill()
            versions = model_versions(url, model)  # each whole, no orphaned chunk
            assert versions and set(versions.values()) <= {5, 8}, f"seed {seed}"
            predicted = table_rows(url, predictions)
            assert [row[0] for row in predicted] == ids, f"seed {seed}"
            assert len({row[1] for row in predicted}) == 1, f"seed {seed}: a mix of two writes"
            left = tables_like(url, f"{predictions}__sqlml")
            assert kind == "mysql" or left == [], f"seed {seed}: {left}"
        status, err = run(["run", program, "--datasource", url], capsys)
        assert status == 0, err
        assert tables_like(url, f"{predictions}__sqlml") == [], f"seed {seed}"
    finally:
        drop(url, [train, test, predictions], [model])
