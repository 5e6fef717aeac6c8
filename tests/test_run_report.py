"""``sqlml run`` prints one diagnostic for every statement its summary line does not count as
passed, in program order: an ``error:`` for each that failed (a second failure used to be
counted and never shown), a ``note:`` for each not run, be it downstream of a failure or in a
file after a failed one (counted ``SKIP`` without a word), and a later file's parse error
(counted ``ERROR`` without a word)."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass

import pytest
from conftest import datasource_url

from sqlml.cli import main

HINT = "  hint: the data breaks the condition: check the statements that write the tables it reads"
DIAGNOSTIC = re.compile(r"^(\S+):(\d+):\d+: (error|warning|note): ")
SUMMARY = re.compile(r"^sqlml: done: PASS=(\d+) WARN=(\d+) FAIL=(\d+) ERROR=(\d+) SKIP=(\d+)")


def run(capsys, *args: str) -> tuple[int, list[str], str]:
    """``sqlml run ARGS`` in this process: its exit status, standard error's lines after the
    runs' announcements, and the first run's id."""
    status = main(["run", *args])
    lines = capsys.readouterr().err.splitlines()
    announced = [line.split()[2].rstrip(":") for line in lines if line.startswith("sqlml: run ")]
    told = [line for line in lines if not line.startswith("sqlml: run ")]
    return status, told, announced[0] if announced else ""


@pytest.mark.parametrize("kind", ["duckdb", "mysql", "postgresql"])
def test_every_failed_assertion_prints_its_error(kind, tmp_path, capsys):
    program = tmp_path / "a.sql"
    program.write_text(
        "ASSERT 1 = 2 MESSAGE 'first';\nASSERT 2 = 3 MESSAGE 'second';\nSELECT 1 AS one;\n"
    )
    status, told, run_id = run(capsys, str(program), "--datasource", datasource_url(kind, tmp_path))
    assert status == 1
    assert told == [
        f"{program}:1:1: error: ASSERT failed: first: 1 = 2 is false",
        HINT,
        f"  resume with: --resume {run_id}",
        f"{program}:2:1: error: ASSERT failed: second: 2 = 3 is false",
        HINT,
        "sqlml: done: PASS=1 WARN=0 FAIL=2 ERROR=0 SKIP=0 TOTAL=3",
    ]


def test_the_files_after_a_failed_one_say_why_they_do_not_run(tmp_path, capsys):
    """Without --keep-going: a note for each statement of a later file, and the error of a
    later file that does not parse."""
    failing, broken, later = (tmp_path / name for name in ("b.sql", "broken.sql", "c.sql"))
    failing.write_text("ASSERT 1 = 2 MESSAGE 'b fails';\n")
    broken.write_text("SELEC 1;\n")
    later.write_text("SELECT 1 AS one;\n\nSELECT 2 AS two;\n")
    url = f"duckdb:///{tmp_path / 'files.duckdb'}"
    status, told, run_id = run(capsys, str(failing), str(broken), str(later), "--datasource", url)
    assert status == 1
    note = "note: not run: an earlier file failed"
    assert told == [
        f"{failing}:1:1: error: ASSERT failed: b fails: 1 = 2 is false",
        HINT,
        f"  resume with: --resume {run_id}",
        f"{broken}:1:1: error: unknown statement keyword SELEC",
        "  hint: did you mean SELECT?",
        f"{later}:1:1: {note}",
        "  hint: --keep-going runs every file",
        f"{later}:3:1: {note}",
        "  hint: --keep-going runs every file",
        "sqlml: done: PASS=0 WARN=0 FAIL=1 ERROR=1 SKIP=2 TOTAL=4",
    ]


def test_the_statements_downstream_of_a_failure_say_which_step_failed(tmp_path, capsys):
    program = tmp_path / "down.sql"
    program.write_text(
        "CREATE TABLE t AS SELECT * FROM no_such_table;\n"
        "CREATE TABLE u AS SELECT * FROM t;\n"
        "SELECT * FROM u;\n"
        "SELECT 7 AS seven;\n"
    )
    url = f"duckdb:///{tmp_path / 'down.duckdb'}"
    status, told, _ = run(capsys, str(program), "--datasource", url, "--format", "csv")
    assert status == 1
    notes = [line for line in told if ": note: " in line]
    assert notes == [
        f"{program}:2:1: note: not run: it waits for s1-create, which failed",
        f"{program}:3:1: note: not run: it waits for s2-create, which did not run",
    ]
    assert told[-1] == "sqlml: done: PASS=1 WARN=0 FAIL=1 ERROR=0 SKIP=2 TOTAL=4"


# Counts equal lines, over programs of several files ----------------------------------------------


@dataclass(frozen=True)
class Unit:
    """Statements a generated file holds: their text and, per statement, what it must end
    as (passed, warning, failure or skipped)."""

    text: str
    outcomes: tuple[str, ...]


def _units(file: int, count: int, rng: random.Random) -> list[Unit]:
    """``count`` units of statements for file number ``file``, each of a random kind."""
    made = []
    for index in range(count):
        table = f"t_{file}_{index}"
        made.append(
            rng.choice(
                [
                    Unit(f"CREATE OR REPLACE TABLE {table} AS SELECT 1 AS x;", ("passed",)),
                    Unit(f"ASSERT 1 = 2 MESSAGE 'fails {file}.{index}';", ("failure",)),
                    Unit(f"ASSERT 1 = 2 MESSAGE 'warns {file}.{index}' WARN;", ("warning",)),
                    Unit(  # fails, and the statement reading its table is not run
                        f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM no_such_table;\n"
                        f"SELECT count(*) AS n FROM {table};",
                        ("failure", "skipped"),
                    ),
                ]
            )
        )
    return made


def _expected(files: list[list[Unit] | None], keep_going: bool) -> list[tuple[int, int, str]]:
    """Each statement's (file, line, outcome) in program order; a file that does not parse
    (None) is one error at its line 1."""
    expected, failed = [], False
    for number, units in enumerate(files):
        if units is None:
            expected.append((number, 1, "error"))
            failed = True
            continue
        outcomes = [outcome for unit in units for outcome in unit.outcomes]
        if failed and not keep_going:
            outcomes = ["skipped"] * len(outcomes)
        failed = failed or "failure" in outcomes
        expected += [(number, line, outcome) for line, outcome in enumerate(outcomes, 1)]
    return expected


@pytest.mark.parametrize("keep_going", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_the_summary_counts_equal_the_lines_printed(seed, keep_going, tmp_path, capsys):
    rng = random.Random(seed)
    files: list[list[Unit] | None] = [
        None if rng.random() < 0.2 else _units(number, rng.randint(1, 3), rng)
        for number in range(rng.randint(3, 4))
    ]
    paths = []
    for number, units in enumerate(files):
        path = tmp_path / f"f{number}.sql"
        path.write_text("SELEC 1;\n" if units is None else "\n".join(u.text for u in units) + "\n")
        paths.append(str(path))
    options = ["--keep-going"] if keep_going else []
    url = f"duckdb:///{tmp_path / 'counts.duckdb'}"
    status, told, _ = run(capsys, *paths, "--datasource", url, *options)

    expected = _expected(files, keep_going)
    severity = {"failure": "error", "error": "error", "skipped": "note", "warning": "warning"}
    diagnostics = [found.groups() for line in told if (found := DIAGNOSTIC.match(line))]
    assert diagnostics == [
        (paths[number], str(line), severity[outcome])
        for number, line, outcome in expected
        if outcome in severity
    ], "\n".join(told)
    warnings = [line for line in told if re.match(r"\S+:\d+:\d+: warning: ASSERT failed: ", line)]
    counts = Counter(outcome for _, _, outcome in expected)
    assert len(warnings) == counts["warning"]
    summary = SUMMARY.match(told[-1])
    assert summary is not None, told
    passed, warned, failed, erred, skipped = map(int, summary.groups())
    assert (passed, warned) == (counts["passed"], len(warnings))
    assert failed + erred == sum(severity == "error" for _, _, severity in diagnostics)
    assert skipped == sum(severity == "note" for _, _, severity in diagnostics)
    assert (failed, erred, skipped) == (counts["failure"], counts["error"], counts["skipped"])
    assert status == int(any(severity.get(outcome) == "error" for _, _, outcome in expected))


CTRL_C = """
import os
import signal
import time


def ctrl_c(rows):
    os.kill(int(os.environ["SQLML_RUN_PARENT"]), signal.SIGINT)  # as Ctrl-C in sqlml's terminal
    time.sleep(60)  # until the cancellation stops this program
"""


def test_a_cancelled_run_tells_the_cancellation_and_each_statement_left_out(
    tmp_path, unique_name, capsys
):
    """Ctrl-C: the running statement's cancellation, then a note for each statement the
    cancellation left out, each counted."""
    (tmp_path / f"stop_{unique_name}.py").write_text(CTRL_C)
    program = tmp_path / "cancelled.sql"
    program.write_text(
        f"SELECT 1 AS i TO RUN stop_{unique_name}.ctrl_c INTO stopped;\n"
        "SELECT * FROM stopped;\n"
        "CREATE TABLE later AS SELECT * FROM stopped;\n"
    )
    url = f"duckdb:///{tmp_path / 'cancelled.duckdb'}"
    status, told, run_id = run(capsys, str(program), "--datasource", url)
    assert status == 130
    cancelled = "the statement was cancelled (Ctrl-C); nothing it did was committed"
    assert told == [
        f"{program}:1:1: error: {cancelled}",
        f"  resume with: --resume {run_id}",
        f"{program}:2:1: note: not run: the run was cancelled (Ctrl-C)",
        f"{program}:3:1: note: not run: the run was cancelled (Ctrl-C)",
        "sqlml: done: PASS=0 WARN=0 FAIL=0 ERROR=1 SKIP=2 TOTAL=3",
    ]
