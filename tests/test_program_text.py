"""Program text hazards, through the ``sqlml`` command: NUL characters (libpq ends a statement
at one), byte order marks, text that is not UTF-8, and empty names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import datasource_url

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.grammar.recovery import parse_all

BOM = "\ufeff"


def run(capfd, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capfd.readouterr()
    return status, out, err


def count(url: str, table: str) -> int:
    ds = connect(url)
    try:
        return ds.execute(f"SELECT COUNT(*) FROM {table}").rows[0][0]
    finally:
        ds.close()


@pytest.mark.parametrize("kind", ["duckdb", "postgresql"])
def test_a_nul_character_is_refused_before_anything_runs(kind, tmp_path, unique_name, capfd):
    url = datasource_url(kind, tmp_path)
    table = f"{unique_name}_rows"
    ds = connect(url)
    ds.execute(f"CREATE TABLE {table} (id INTEGER)")
    ds.execute(f"INSERT INTO {table} VALUES (1), (2), (3)")
    ds.close()
    program = tmp_path / "nul.sql"
    # On PostgreSQL the text after the NUL was dropped: every row was deleted, exit status 0.
    program.write_text(f"SELECT 1;\nDELETE FROM {table} \0WHERE id = 1;\n", encoding="utf-8")
    try:
        status, out, err = run(capfd, "run", str(program), "--datasource", url)
        assert status == 1 and out == ""
        column = len(f"DELETE FROM {table} ") + 1
        assert f"nul.sql:2:{column}: error: the program holds a NUL character" in err, err
        assert "hint: remove it" in err and "Traceback" not in err
        assert count(url, table) == 3
    finally:
        ds = connect(url)
        ds.execute(f"DROP TABLE {table}")
        ds.close()


def test_check_reports_a_nul_character_and_the_other_statements_errors(tmp_path, capfd):
    program = tmp_path / "nul.sql"
    program.write_text("SELECT 1 TO TRAIN nope LABEL y INTO m;\nSELECT '\0';\nSELECT 2;\n")
    status, _, err = run(capfd, "check", str(program))
    assert status == 1
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 2 and "nul.sql:1:19: error: unknown estimator nope" in lines[0]
    assert "nul.sql:2:9: error: the program holds a NUL character" in lines[1], err


def test_parse_all_refuses_a_nul_in_the_statement_that_holds_it():
    program, errors = parse_all("SELECT 1;\nSELECT\0 2;\nSELECT 3;")
    assert [s.text for s in program.statements] == ["SELECT 1", "SELECT 3"]
    assert [(e.line, e.column) for e in errors] == [(2, 7)]


def test_a_byte_order_mark_at_the_start_of_a_file_is_ignored(tmp_path, capfd):
    program = tmp_path / "bom.sql"
    program.write_bytes(f"{BOM}SELECT 41 + 1 AS answer;".encode())
    status, out, err = run(capfd, "run", str(program), "--datasource", "duckdb:///:memory:")
    assert status == 0, err
    assert "answer" in out and "42" in out  # the first query's rows are printed


def test_errors_after_a_byte_order_mark_keep_their_columns(tmp_path, capfd):
    program = tmp_path / "bom.sql"
    text = "SELECT * FROM t TO TRAIN nope LABEL y INTO m;\n"
    program.write_bytes(f"{BOM}{text}{text}".encode())
    status, _, err = run(capfd, "check", str(program))
    assert status == 1
    assert "bom.sql:1:26: error: unknown estimator nope" in err, err  # as an editor shows it
    assert "bom.sql:2:26: error: unknown estimator nope" in err, err


def test_byte_order_marks_between_statements_are_blank_space(capfd):
    program = f"{BOM}SELECT 1 AS a;{BOM}\n{BOM}SELECT 2 AS b;{BOM}"
    status, out, err = run(capfd, "-e", program, "--datasource", "duckdb:///:memory:")
    assert status == 0, err
    assert out.split() == ["a", "---", "1", "(1", "row)", "b", "---", "2", "(1", "row)"]


def test_a_file_that_is_not_utf8_names_the_byte_and_its_position(tmp_path, capfd):
    program = tmp_path / "latin1.sql"
    program.write_bytes("SELECT 1;\nSELECT 'caf\u00e9';\n".encode("latin-1"))
    for command in ("run", "check"):
        status, _, err = run(capfd, command, str(program))
        assert status == 1
        first, hint, *summary = err.splitlines()
        # sqlml run ends with its summary line: the file is an error
        assert summary == (
            ["sqlml: done: PASS=0 WARN=0 FAIL=0 ERROR=1 SKIP=0 TOTAL=1"] if command == "run" else []
        )
        assert first.endswith(
            "error: cannot read "
            f"{program}: it is not UTF-8 text: the byte 0xe9 at line 2, column 12 is not part "
            "of a UTF-8 character"
        ), err
        assert hint == "  hint: save it as UTF-8"


def test_a_utf16_file_is_named_so(tmp_path, capfd):
    program = tmp_path / "utf16.sql"
    program.write_bytes("SELECT 1;".encode("utf-16"))
    status, _, err = run(capfd, "check", str(program))
    assert status == 1 and "it is UTF-16 text, not UTF-8" in err, err


def test_undecodable_command_line_bytes_are_a_parse_error(tmp_path):
    # Python decodes the byte 0xff of argv to the lone surrogate U+DCFF; DuckDB crashed on it.
    result = subprocess.run(
        [sys.executable, "-m", "sqlml", "-e", b"SELECT 1;\nSELECT \xff;"],
        capture_output=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
    )
    err = result.stderr.decode()
    assert result.returncode == 1 and result.stdout == b"", err
    assert "<-e>:2:8: error: the program is not valid UTF-8: it holds the byte 0xff" in err, err
    assert "Traceback" not in err
    assert not Path(tmp_path / "sqlml.duckdb").exists()  # nothing ran


def test_a_lone_surrogate_is_a_parse_error(capfd):
    status, _, err = run(capfd, "-e", "SELECT '\ud800';", "--datasource", "duckdb:///:memory:")
    assert status == 1
    assert "<-e>:1:9: error: the program is not valid UTF-8: it holds a lone surrogate" in err


@pytest.mark.parametrize(
    ("program", "column"),
    [
        ('SELECT * FROM t TO TRAIN xgboost.gbtree LABEL y INTO "";', 54),
        ('SELECT * FROM t TO PREDICT "".y USING m;', 28),
        ("SELECT * FROM t TO PREDICT p.y USING ``;", 38),
        ('SELECT * FROM t TO EVALUATE m LABEL y INTO "";', 44),
        ("SELECT * FROM t TO TRAIN xgboost.gbtree LABEL '' INTO m;", 47),
        ('DROP MODEL "";', 12),
        ('DESCRIBE MODEL db."";', 19),
    ],
)
def test_empty_names_are_refused(program, column, capfd):
    status, _, err = run(capfd, "-e", program, "--datasource", "duckdb:///:memory:")
    assert status == 1
    assert f"<-e>:1:{column}: error: the name " in err and " is empty" in err, err
