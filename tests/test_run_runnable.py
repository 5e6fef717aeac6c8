"""What TO RUN runs: a function of a module of the program's folder, a script in it, or a
module ``$SQLML_RUNNABLE`` declares; never a function of Python's standard library, of sqlml
or of an installed package not declared, nor a script outside the folder. Refused by
``sqlml check`` (by the name), before the program starts (where it is found), and by the
child process before it imports anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import datasource_url
from conftest import run_program as run

from sqlml.checking import check_program
from sqlml.datasources import connect
from sqlml.errors import SqlmlError
from sqlml.grammar import parse
from sqlml.runtime.context import Context
from sqlml.semantics import analyze
from sqlml.statements.run.handler import run as run_statement
from sqlml.statements.run.runnable import RUNNABLE_ENV

# The issue's statement: subprocess.run(["touch", "pwned.txt"]) made of the rows' columns.
PWNED = 'SELECT 1 AS "touch", 2 AS "pwned.txt" TO RUN subprocess.run;\n'

MODULE = """
from pathlib import Path


def go(rows, marker):
    Path(marker).write_text("ran")
"""


@pytest.fixture(autouse=True)
def nothing_declared(monkeypatch):
    monkeypatch.delenv(RUNNABLE_ENV, raising=False)


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ("subprocess.run", "subprocess is a module of Python's standard library"),
        ("os.system", "os is a module of Python's standard library"),
        ("builtins.eval", "builtins is a module of Python's standard library"),
        ("os.path.join", "os.path is a module of Python's standard library"),
        ("sqlml.cli.main", "sqlml.cli is a module of sqlml"),
        ("numpy.save", "numpy is a module installed in sqlml's Python"),
        ("../elsewhere/x.py", "a script runs from the program file's folder"),
        ("scripts/../../x.py", "a script runs from the program file's folder"),
    ],
)
def test_check_refuses_what_is_not_the_users_own(program, message):
    [error] = check_program(f"SELECT 1 AS i\nTO RUN {program};", "duckdb")
    assert message in error.message
    assert (error.line, error.column) == (2, 8)
    assert error.hint


def test_an_installed_package_runs_once_declared(monkeypatch):
    [error] = check_program("SELECT 1 AS i TO RUN numpy.save;", "duckdb")
    assert f"{RUNNABLE_ENV}=numpy" in error.hint
    monkeypatch.setenv(RUNNABLE_ENV, "pandas, numpy")
    assert check_program("SELECT 1 AS i TO RUN numpy.save;", "duckdb") == []


@pytest.mark.parametrize("declared", ["subprocess", "os.path", "sqlml", "not a module"])
def test_the_standard_library_cannot_be_declared(monkeypatch, declared):
    monkeypatch.setenv(RUNNABLE_ENV, declared)
    [error] = check_program("SELECT 1 AS i TO RUN subprocess.run;", "duckdb")
    assert RUNNABLE_ENV in error.message


def test_the_issues_statement_runs_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, err = run(tmp_path, datasource_url("duckdb", tmp_path), PWNED, capsys)
    assert status == 1
    assert "subprocess is a module of Python's standard library" in err
    assert not (tmp_path / "pwned.txt").exists()


def test_a_module_of_the_folder_runs_and_one_elsewhere_does_not(tmp_path, capsys, unique_name):
    """The folder's module runs; the same module in another folder is refused before any
    program starts, with a hint to declare it."""
    folder, elsewhere = tmp_path / "program", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    module = f"own_{unique_name}"
    (folder / f"{module}.py").write_text(MODULE)
    marker = tmp_path / "ran"
    text = f"SELECT 1 AS i TO RUN {module}.go WITH marker = '{marker}';\n"
    status, err = run(folder, datasource_url("duckdb", tmp_path), text, capsys)
    assert status == 0, err
    assert marker.read_text() == "ran"

    marker.unlink()
    (folder / f"{module}.py").rename(elsewhere / f"{module}.py")
    status, err = run(folder, datasource_url("duckdb", tmp_path), text, capsys)
    assert status == 1
    assert f"the module {module} is not in the program's folder" in err
    assert f"{RUNNABLE_ENV}={module}" in err
    assert not marker.exists()


def test_a_declared_module_runs_from_where_python_finds_it(tmp_path, monkeypatch, unique_name):
    library = tmp_path / "library"
    library.mkdir()
    module = f"declared_{unique_name}"
    (library / f"{module}.py").write_text(MODULE)
    monkeypatch.setenv("PYTHONPATH", str(library))
    monkeypatch.setenv(RUNNABLE_ENV, module)
    marker = tmp_path / "ran"
    [statement] = analyze(parse(f"SELECT 1 AS i TO RUN {module}.go WITH marker = '{marker}';"))
    ds = connect(datasource_url("duckdb", tmp_path), base_dir=tmp_path)
    try:
        run_statement(statement, Context(ds))
    finally:
        ds.close()
    assert marker.read_text() == "ran"


def test_a_script_outside_the_folder_is_refused_where_it_is(tmp_path):
    """A script named inside the folder that is a link to a file outside it does not run."""
    folder = tmp_path / "program"
    folder.mkdir()
    marker = tmp_path / "ran"
    outside = tmp_path / "outside.py"
    outside.write_text(f"open({str(marker)!r}, 'w').close()\n")
    (folder / "inside.py").symlink_to(outside)
    [statement] = analyze(parse("SELECT 1 AS i TO RUN inside.py;"))
    ds = connect(datasource_url("duckdb", tmp_path), base_dir=folder)
    try:
        with pytest.raises(SqlmlError, match="the script is not in the program's folder"):
            run_statement(statement, Context(ds))
    finally:
        ds.close()
    assert not marker.exists()


@pytest.mark.parametrize("program", ["subprocess.run", "shadowed.run"])
def test_the_child_checks_again_before_importing(tmp_path, program):
    """The child process refuses what the analysis and the handler would have: a module
    of the standard library, and one the folder does not hold (``shadowed``, found by
    Python elsewhere on its path, is not imported)."""
    folder, elsewhere = tmp_path / "program", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    marker = tmp_path / "imported"
    (elsewhere / "shadowed.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    spec = tmp_path / "run.json"
    spec.write_text(json.dumps({"program": program, "folder": str(folder), "params": {}}))
    environment = {**os.environ, "SQLML_RUN": str(spec), "PYTHONPATH": str(elsewhere)}
    environment.pop(RUNNABLE_ENV, None)
    done = subprocess.run(
        [sys.executable, "-m", "sqlml.statements.run.child"],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,  # a deadlock guard
    )
    assert done.returncode == 1
    assert "hint:" in done.stderr and program.split(".")[0] in done.stderr, done.stderr
    assert not marker.exists()
    assert not (folder / "pwned.txt").exists()
