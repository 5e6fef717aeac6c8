"""TO MAXIMIZE's solver stops with the statement: ``--timeout`` and Ctrl-C end a hard integer
program that HiGHS would take minutes over (it checks no signal: it runs in a child process,
which they kill), and no solver process outlives its run, even a run quit at once by a
second Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, datasource_url
from conftest import fetch_rows as rows
from conftest import run_program as run

from sqlml.datasources import connect

GUARD = 120  # seconds: a hang guard, not a measure
SOLVER = "sqlml.statements.optimize.solver"


def _market_split(table: str) -> tuple[str, str]:
    """A market split program (Cornuéjols and Dawande): 60 binary variables, 4 equality
    rows; HiGHS proves nothing about it in minutes. The data, and the statement."""
    weights = np.random.default_rng(0).integers(0, 100, size=(4, 60))
    values = ", ".join(f"({i}, {', '.join(str(w) for w in weights[:, i])})" for i in range(60))
    data = (
        f"CREATE TABLE {table} (id INTEGER, a INTEGER, b INTEGER, c INTEGER, d INTEGER);\n"
        f"INSERT INTO {table} VALUES {values};\n"
    )
    sums = [int(total) // 2 for total in weights.sum(axis=1)]
    constraints = ", ".join(f"SUM({n} * x) = {s}" for n, s in zip("abcd", sums, strict=True))
    statement = (
        f"SELECT * FROM {table} TO MAXIMIZE SUM(a * x) CONSTRAINT {constraints}\n"
        f'WITH variables = "x(id)", var_type = "Binary" INTO {table}_out;\n'
    )
    return data, statement


@pytest.fixture(params=["duckdb", "postgresql"])
def hard(request, tmp_path: Path, unique_name: str, capsys):
    """The URL and the program file of a hard program over a table of the database."""
    url = datasource_url(request.param, tmp_path)
    data, statement = _market_split(unique_name)
    assert run(tmp_path, url, data, capsys)[0] == 0
    program = tmp_path / "hard.sql"
    program.write_text(statement)
    yield url, program, unique_name
    ds = connect(url)
    try:
        ds.execute(f"DROP TABLE IF EXISTS {unique_name}")
        ds.execute(f"DROP TABLE IF EXISTS {unique_name}_out")
    finally:
        ds.close()


def _sqlml(url: str, program: Path, *options: str) -> subprocess.Popen[str]:
    env = {**os.environ, "SQLML_DATASOURCE": url, "SQLML_CACHE_DIR": str(program.parent)}
    return subprocess.Popen(
        [sys.executable, "-m", "sqlml", "run", str(program), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + GUARD
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not after {GUARD} s"
        time.sleep(0.05)


def _solvers(parent: int) -> list[int]:
    """The solver processes that ``parent`` started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError):  # it ended meanwhile
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and SOLVER.encode() in command:
            found.append(int(entry.name))
    return found


def _gone(pid: int) -> bool:
    """Whether the process ``pid`` has ended (a zombie has)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def _solving(child: subprocess.Popen[str]) -> int:
    """Wait until ``child`` has started its solver; its pid."""
    _until(lambda: bool(_solvers(child.pid)) or child.poll() is not None, "the solver starts")
    assert child.poll() is None, child.communicate()
    return _solvers(child.pid)[0]


def _unwritten(url: str, table: str) -> None:
    assert rows(url, f"SELECT COUNT(*) FROM {table}") == [(60,)]
    ds = connect(url)
    try:
        assert not ds.table_exists([f"{table}_out"])
    finally:
        ds.close()


def test_a_timeout_stops_a_hard_integer_program(hard):
    url, program, table = hard
    child = _sqlml(url, program, "--timeout", "2")
    try:  # on a busy machine the 2 s may pass before the solver starts: the same error
        _until(lambda: bool(_solvers(child.pid)) or child.poll() is not None, "a solver")
        solvers = _solvers(child.pid)
        _, err = child.communicate(timeout=GUARD)
    finally:
        child.kill()
    assert child.returncode == 1, err
    assert "error: step s1-maximize-" in err and "ran longer than its timeout of 2 s" in err, err
    assert "Traceback" not in err
    for solver in solvers:
        _until(lambda solver=solver: _gone(solver), "the solver ends")
    _unwritten(url, table)


def test_ctrl_c_stops_a_hard_integer_program(hard):
    url, program, table = hard
    child = _sqlml(url, program)
    try:
        solver = _solving(child)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=GUARD)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert "the statement was cancelled (Ctrl-C); nothing it did was committed" in err, err
    assert "Traceback" not in err
    _until(lambda: _gone(solver), "the solver ends")
    _unwritten(url, table)


def test_a_second_ctrl_c_quits_at_once_and_leaves_no_solver(hard):
    """The run quit at once leaves its solver no parent: the solver ends by itself."""
    url, program, table = hard
    child = _sqlml(url, program)
    try:
        solver = _solving(child)
        child.send_signal(signal.SIGINT)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=GUARD)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert "Traceback" not in err
    _until(lambda: _gone(solver), "the solver ends")
    _unwritten(url, table)


def test_a_solver_killed_from_outside_is_one_error(hard):
    """The system's out-of-memory killer (SIGKILL) ending the solver: the statement's error."""
    url, program, table = hard
    child = _sqlml(url, program)
    try:
        os.kill(_solving(child), signal.SIGKILL)
        _, err = child.communicate(timeout=GUARD)
    finally:
        child.kill()
    assert child.returncode == 1, err
    assert "error: the solver's process was killed (SIGKILL) before it found a solution" in err
    assert "Traceback" not in err and "internal error" not in err, err
    _unwritten(url, table)
