"""MySQL and PostgreSQL connections that drop while a run reads training data, writes
predictions or saves a model, and a server that "restarts" during a run (every connection cut,
new ones refused for a few seconds). sqlml runs through a loopback proxy (fault_proxy) that
does this; the real servers are never touched. Afterwards the target model and table are the
previous complete versions, and a resumed run, or the step retries, complete the work."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import datasource_url
from fault_proxy import FaultProxy
from fault_support import (
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

ROWS = 10_000  # about 0.5 MB of training rows and 1 MB of predictions on the wire
KINDS = ["mysql", "postgresql"]
# what a client says when the connection drops while it reads or sends
LOST = {
    "mysql": "MySQL: (Lost connection to MySQL server|MySQL server has gone away)",
    "postgresql": "PostgreSQL: .*server closed the connection unexpectedly",
}
SAVE = {
    "mysql": b"INSERT INTO `sqlml_model_chunks`",
    "postgresql": b'INSERT INTO "sqlml_model_chunks"',
}


@dataclass(frozen=True)
class Setup:
    kind: str
    url: str
    train: str
    model: str
    predictions: str
    program: str  # a program file: train a new version (8 rounds), then predict with it
    old_rows: list[tuple]  # the predictions of version 1 (5 rounds)


@pytest.fixture(params=KINDS)
def setup(request, unique_name, tmp_path: Path, monkeypatch, capsys):
    """Training and input tables, version 1 of a model and its predictions, made directly."""
    monkeypatch.setenv("SQLML_CACHE", "off")  # every run reads the database
    url = datasource_url(request.param, tmp_path)
    train, test = f"{unique_name}_train", f"{unique_name}_test"
    model, predictions = f"{unique_name}_m", f"{unique_name}_p"
    write(url, train, rows(ROWS, seed=1))
    write(url, test, rows(ROWS, seed=2))
    program = tmp_path / "program.sql"
    program.write_text(train_sql(train, model, 8) + predict_sql(test, predictions, model, 2))
    first = train_sql(train, model, 5) + predict_sql(test, predictions, model, 1)
    status, err = run(["-e", first, "--datasource", url], capsys)
    assert status == 0, err
    yield Setup(
        request.param, url, train, model, predictions, str(program), table_rows(url, predictions)
    )
    drop(url, [train, test, predictions], [model])


def sqlml_run(setup: Setup, url: str, capsys, *options: str) -> tuple[int, str]:
    return run(["run", setup.program, "--datasource", url, *options], capsys)


def assert_clean_failure(status: int, err: str, message: str) -> None:
    """A user error, reported as ``file: error: message`` (``message``: a pattern)."""
    assert status == 1, err
    assert re.search(f"error: {message}", err), err
    assert "Traceback" not in err


def states(url: str, run: str) -> dict[str, str]:
    return {step: state for step, (state, _, _) in step_records(url, run).items()}


def test_a_connection_lost_while_reading_training_data(setup, capsys):
    with FaultProxy.for_url(setup.url) as proxy:
        url = proxy.url(setup.url)
        proxy.cut_when(f"y FROM {setup.train}".encode(), after=200_000)
        status, err = sqlml_run(setup, url, capsys)
        assert proxy.cut_done.is_set()
        assert_clean_failure(status, err, LOST[setup.kind])
        failed = run_id(err)
        assert model_versions(setup.url, setup.model) == {1: 5}
        assert table_rows(setup.url, setup.predictions) == setup.old_rows
        records = step_records(setup.url, failed)
        train_step, predict_step = sorted(records)  # named after the statements, in order
        assert records[train_step][0] == "failed"
        assert re.match(LOST[setup.kind], records[train_step][2])
        assert records[predict_step][0] == "omitted"

        status, err = sqlml_run(setup, url, capsys, "--resume", failed)
    assert status == 0, err
    assert model_versions(setup.url, setup.model) == {1: 5, 2: 8}
    new_rows = table_rows(setup.url, setup.predictions)
    assert len(new_rows) == ROWS and new_rows != setup.old_rows
    assert set(states(setup.url, run_id(err)).values()) == {"succeeded"}


def test_a_connection_lost_while_writing_predictions(setup, capsys):
    with FaultProxy.for_url(setup.url) as proxy:
        url = proxy.url(setup.url)
        # the staging table is created, then its rows sent (LOAD DATA, INSERTs or COPY)
        proxy.cut_when(f"{setup.predictions}__sqlml_new_".encode(), after=300_000)
        status, err = sqlml_run(setup, url, capsys)
        assert proxy.cut_done.is_set()
        assert_clean_failure(status, err, LOST[setup.kind])
        failed = run_id(err)
        assert table_rows(setup.url, setup.predictions) == setup.old_rows
        assert tables_like(setup.url, f"{setup.predictions}__sqlml") == []  # staging dropped
        assert sorted(states(setup.url, failed).values()) == ["failed", "succeeded"]

        status, err = sqlml_run(setup, url, capsys, "--resume", failed)
    assert status == 0, err
    assert "skipped: unchanged since run" in err  # the training is not done again
    assert model_versions(setup.url, setup.model) == {1: 5, 2: 8}
    assert len(table_rows(setup.url, setup.predictions)) == ROWS
    assert table_rows(setup.url, setup.predictions) != setup.old_rows


def test_a_server_restart_while_saving_a_model(setup, capsys):
    """The connection drops inside the save's transaction, and the server stays away longer
    than the save's own retries: the step fails, its record is written once the server is
    back, and the resumed run saves the version whole."""
    with FaultProxy.for_url(setup.url) as proxy:
        url = proxy.url(setup.url)
        proxy.cut_when(SAVE[setup.kind], after=2_000, refuse_for=3.0)
        status, err = sqlml_run(setup, url, capsys)
        assert proxy.cut_done.is_set() and proxy.refused >= 2
        assert_clean_failure(status, err, f"cannot connect to {setup.kind}://root@127\\.0\\.0\\.1")
        failed = run_id(err)
        assert model_versions(setup.url, setup.model) == {1: 5}  # no chunk of version 2
        assert sorted(states(setup.url, failed).values()) == ["failed", "omitted"]

        status, err = sqlml_run(setup, url, capsys, "--resume", failed)
    assert status == 0, err
    assert model_versions(setup.url, setup.model) == {1: 5, 2: 8}


def test_a_server_restart_during_a_run_is_outlasted_by_step_retries(setup, capsys):
    """Every connection drops while the training data is read and new ones are refused for
    two seconds: the step's retries, one and two seconds apart, finish the run."""
    with FaultProxy.for_url(setup.url) as proxy:
        url = proxy.url(setup.url)
        proxy.cut_when(f"y FROM {setup.train}".encode(), after=100_000, refuse_for=2.0)
        status, err = sqlml_run(setup, url, capsys, "--retries", "3")
        assert proxy.cut_done.is_set() and proxy.refused >= 1
    assert status == 0, err
    records = step_records(setup.url, run_id(err))
    train_step = min(records)
    state, attempts, _ = records[train_step]
    assert state == "succeeded" and attempts >= 2  # lost (then refused), done
    assert model_versions(setup.url, setup.model) == {1: 5, 2: 8}
    assert len(table_rows(setup.url, setup.predictions)) == ROWS


def test_a_connection_lost_once_while_saving_is_retried_by_the_save(setup, capsys):
    """A save whose connection drops once is tried again on a new connection: the version is
    saved whole, numbered next, in the same run."""
    with FaultProxy.for_url(setup.url) as proxy:
        url = proxy.url(setup.url)
        proxy.cut_when(SAVE[setup.kind], after=2_000)
        status, err = sqlml_run(setup, url, capsys)
        assert proxy.cut_done.is_set()
    assert status == 0, err
    assert model_versions(setup.url, setup.model) == {1: 5, 2: 8}
