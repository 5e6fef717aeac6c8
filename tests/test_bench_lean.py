"""benchmarks/lean.py: a script baseline's lean environment pins what it imports at this
environment's versions, is reused while those pins hold, and runs with OMP passive and
nothing else of this environment (no PYTHONPATH: sqlml stays out of it)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def lean(monkeypatch, tmp_path):
    spec = importlib.util.spec_from_file_location("bench_lean", BENCHMARKS / "lean.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "LEAN", tmp_path / ".lean")
    return module


def test_pins_are_this_environments_versions(lean):
    numpy = importlib.metadata.version("numpy")
    duckdb = importlib.metadata.version("duckdb")
    assert lean.pins(["numpy", "duckdb"]) == [f"duckdb=={duckdb}", f"numpy=={numpy}"]
    # an import name becomes the distribution that provides it (xgboost: xgboost-cpu here)
    (xgboost,) = importlib.metadata.packages_distributions()["xgboost"]
    assert lean.pins(["xgboost"]) == [f"{xgboost}=={importlib.metadata.version(xgboost)}"]


def test_psycopg_takes_its_binary_companion(lean):
    version = importlib.metadata.version("psycopg-binary")
    assert f"psycopg-binary=={version}" in lean.pins(["psycopg"])


def test_a_reader_sqlml_lacks_is_left_unpinned(lean):
    assert lean.pins(["a_reader_not_installed"]) == ["a-reader-not-installed"]


def test_an_environment_is_made_once_and_again_when_stale(lean, monkeypatch):
    made: list[list[str]] = []

    def run(command, **_):  # venv and pip, without either
        made.append(command)
        if command[1:3] == ["-m", "venv"]:
            (Path(command[3]) / "bin").mkdir(parents=True)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(lean.subprocess, "run", run)
    wanted = lean.pins(["numpy"])
    folder = lean.LEAN / "numpy"
    assert lean.python(["numpy"]) == str(folder / "bin" / "python")
    venv, pip = made
    assert venv == [sys.executable, "-m", "venv", str(folder)]
    assert pip[1:4] == ["-m", "pip", "install"] and wanted[0] in pip
    assert pip[-2:] == ["-c", str(folder / "constraints.txt")]
    assert f"{wanted[0]}\n" in (folder / "constraints.txt").read_text()
    (folder / "bin" / "python").write_text("")
    made.clear()
    assert lean.python(["numpy"]) == str(folder / "bin" / "python")
    assert made == []  # reused: no venv, no pip
    (folder / "pins.txt").write_text("numpy==0.0.1\n")  # stale: made again
    lean.python(["numpy"])
    assert [command[1:3] for command in made] == [["-m", "venv"], ["-m", "pip"]]


def test_environments(lean, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/somewhere/sqlml")
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    baseline = lean.baseline_environment()
    assert baseline["OMP_WAIT_POLICY"] == "PASSIVE"
    assert "PYTHONPATH" not in baseline
    assert set(baseline) <= {*lean.KEPT, "OMP_WAIT_POLICY"}
    sqlml = lean.sqlml_environment()
    assert (sqlml["OMP_WAIT_POLICY"], sqlml["SQLML_CACHE"]) == ("PASSIVE", "off")
    assert sqlml["PYTHONPATH"] == "/somewhere/sqlml"
    assert "PYTHONDONTWRITEBYTECODE" not in sqlml  # sqlml's bytecode cached, as installed
