"""Cancelling a statement: `--timeout` and Ctrl-C stop XGBoost between rounds and Keras
between batches, commit nothing (no model version, the old table kept), and are recorded
so that `--resume` runs the cancelled step again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, datasource_url, import_or_skip, load_iris
from fault_support import model_versions, table_rows, tables_like

from sqlml import ir
from sqlml.cli import main
from sqlml.models.store import ModelStore
from sqlml.runtime.datasource import connect

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
ENDLESS_XGBOOST = (  # about a millisecond a round: far longer than any test waits
    f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
    "WITH max_depth = 6, train.num_boost_round = 1000000 LABEL class INTO {model};"
)


def _run(args: list[str], capsys) -> tuple[int, str, float]:
    started = time.monotonic()
    status = main(args)
    return status, capsys.readouterr().err, time.monotonic() - started


def _file(folder: Path, text: str) -> str:
    program = folder / "program.sql"
    program.write_text(text)
    return str(program)


@pytest.mark.parametrize("kind", ["duckdb", "mysql"])
def test_a_timeout_stops_boosting_and_saves_nothing(kind, tmp_path, unique_name, capsys):
    url = datasource_url(kind, tmp_path)
    ds = connect(url)
    load_iris(ds)
    ds.close()
    program = _file(tmp_path, ENDLESS_XGBOOST.format(model=unique_name))
    status, err, took = _run(["run", program, "--datasource", url, "--timeout", "2"], capsys)
    assert status == 1
    assert "ran longer than its timeout of 2 s" in err
    assert "Traceback" not in err
    assert took < 30  # it stopped between rounds; the rounds alone take minutes
    ds = connect(url)
    try:
        assert ModelStore(ds).list_versions(unique_name) == []
    finally:
        ds.close()


def test_a_timeout_stops_keras_between_batches_and_keeps_the_old_version(
    iris_duckdb_url, tmp_path, unique_name, capsys
):
    import_or_skip("tensorflow")
    train = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN DNNClassifier "
        "WITH model.hidden_units = [8], train.epoch = {epochs}, train.batch_size = 1 "
        f"LABEL class INTO {unique_name};"
    )
    status, err, _ = _run(["-e", train.format(epochs=1), "--datasource", iris_duckdb_url], capsys)
    assert status == 0, err
    program = _file(tmp_path, train.format(epochs=100000))
    endless = ["run", program, "--datasource", iris_duckdb_url]
    status, err, took = _run([*endless, "--timeout", "8"], capsys)
    assert status == 1 and "ran longer than its timeout of 8 s" in err, err
    assert took < 40
    ds = connect(iris_duckdb_url)
    try:
        assert ModelStore(ds).list_versions(unique_name) == [1]
    finally:
        ds.close()


def test_a_timeout_while_predicting_keeps_the_old_table(
    iris_duckdb_url, tmp_path, unique_name, capsys
):
    """Scoring a big SELECT with a tiny batch size takes long; the timeout stops it between
    batches and the table keeps its old rows."""
    model, table = f"{unique_name}_m", f"{unique_name}_p"
    train = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = 3 LABEL class INTO {model};"
        f"SELECT * FROM iris_test TO PREDICT {table}.class USING {model};"
    )
    status, err, _ = _run(["-e", train, "--datasource", iris_duckdb_url], capsys)
    assert status == 0, err
    old = table_rows(iris_duckdb_url, table)
    slow = (
        f"SELECT i AS id, 5.0 AS sepal_length, 3.0 AS sepal_width, 1.5 AS petal_length, "
        f"0.2 AS petal_width FROM range(2000000) t(i) "
        f"TO PREDICT {table}.class WITH predict.batch_size = 50 USING {model};"
    )
    args = ["run", _file(tmp_path, slow), "--datasource", iris_duckdb_url, "--timeout", "2"]
    status, err, took = _run(args, capsys)
    assert status == 1 and "ran longer than its timeout of 2 s" in err, err
    assert took < 30
    assert table_rows(iris_duckdb_url, table) == old
    assert tables_like(iris_duckdb_url, f"{table}__sqlml") == []


def test_ctrl_c_cancels_the_run_which_resume_completes(iris_duckdb_url, tmp_path, unique_name):
    """Ctrl-C during training: one message, exit status 130, nothing saved, the run and the
    step recorded as cancelled; --resume trains again and finishes the program."""
    model = unique_name
    program = tmp_path / "endless.sql"
    program.write_text(ENDLESS_XGBOOST.format(model=model))
    child = subprocess.Popen(
        [sys.executable, "-m", "sqlml", "run", str(program), "--datasource", iris_duckdb_url],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        announced = child.stderr.readline()  # "sqlml: run <id>: 1 steps, logs in ..."
        run_id = announced.split()[2].rstrip(":")
        time.sleep(3)  # well into the rounds
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        rest = child.communicate(timeout=60)[1]
    finally:
        child.kill()
    assert child.returncode == 130, rest
    assert time.monotonic() - started < 20
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest
    assert "sqlml: cancelling the run" in rest
    assert "error: the statement was cancelled (Ctrl-C); nothing it did was committed" in rest
    assert f"resume with: --resume {run_id}" in rest
    ds = connect(iris_duckdb_url)
    try:
        assert ModelStore(ds).list_versions(model) == []
        states = ds.execute(
            "SELECT r.state, s.state FROM sqlml_runs AS r JOIN sqlml_run_steps AS s "
            "ON s.run_id = r.run_id WHERE r.run_id = ?",
            [run_id],
        ).rows
    finally:
        ds.close()
    assert states == [("cancelled", "cancelled")]

    program.write_text(program.read_text().replace("1000000", "5"))
    status = main(["run", str(program), "--datasource", iris_duckdb_url, "--resume", run_id])
    assert status == 0
    assert list(model_versions(iris_duckdb_url, model)) == [1]


def test_a_cancelled_step_is_not_retried(
    iris_duckdb_url, tmp_path, unique_name, capsys, monkeypatch
):
    """--retries retries failures, not a cancellation."""
    from sqlml.backends.local import executor as local

    original = local.LocalExecutor.run

    def run_and_cancel(self, workflow, resume=None):
        threading.Timer(2, self.cancel, ["Ctrl-C"]).start()
        return original(self, workflow, resume)

    monkeypatch.setattr(local.LocalExecutor, "run", run_and_cancel)
    program = _file(tmp_path, ENDLESS_XGBOOST.format(model=unique_name))
    args = ["run", program, "--datasource", iris_duckdb_url, "--retries", "3"]
    status, err, took = _run(args, capsys)
    assert status == 130, err
    assert took < 30
    assert "was cancelled (Ctrl-C)" in err


def test_a_step_pod_stopped_with_sigterm_saves_nothing(iris_duckdb_url, unique_name):
    """What Kubernetes does to a step's pod when the run is stopped (sqlml stop, a deadline):
    SIGTERM, then SIGKILL after the grace period. The step stops between rounds at once."""
    from sqlml.grammar import parse
    from sqlml.semantics import analyze

    statement = analyze(parse(ENDLESS_XGBOOST.format(model=unique_name)))[0]
    child = subprocess.Popen(
        [sys.executable, "-m", "sqlml.runtime.step", ir.to_argument(statement.to_dict())],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SQLML_DATASOURCE": iris_duckdb_url, "SQLML_CACHE": "off"},
    )
    try:
        time.sleep(4)  # imports, the read, the first rounds
        started = time.monotonic()
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=30)
    finally:
        child.kill()
    # 128 + 15, as a shell reports it: the ExitCode restart policy retries such a pod.
    assert child.returncode == 143, err
    assert time.monotonic() - started < 10  # well within Kubernetes's 30 s grace period
    assert "the statement was cancelled (the step was stopped (SIGTERM))" in err
    assert "Traceback" not in err
    ds = connect(iris_duckdb_url)
    try:
        assert ModelStore(ds).list_versions(unique_name) == []
    finally:
        ds.close()
