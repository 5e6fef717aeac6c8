"""Cancelling a statement: `--timeout` and Ctrl-C stop XGBoost between rounds and Keras
between batches, commit nothing (no model version, the old table kept), and are recorded
so that `--resume` runs the cancelled step again."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, datasource_url, import_or_skip, load_iris
from fault_support import model_versions, step_records, table_rows, tables_like
from fault_support import run_id as announced_run_id

from sqlml import ir
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import DatasourceError
from sqlml.models.store import ModelStore

MEASURES = "sepal_length, sepal_width, petal_length, petal_width"
ENDLESS_XGBOOST = (  # about a millisecond a round: far longer than any test waits
    f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
    "WITH max_depth = 6, train.num_boost_round = 1000000 LABEL class INTO {model};"
)
GUARD = 600  # seconds a child process may take at most: a deadlock guard, not a measure


def _run(args: list[str], capsys) -> tuple[int, str]:
    status = main(args)
    return status, capsys.readouterr().err


def _until(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition`` holds (a state another process writes): GUARD seconds at
    most, a deadlock guard."""
    deadline = time.monotonic() + GUARD
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not after {GUARD} s"
        time.sleep(0.05)


def _stopped_early(err: str, stage: str, total: int) -> None:
    """The stage's progress lines (SQLML_PROGRESS=1; the last comes as it ends) count
    fewer units than ``total``: it stopped before its end (it may not have begun)."""
    counts = [int(n) for n in re.findall(rf"^{stage} \(\w+\): (\d+)", err, re.MULTILINE)]
    assert all(count < total for count in counts), err


def _file(folder: Path, text: str) -> str:
    program = folder / "program.sql"
    program.write_text(text)
    return str(program)


@pytest.mark.parametrize("kind", ["duckdb", "mysql"])
def test_a_timeout_stops_boosting_and_saves_nothing(
    kind, tmp_path, unique_name, capsys, monkeypatch
):
    monkeypatch.setenv("SQLML_PROGRESS", "1")
    url = datasource_url(kind, tmp_path)
    ds = connect(url)
    load_iris(ds)
    ds.close()
    program = _file(tmp_path, ENDLESS_XGBOOST.format(model=unique_name))
    status, err = _run(["run", program, "--datasource", url, "--timeout", "2"], capsys)
    assert status == 1
    assert "ran longer than its timeout of 2 s" in err
    assert "Traceback" not in err
    _stopped_early(err, "training", 1000000)  # between rounds; they alone take minutes
    ds = connect(url)
    try:
        assert ModelStore(ds).list_versions(unique_name) == []
    finally:
        ds.close()


def test_a_timeout_stops_keras_between_batches_and_keeps_the_old_version(
    iris_duckdb_url, tmp_path, unique_name, capsys, monkeypatch
):
    import_or_skip("tensorflow")
    monkeypatch.setenv("SQLML_PROGRESS", "1")
    train = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN DNNClassifier "
        "WITH model.hidden_units = [8], train.epoch = {epochs}, train.batch_size = 1 "
        f"LABEL class INTO {unique_name};"
    )
    status, err = _run(["-e", train.format(epochs=1), "--datasource", iris_duckdb_url], capsys)
    assert status == 0, err
    program = _file(tmp_path, train.format(epochs=100000))
    endless = ["run", program, "--datasource", iris_duckdb_url]
    status, err = _run([*endless, "--timeout", "8"], capsys)
    assert status == 1 and "ran longer than its timeout of 8 s" in err, err
    _stopped_early(err, "training", 100000)
    ds = connect(iris_duckdb_url)
    try:
        assert ModelStore(ds).list_versions(unique_name) == [1]
    finally:
        ds.close()


def test_a_timeout_while_predicting_keeps_the_old_table(
    iris_duckdb_url, tmp_path, unique_name, capsys, monkeypatch
):
    """Scoring a big SELECT with a tiny batch size takes long; the timeout stops it between
    batches and the table keeps its old rows."""
    monkeypatch.setenv("SQLML_PROGRESS", "1")
    model, table = f"{unique_name}_m", f"{unique_name}_p"
    train = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
        f"WITH train.num_boost_round = 3 LABEL class INTO {model};"
        f"SELECT * FROM iris_test TO PREDICT {table}.class USING {model};"
    )
    status, err = _run(["-e", train, "--datasource", iris_duckdb_url], capsys)
    assert status == 0, err
    old = table_rows(iris_duckdb_url, table)
    slow = (
        f"SELECT i AS id, 5.0 AS sepal_length, 3.0 AS sepal_width, 1.5 AS petal_length, "
        f"0.2 AS petal_width FROM range(2000000) t(i) "
        f"TO PREDICT {table}.class WITH predict.batch_size = 50 USING {model};"
    )
    args = ["run", _file(tmp_path, slow), "--datasource", iris_duckdb_url, "--timeout", "2"]
    status, err = _run(args, capsys)
    assert status == 1 and "ran longer than its timeout of 2 s" in err, err
    _stopped_early(err, "predicting", 2000000)
    assert table_rows(iris_duckdb_url, table) == old
    assert tables_like(iris_duckdb_url, f"{table}__sqlml") == []


# The stages of progress lines (SQLML_PROGRESS=1), "training (m): 40/100 rounds".
STAGES = ("reading", "loading", "compiling", "training", "validating", "predicting", "scoring")
CANCELLED = "error: the statement was cancelled (Ctrl-C); nothing it did was committed"


def _until_a_line_holds(child: subprocess.Popen, marker: str) -> list[str]:
    """The lines of ``child``'s standard error up to the first holding ``marker`` (which
    is not among them); killed past GUARD seconds, the child fails the test, not hangs."""
    guard = threading.Timer(GUARD, child.kill)
    guard.start()
    try:
        seen = []
        while (line := child.stderr.readline()) and marker not in line:
            seen.append(line)
    finally:
        guard.cancel()
    assert line, f"no line holds {marker!r} (or {GUARD} s went by): {''.join(seen)}"
    return seen


def _ctrl_c(program: Path, url: str, marker: str) -> tuple[int, str, list[str]]:
    """``sqlml run PROGRAM`` in a child process, sent SIGINT once a progress line on its
    standard error holds ``marker`` (the statement is under way): the exit status, the run
    id and the lines of standard error after the run's announcement."""
    child = subprocess.Popen(
        [sys.executable, "-m", "sqlml", "run", str(program), "--datasource", url],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "SQLML_PROGRESS": "1"},  # a line per stage every 5 s
    )
    try:
        announced = child.stderr.readline()  # "sqlml: run <id>: 1 step, logs in ..."
        run_id = announced.split()[2].rstrip(":")
        seen = _until_a_line_holds(child, marker)
        child.send_signal(signal.SIGINT)
        rest = child.communicate(timeout=GUARD)[1]  # it stops, or the test fails
    finally:
        child.kill()
    return child.returncode, run_id, ("".join(seen) + rest).splitlines()


def _said_once(err: list[str], program: Path, run_id: str) -> None:
    """Standard error holds one line about the cancellation, the resume hint and the run's
    summary line: no traceback, no second message."""
    told = [line for line in err if not line.startswith(STAGES)]
    assert told[:2] == [f"{program}:1:1: {CANCELLED}", f"  resume with: --resume {run_id}"], err
    assert len(told) == 3 and told[2].startswith("sqlml: done: "), err


def _recorded(url: str, run_id: str) -> tuple[str, dict[str, str]]:
    """The run's state and each of its steps' in the run record."""
    ds = connect(url)
    try:
        steps = ds.execute(
            "SELECT r.state, s.step, s.state FROM sqlml_runs AS r JOIN sqlml_run_steps AS s "
            "ON s.run_id = r.run_id WHERE r.run_id = ?",
            [run_id],
        ).rows
    finally:
        ds.close()
    return steps[0][0], {step: state for _, step, state in steps}


def _running(url: str, run_id: str) -> list[str]:
    """The steps the run record says are running (none while the record cannot be read:
    the run is writing it)."""
    try:
        _, steps = _recorded(url, run_id)
    except (DatasourceError, IndexError):
        return []
    return [step for step, state in steps.items() if state == "running"]


def _shown_models(url: str) -> list[tuple[str, int]]:
    """What SHOW MODELS lists: each model's name and newest version."""
    ds = connect(url)
    try:
        return [(name, version) for name, version, _ in ModelStore(ds).catalog()]
    finally:
        ds.close()


def _ctrl_c_then_resume(
    url: str, folder: Path, endless: str, short: str, marker: str, capsys
) -> tuple[str, dict[str, str]]:
    """Ctrl-C a run of ``endless`` once ``marker`` shows (it would run for hours), check
    what it said, then resume it as ``short``: the run's id and its recorded steps' states."""
    program = folder / "endless.sql"
    program.write_text(endless)
    status, run_id, err = _ctrl_c(program, url, marker)
    assert status == 130, err
    _said_once(err, program, run_id)
    state, steps = _recorded(url, run_id)
    assert state == "cancelled"
    assert main(["status", run_id, "--datasource", url]) == 0
    shown = capsys.readouterr()
    assert f"run {run_id}: cancelled" in shown.err and "| cancelled |" in shown.out, shown
    program.write_text(short)
    assert main(["run", str(program), "--datasource", url, "--resume", run_id]) == 0
    _, resumed = capsys.readouterr()
    assert f"(resuming {run_id})" in resumed and "FAIL=0 ERROR=0" in resumed, resumed
    return run_id, steps


def _train_first(url: str, sql: str, capsys) -> None:
    """A previous version (and table) that the cancelled run must leave as they are."""
    status, err = _run(["-e", sql, "--datasource", url], capsys)
    assert status == 0, err


XGBOOST = (
    f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
    "WITH max_depth = 6, train.num_boost_round = {rounds} LABEL class INTO {model};"
)


def test_ctrl_c_stops_boosting_which_resume_completes(
    iris_duckdb_url, tmp_path, unique_name, capsys
):
    """Ctrl-C during the rounds: exit status 130 at once, one line, the old version kept, the
    run and the step recorded as cancelled; --resume trains again and finishes the program."""
    model = unique_name
    _train_first(iris_duckdb_url, XGBOOST.format(rounds=3, model=model), capsys)
    _, steps = _ctrl_c_then_resume(
        iris_duckdb_url,
        tmp_path,
        XGBOOST.format(rounds=1000000, model=model),
        XGBOOST.format(rounds=5, model=model),
        "/1000000 rounds",
        capsys,
    )
    assert list(steps.values()) == ["cancelled"]
    assert model_versions(iris_duckdb_url, model) == {1: 3, 2: 5}  # none between them


@pytest.mark.keras
def test_ctrl_c_stops_keras_which_resume_completes(iris_duckdb_url, tmp_path, unique_name, capsys):
    """Ctrl-C between Keras batches keeps the old version; --resume trains the new one."""
    import_or_skip("tensorflow")
    train = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN DNNClassifier "
        "WITH model.hidden_units = [8], train.epoch = {epochs}, train.batch_size = 1 "
        f"LABEL class INTO {unique_name};"
    )
    _train_first(iris_duckdb_url, train.format(epochs=1), capsys)
    _, steps = _ctrl_c_then_resume(
        iris_duckdb_url,
        tmp_path,
        train.format(epochs=100000),
        train.format(epochs=1),
        "/100000 epochs",
        capsys,
    )
    assert list(steps.values()) == ["cancelled"]
    ds = connect(iris_duckdb_url)
    try:
        assert ModelStore(ds).list_versions(unique_name) == [1, 2]
    finally:
        ds.close()


@pytest.mark.keras
def test_keras_stops_at_the_first_check_after_a_cancel_mid_epoch():
    """Keras checks the token after every batch: cancelled as the third batch of an epoch
    of 96 ends, it runs no fourth (the optimizer took three steps)."""
    import_or_skip("tensorflow")
    from sqlml.models.keras.library import keras as load_keras
    from sqlml.models.keras.model.network import fit
    from sqlml.runtime.cancel import Cancelled, Token
    from sqlml.runtime.context import Context

    class CancelledAtTheThirdCheck(Token):
        checks = 0

        def check(self) -> None:
            self.checks += 1
            if self.checks == 3:
                self.cancel("a test")
            super().check()

    keras = load_keras()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    rows = np.random.default_rng(0).uniform(size=(96, 5))
    ds = connect("duckdb:///:memory:")
    try:
        context = Context(ds, token=CancelledAtTheThirdCheck())
        with pytest.raises(Cancelled):
            fit(context, keras, model, rows[:, :4], rows[:, 4], epochs=1, batch_size=1)
    finally:
        ds.close()
    assert int(model.optimizer.iterations) == 3


def test_ctrl_c_stops_a_search_which_keeps_no_trial(iris_duckdb_url, tmp_path, unique_name, capsys):
    """Ctrl-C while a trial trains (others done): the trials done are dropped too, the model
    keeps its version; --resume runs the trials again and saves the best."""
    model = unique_name
    search = (
        f"SELECT {MEASURES}, class FROM iris_train TO TRAIN xgboost.gbtree "
        "WITH objective = 'multi:softprob', max_depth = CHOICE(1, 3), "
        "train.num_boost_round = CHOICE(3, {rounds}), search.algorithm = grid "
        f"LABEL class INTO {model};"
    )
    _train_first(iris_duckdb_url, XGBOOST.format(rounds=3, model=model), capsys)
    _, steps = _ctrl_c_then_resume(
        iris_duckdb_url,
        tmp_path,
        search.format(rounds=1000000),
        search.format(rounds=4),
        "/1000000 rounds",  # not the line of a trial that ended
        capsys,
    )
    assert sorted(steps.values()) == ["cancelled", "omitted"]  # the trials; the search's end
    assert _shown_models(iris_duckdb_url) == [(model, 2)]  # no trial left behind
    ds = connect(iris_duckdb_url)
    try:
        assert ds.execute(f"SELECT COUNT(*) FROM {model}_trials").rows == [(4,)]
    finally:
        ds.close()


def test_ctrl_c_while_predicting_keeps_the_old_table(
    iris_duckdb_url, tmp_path, unique_name, capsys
):
    """Ctrl-C while the predictions are written: the table keeps its old rows and no
    temporary table is left; --resume writes the new ones."""
    model, table = f"{unique_name}_m", f"{unique_name}_p"
    _train_first(
        iris_duckdb_url,
        XGBOOST.format(rounds=3, model=model)
        + f"SELECT * FROM iris_test TO PREDICT {table}.class USING {model};",
        capsys,
    )
    old = table_rows(iris_duckdb_url, table)
    predict = (
        "SELECT i AS id, 5.0 AS sepal_length, 3.0 AS sepal_width, 1.5 AS petal_length, "
        "0.2 AS petal_width FROM range({rows}) t(i) "
        f"TO PREDICT {table}.class USING {model};"
    )
    # 20 million rows: the predicting stage (read, score, write in batches) lasts past the
    # first progress line, 5 s in.
    _, steps = _ctrl_c_then_resume(
        iris_duckdb_url,
        tmp_path,
        predict.format(rows=20000000),
        predict.format(rows=7),
        "predicting (",
        capsys,
    )
    assert list(steps.values()) == ["cancelled"]
    assert len(old) == 30 and len(table_rows(iris_duckdb_url, table)) == 7
    assert tables_like(iris_duckdb_url, f"{table}__sqlml") == []


def test_ctrl_c_interrupts_a_long_sql_statement_on_sqlite(tmp_path, capsys):
    """SQLite runs the steps in the main thread: Ctrl-C still interrupts the statement at
    once (it is heard in a thread of its own), and the table is not created."""
    url = datasource_url("sqlite", tmp_path)
    create = (
        "CREATE TABLE counted AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL "
        "SELECT i + 1 FROM c WHERE i < {rows}) SELECT COUNT(*) AS n FROM c;"
    )
    program = tmp_path / "count.sql"
    program.write_text(create.format(rows=10**12))  # hours
    child = subprocess.Popen(
        [sys.executable, "-m", "sqlml", "run", str(program), "--datasource", url],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        run_id = child.stderr.readline().split()[2].rstrip(":")
        _until(lambda: _running(url, run_id) == ["s1-create"], "the step runs")
        child.send_signal(signal.SIGINT)
        err = child.communicate(timeout=GUARD)[1].splitlines()  # it stops, or the test fails
    finally:
        child.kill()
    assert child.returncode == 130, err
    _said_once(err, program, run_id)
    assert tables_like(url, "counted") == []
    assert _recorded(url, run_id) == ("cancelled", {"s1-create": "cancelled"})
    program.write_text(create.format(rows=3))
    assert main(["run", str(program), "--datasource", url, "--resume", run_id]) == 0
    ds = connect(url)
    try:
        assert ds.execute("SELECT n FROM counted").rows == [(3,)]
    finally:
        ds.close()


SLOW_TO_STOP = """
import sys, time
from sqlml.backends.local.report import _ctrl_c_cancels

class Executor:  # a run that does not stop when cancelled
    def cancel(self, reason):
        print("cancelled:", reason, flush=True)

with _ctrl_c_cancels(Executor()):
    print("running", flush=True)
    time.sleep(3600)
"""


def test_a_run_slow_to_stop_says_so_and_a_second_ctrl_c_quits_at_once():
    """2 s after the first Ctrl-C a run still stopping says so; the second quits at once."""
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW_TO_STOP],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert child.stdout.readline() == "running\n"
        child.send_signal(signal.SIGINT)
        assert child.stdout.readline() == "cancelled: Ctrl-C\n"
        still = child.stderr.readline()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=GUARD)  # the run would go on for an hour
    finally:
        child.kill()
    assert still == "sqlml: still cancelling the run (Ctrl-C again to quit at once)\n"
    assert child.returncode == 130, err
    assert err == "sqlml: quit at once (a second Ctrl-C)\n"


def test_a_cancelled_step_is_not_retried(
    iris_duckdb_url, tmp_path, unique_name, capsys, monkeypatch
):
    """--retries retries failures, not a cancellation: Ctrl-C as the step's statement
    starts, and its one attempt is the last."""
    from sqlml.backends.local import executor as local
    from sqlml.backends.local import tasks

    executors: list[local.LocalExecutor] = []
    original_init, original_execute = local.LocalExecutor.__init__, tasks.execute

    def kept(self, *args, **options):
        original_init(self, *args, **options)
        executors.append(self)

    def ctrl_c_then_execute(*args, **options):
        executors[0].cancel("Ctrl-C")
        return original_execute(*args, **options)

    monkeypatch.setattr(local.LocalExecutor, "__init__", kept)
    monkeypatch.setattr(tasks, "execute", ctrl_c_then_execute)
    program = _file(tmp_path, ENDLESS_XGBOOST.format(model=unique_name))
    args = ["run", program, "--datasource", iris_duckdb_url, "--retries", "3"]
    status, err = _run(args, capsys)
    assert status == 130, err
    assert "was cancelled (Ctrl-C)" in err
    [(state, attempts, _)] = step_records(iris_duckdb_url, announced_run_id(err)).values()
    assert (state, attempts) == ("cancelled", 1)


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
        env={
            **os.environ,
            "SQLML_DATASOURCE": iris_duckdb_url,
            "SQLML_CACHE": "off",
            "SQLML_PROGRESS": "1",  # a line per stage every 5 s
        },
    )
    try:
        _until_a_line_holds(child, "/1000000 rounds")  # the rounds are under way
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=GUARD)  # it stops, or the test fails
    finally:
        child.kill()
    # 128 + 15, as a shell reports it: the ExitCode restart policy retries such a pod.
    assert child.returncode == 143, err
    assert "the statement was cancelled (the step was stopped (SIGTERM))" in err
    assert "Traceback" not in err
    ds = connect(iris_duckdb_url)
    try:
        assert ModelStore(ds).list_versions(unique_name) == []
    finally:
        ds.close()


def test_a_run_cancelled_between_two_steps_is_cancelled_not_succeeded(duckdb_url, tmp_path):
    """Ctrl-C after a step ended and before the next started: nothing more runs, and the run
    ends with the cancellation, recorded, as if a statement had been stopped."""
    from sqlml.backends.local.executor import LocalExecutor
    from sqlml.codegen import to_workflow
    from sqlml.grammar import parse
    from sqlml.runtime.cancel import Cancelled
    from sqlml.semantics import analyze

    statements = analyze(parse("CREATE TABLE first_t AS SELECT 1 AS x;\nSELECT * FROM first_t;"))
    running: list[LocalExecutor] = []

    def ctrl_c_after(end: object) -> None:  # the first step has ended
        running[0].cancel("Ctrl-C")

    executor = LocalExecutor(
        duckdb_url, tmp_path, jobs=1, run_dir=tmp_path / "runs", on_done=ctrl_c_after
    )
    running.append(executor)
    result = executor.run(to_workflow(statements, "between"))
    assert isinstance(result.error, Cancelled)
    assert list(result.states.values()) == ["succeeded", "omitted"]
    assert _recorded(duckdb_url, result.run_id) == (
        "cancelled",
        {statements[0].id: "succeeded", statements[1].id: "omitted"},
    )


def test_a_run_cancelled_while_it_starts_runs_no_step(duckdb_url, tmp_path, monkeypatch):
    """Ctrl-C while the run connects (before it could be told): it is cancelled as it
    starts, and no step runs."""
    from sqlml.backends.local import executor as local
    from sqlml.codegen import to_workflow
    from sqlml.grammar import parse
    from sqlml.runtime.cancel import Cancelled
    from sqlml.semantics import analyze

    statements = analyze(parse("CREATE TABLE never_t AS SELECT 1 AS x;"))
    executor = local.LocalExecutor(duckdb_url, tmp_path, jobs=1, run_dir=tmp_path / "runs")

    def ctrl_c_while_connecting(*args: object) -> object:
        executor.cancel("Ctrl-C")
        return connect(*args)

    monkeypatch.setattr(local, "connect", ctrl_c_while_connecting)
    result = executor.run(to_workflow(statements, "starting"))
    assert isinstance(result.error, Cancelled) and "(Ctrl-C)" in result.error.message
    assert _recorded(duckdb_url, result.run_id) == ("cancelled", {statements[0].id: "omitted"})
    assert tables_like(duckdb_url, "never_t") == []
