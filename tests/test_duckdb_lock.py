"""A DuckDB file another process has open (sqlml ui's page reading it, another sqlml
command) is waited for a moment before sqlml gives up on it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from sqlml.datasources import connect
from sqlml.datasources.duckdb import source as duckdb_source
from sqlml.datasources.duckdb.source import LOCK_WAIT
from sqlml.errors import DatasourceBusy

HOLD = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print("open", flush=True)
sys.stdin.readline()  # until told to let it go
con.close()
"""
GUARD = 300  # seconds the holder may take to end: a deadlock guard


def _held(path: Path) -> subprocess.Popen[str]:
    """Another process holding ``path`` open until :func:`_let_go`."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "open\n"
    return holder


def _let_go(holder: subprocess.Popen[str]) -> None:
    """The holder closes the file and ends."""
    holder.communicate("\n", timeout=GUARD)
    assert holder.returncode == 0


def test_a_file_another_process_has_open_for_a_moment_is_waited_for(tmp_path, monkeypatch):
    path = tmp_path / "db.duckdb"
    connect(f"duckdb:///{path}").close()
    holder = _held(path)
    waits: list[float] = []

    def let_go_while_waiting(seconds: float) -> None:  # the file was in use: tried again
        if not waits:
            _let_go(holder)
        waits.append(seconds)

    clock = SimpleNamespace(monotonic=time.monotonic, sleep=let_go_while_waiting)
    monkeypatch.setattr(duckdb_source, "time", clock)
    try:
        ds = connect(f"duckdb:///{path}")
        assert ds.execute("SELECT 42").rows == [(42,)]
        ds.close()
    finally:
        holder.kill()
    assert waits == [duckdb_source.LOCK_RETRY]  # found in use once, then opened


def test_a_file_held_longer_is_an_error_saying_so(tmp_path):
    path = tmp_path / "db.duckdb"
    connect(f"duckdb:///{path}").close()
    holder = _held(path)
    try:
        started = time.monotonic()
        with pytest.raises(DatasourceBusy, match="another process has it open") as raised:
            connect(f"duckdb:///{path}")
        assert time.monotonic() - started >= LOCK_WAIT  # a lower bound: a busy machine waits longer
        assert "another process has had the file open" in (raised.value.hint or "")
    finally:
        _let_go(holder)
