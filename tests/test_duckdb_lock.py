"""A DuckDB file another process has open (sqlml ui's page reading it, another sqlml
command) is waited for a moment before sqlml gives up on it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from sqlml.errors import DatasourceError
from sqlml.runtime.datasource import connect
from sqlml.runtime.datasource.duckdb import LOCK_WAIT

HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("open", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


def _held(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process holding ``path`` open for ``seconds`` (from when it says so)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "open\n"
    return holder


def test_a_file_another_process_has_open_for_a_moment_is_waited_for(tmp_path):
    path = tmp_path / "db.duckdb"
    connect(f"duckdb:///{path}").close()
    holder = _held(path, 0.5)
    try:
        started = time.monotonic()
        ds = connect(f"duckdb:///{path}")
        assert ds.execute("SELECT 42").rows == [(42,)]
        ds.close()
        assert time.monotonic() - started < LOCK_WAIT + 1
    finally:
        holder.wait(timeout=30)


def test_a_file_held_longer_is_an_error_saying_so(tmp_path):
    path = tmp_path / "db.duckdb"
    connect(f"duckdb:///{path}").close()
    holder = _held(path, LOCK_WAIT + 5)
    try:
        started = time.monotonic()
        with pytest.raises(DatasourceError, match="Could not set lock") as raised:
            connect(f"duckdb:///{path}")
        assert time.monotonic() - started >= LOCK_WAIT
        assert "another process has had the file open" in (raised.value.hint or "")
    finally:
        holder.kill()
        holder.wait(timeout=30)
