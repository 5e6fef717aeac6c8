"""A bug in sqlml never reaches a user as a traceback: it is one ``file:line:col: error:``
paragraph naming the step, with exit status 1, and its traceback is kept, in the step's log
or in a file of its own, whose path the hint gives. Here the bug is an AttributeError planted
in ASSERT's handler, run from each front end."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import fetch_rows

from sqlml.cli import main
from sqlml.errors import InternalError
from sqlml.runtime import step

PROGRAM = "CREATE TABLE t AS SELECT 1 AS x;\nASSERT (SELECT count(*) FROM t) = 1;\nSELECT 2 AS y;\n"
KEPT = re.compile(r"^  hint: this is a bug in sqlml, not a mistake in the program: please "
                  r"report it, with the traceback kept in (\S+)$", re.MULTILINE)  # fmt: skip


def _broken(*args: object) -> None:
    raise AttributeError("planted")


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The bug planted; sqlml's run folder and cache in ``tmp_path``."""
    monkeypatch.setattr("sqlml.statements.assertion.handler.check_assertion", _broken)
    monkeypatch.setenv("SQLML_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SQLML_RUN_DIR", str(tmp_path / "runs"))
    return tmp_path


def _traceback(stderr: str) -> str:
    """The traceback file the hint names."""
    found = KEPT.search(stderr)
    assert found, stderr
    return Path(found.group(1)).read_text(encoding="utf-8")


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_a_bug_in_a_statement_is_one_paragraph_at_it(planted: Path, capsys, jobs: str):
    program = planted / "prog.sql"
    program.write_text(PROGRAM)
    url = f"duckdb:///{planted / 'db.duckdb'}"

    status = main(["run", str(program), "--datasource", url, "--jobs", jobs])

    stderr = capsys.readouterr().err
    assert status == 1
    assert "Traceback" not in stderr
    said = rf"^{program}:2:1: error: internal error in step s2-assert\S*: AttributeError: planted$"
    assert re.search(said, stderr, re.MULTILINE), stderr
    kept = _traceback(stderr)
    assert "Traceback (most recent call last)" in kept and "AttributeError: planted" in kept
    assert kept.count("Traceback (most recent call last)") == 1
    assert "FAIL=1" in stderr  # the step failed; the others ran
    assert fetch_rows(url, "SELECT x FROM t") == [(1,)]


def test_a_bug_in_sqlml_e_is_one_paragraph(planted: Path, capsys):
    url = f"duckdb:///{planted / 'db.duckdb'}"

    status = main(["-e", "ASSERT 1 = 1;", "--datasource", url])

    stderr = capsys.readouterr().err
    assert status == 1
    said = r"^<-e>:1:1: error: internal error in step s1-assert\S*: AttributeError: planted$"
    assert re.search(said, stderr, re.MULTILINE), stderr
    assert "Traceback" not in stderr
    assert "AttributeError: planted" in _traceback(stderr)


def test_a_bug_outside_any_statement_is_one_paragraph(
    planted: Path, capsys, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr("sqlml.checking.Checker.check", _broken)
    program = planted / "prog.sql"
    program.write_text(PROGRAM)

    status = main(["check", str(program)])

    stderr = capsys.readouterr().err
    assert status == 1
    said = "sqlml: error: internal error in sqlml check: AttributeError: planted\n"
    assert stderr.startswith(said)
    assert "Traceback" not in stderr
    kept = _traceback(stderr)
    assert Path(KEPT.search(stderr).group(1)).parent == planted / "cache" / "errors"
    assert "in _broken" in kept


def test_a_bug_in_a_pod_step_prints_the_paragraph_then_the_traceback(
    planted: Path, capsys, monkeypatch: pytest.MonkeyPatch
):
    from sqlml.grammar import parse
    from sqlml.semantics import analyze

    (statement,) = analyze(parse("ASSERT 1 = 1;"), "duckdb")
    monkeypatch.setenv("SQLML_DATASOURCE", f"duckdb:///{planted / 'db.duckdb'}")

    status = step.main([statement.to_json()])

    stderr = capsys.readouterr().err
    assert status == 1
    said = rf"{statement.id}:1:1: error: internal error in step {statement.id}: AttributeError"
    assert stderr.startswith(said), stderr
    assert "Traceback (most recent call last)" in stderr  # the pod's log is the step's log


def test_an_internal_error_keeps_its_traceback():
    try:
        _broken()
    except AttributeError as error:
        internal = InternalError.of(error, "step s01")
    assert internal.message == "internal error in step s01: AttributeError: planted"
    assert internal.details.startswith("Traceback (most recent call last)")
    assert "please report it, with what you ran" in internal.hint


def test_an_internal_error_says_the_first_line_of_a_library_s_message():
    """XGBoost's errors carry its C++ stack: the paragraph says their first line only."""
    said = "gblinear.cc:222: Check failed\nStack trace:\n  [bt] (0) libxgboost.so" + "x" * 9000
    internal = InternalError.of(RuntimeError(said), "step s01")
    assert (
        internal.message
        == "internal error in step s01: RuntimeError: gblinear.cc:222: Check failed"
    )
    assert "[bt] (0) libxgboost.so" in internal.details


def test_no_traceback_leaves_a_subprocess(tmp_path: Path):
    """The same through the installed command, as a user runs it."""
    program = tmp_path / "prog.sql"
    program.write_text("SELECT 1 AS x;\n")
    done = subprocess.run(
        [sys.executable, "-c", "import sqlml.statements.sql.handler as s; s.run = None;"
         "from sqlml.cli import main; raise SystemExit(main())", "run", str(program),
         "--datasource", f"duckdb:///{tmp_path / 'db.duckdb'}"],
        capture_output=True, text=True, env={"SQLML_CACHE_DIR": str(tmp_path / "cache"),
                                             "SQLML_RUN_DIR": str(tmp_path / "runs")},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    said = rf"^{program}:1:1: error: internal error in step s1-select\S*: TypeError: "
    assert re.search(said, done.stderr, re.MULTILINE), done.stderr


def test_an_internal_error_copies_whole():
    import copy

    try:
        _broken()
    except AttributeError as error:
        internal = InternalError.of(error, "step s01").kept_in("/tmp/x.log").at(3, 1)
    copied = copy.copy(internal)
    assert (copied.message, copied.hint, copied.details) == (
        internal.message, internal.hint, internal.details,
    )  # fmt: skip
    assert copied.render("p.sql").startswith("p.sql:3:1: error: internal error in step s01")


def test_a_bug_in_the_web_editor_is_one_paragraph(planted: Path, monkeypatch: pytest.MonkeyPatch):
    """In a statement (planted in ASSERT's handler) and outside any (in the check before the
    run): the page shows the paragraph and the server goes on."""
    pytest.importorskip("starlette")  # the ui extra
    from starlette.testclient import TestClient

    from sqlml.ui.server import Settings, create_app

    settings = Settings(f"duckdb:///{planted / 'db.duckdb'}", planted / "runs", planted)
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8765") as client:
        shown = client.post("/editor/run", json={"sql": "ASSERT 1 = 1;"}).json()
        assert not shown["ok"]
        assert "internal error in step s1-assert" in shown["html"]
        assert "AttributeError: planted" in shown["html"] and "Traceback" not in shown["html"]

        monkeypatch.setattr("sqlml.ui.editor_runner.check_program", _broken)
        shown = client.post("/editor/run", json={"sql": "SELECT 1;"}).json()
        assert "internal error in the editor: AttributeError: planted" in shown["html"]
        assert client.post("/editor/run", json={"sql": "ASSERT 1 = 1;"}).status_code == 200


def test_interrupting_a_closed_duckdb_connection_does_nothing(tmp_path: Path):
    """Ctrl-C's interrupt runs in a thread of its own and may come once the run has closed
    its connections: nothing to stop, and no traceback from that thread."""
    from sqlml.datasources import connect

    datasource = connect(f"duckdb:///{tmp_path / 'db.duckdb'}")
    datasource.close()
    datasource.interrupt()
