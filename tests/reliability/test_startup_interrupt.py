"""Ctrl-C while ``sqlml`` (or a compiled workflow program) starts: one line and status 130,
never a ``KeyboardInterrupt`` traceback, wherever the loading of its modules (and of the
database's driver) is when the signal comes. A sitecustomize pauses one import (the event:
it says so, then waits) and the test sends SIGINT then."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from conftest import ROOT

from sqlml.cli import main

GUARD = 120  # seconds: a hang guard, not a measure

PAUSE_IMPORT = """
import importlib.abc, os, sys

class _Pause(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == os.environ["PAUSE_IMPORT"] and os.environ.pop("PAUSE_IMPORT_ONCE", ""):
            os.write(1, b"paused\\n")
            sys.stdin.readline()  # until the test is done: the SIGINT comes meanwhile
        return None

sys.meta_path.insert(0, _Pause())
"""


@pytest.mark.parametrize("compiled", [False, True], ids=["sqlml run", "compiled program"])
@pytest.mark.parametrize(
    "module",
    # sqlml's first module, one half way through its command line, the last one it loads, the
    # database driver it loads once it runs the program
    ["sqlml.errors", "sqlml.datasources.base", "sqlml.workflow_cli", "duckdb"],
)
def test_ctrl_c_while_sqlml_loads_is_one_line_and_status_130(
    tmp_path: Path, module: str, compiled: bool
):
    (tmp_path / "pause").mkdir()
    (tmp_path / "pause" / "sitecustomize.py").write_text(PAUSE_IMPORT)
    program = tmp_path / "x.sql"
    program.write_text("SELECT 1;\n")
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path / "pause"),
        "PAUSE_IMPORT": module,
        "PAUSE_IMPORT_ONCE": "1",
        "SQLML_CACHE_DIR": str(tmp_path / "cache"),
    }
    command = [sys.executable, "-m", "sqlml", "run", str(program)]
    if compiled:
        assert main(["compile", str(program), "-o", str(tmp_path / "x.py")]) == 0
        command = [sys.executable, str(tmp_path / "x.py")]
    child = subprocess.Popen(
        [*command, "--datasource", f"duckdb:///{tmp_path / 'x.duckdb'}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    try:
        assert child.stdout.readline() == "paused\n", child.communicate(timeout=GUARD)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=GUARD)
    finally:
        child.kill()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert child.returncode == 130, err
    assert "interrupted" in err or "cancelled" in err, err


def test_the_console_script_is_the_quiet_entry_point():
    """The installed ``sqlml`` command starts where ``python -m sqlml`` does."""
    [script] = [e for e in entry_points(group="console_scripts") if e.name == "sqlml"]
    assert script.value == "sqlml.__main__:main"
