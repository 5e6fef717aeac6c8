"""sqlml's reports read as the CI systems read them (tests/ci_parsers.py, their rules written
from their source): GitLab's JUnit parser and merge-request widget, mikepenz's and dorny's
GitHub test reporters, GitHub's problem matchers; the JSON results and run results."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ci_parsers import (
    dorny_results,
    gitlab_cases,
    gitlab_merge_request_widget,
    matcher_in,
    mikepenz_annotations,
    problem_matcher_issues,
)
from conftest import KINDS, datasource_url
from doc_blocks import blocks_of, matches, placeheld

from sqlml import __version__
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.runtime.features_derive import left_out_warning

ROOT = Path(__file__).resolve().parent.parent
CI_PAGE = ROOT / "docs" / "ci.md"

# A program in a subfolder, as in a repository: passed, warned, failed, skipped statements.
TRAIN = """CREATE TABLE scores AS SELECT * FROM (VALUES (1, 91), (2, 78)) AS t(id, score);
SELECT id, score FROM scores ORDER BY id;

ASSERT (SELECT min(score) FROM scores) >= 80 MESSAGE 'a score below 80' WARN;
INSERT INTO scores SELECT * FROM nowhere;
CREATE TABLE kept AS SELECT * FROM scores;
"""
FILE = "pipes/b_train.sql"
WARNING = f"{FILE}:4:1: warning: ASSERT failed: a score below 80: "
# At the missing table's name: column 34 of "INSERT INTO scores SELECT * FROM nowhere;".
FAILURE = f"{FILE}:5:34: error: DuckDB: Catalog Error: Table with name nowhere does not exist"
NOTE = f"{FILE}:6:1: note: not run: it waits for s4-insert, which failed"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch) -> Path:
    """A checkout holding ``pipes/b_train.sql``, the working directory."""
    (tmp_path / "pipes").mkdir()
    (tmp_path / FILE).write_text(TRAIN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(workspace: Path, capsys, *options: str) -> tuple[str, str]:
    """Run the program on a new database; its JUnit report and stderr."""
    (workspace / "ci.duckdb").unlink(missing_ok=True)
    url = f"duckdb:///{workspace / 'ci.duckdb'}"
    assert main(["run", FILE, "--datasource", url, "--junit", "run.xml", *options]) == 1
    return (workspace / "run.xml").read_text(encoding="utf-8"), capsys.readouterr().err


def test_gitlab_lists_the_warning_and_the_failure_in_the_merge_request(workspace, capsys):
    xml, _ = run(workspace, capsys)
    cases = gitlab_cases(xml)
    assert [case.status for case in cases] == ["success", "success", "failed", "failed", "skipped"]
    assert {case.file for case in cases} == {FILE}
    listed = gitlab_merge_request_widget(cases)
    assert [case.name.split(":")[0] for case in listed] == [
        "s3-assert-select-min-score-from-scores-80",
        "s4-insert",
    ]
    warned, failed = (case.system_output for case in listed)
    assert isinstance(warned, str) and warned.startswith(WARNING)
    assert "was 78" in warned and "MESSAGE 'a score below 80' WARN" in warned  # the statement
    assert isinstance(failed, str) and failed.startswith(FAILURE)
    skipped = cases[-1].system_output  # the Tests tab's reason: no longer empty
    assert isinstance(skipped, str) and skipped.startswith(NOTE)
    assert [case.system_output for case in cases[:2]] == [None, None]


def test_github_annotates_the_sql_file_at_each_statement(workspace, capsys):
    xml, _ = run(workspace, capsys)
    annotations = mikepenz_annotations(xml)
    assert [(a.path, a.start_line, a.annotation_level) for a in annotations] == [
        (FILE, 4, "failure"),
        (FILE, 5, "failure"),
    ]
    assert annotations[0].message.startswith(WARNING)
    assert annotations[1].message.startswith(FAILURE)
    notices = mikepenz_annotations(xml, annotate_notice=True)
    assert [(a.start_line, a.status) for a in notices] == [
        (1, "success"),
        (2, "success"),
        (4, "failure"),
        (5, "failure"),
        (6, "skipped"),
    ]
    assert {a.path for a in notices} == {FILE}


def test_without_file_and_line_mikepenz_would_annotate_the_classname_s_suffix(workspace, capsys):
    """What the issue saw before: the classname ``pipes/b_train.sql`` alone resolves to the
    file ``sql``, line 1."""
    xml, _ = run(workspace, capsys)
    bare = re.sub(r' (file|line)="[^"]*"', "", xml)
    [first, _] = mikepenz_annotations(bare)
    assert (first.path, first.start_line) == ("sql", 1)


def test_warnings_as_passed_cases_are_what_the_reporters_pass(workspace, capsys):
    """``--junit-warnings passed``: a job whose reporter fails on failed tests passes on a
    warning, which the reporters then do not show (the problem matcher does)."""
    warned = "s3-assert-select-min-score-from-scores-80"
    xml, _ = run(workspace, capsys)
    assert dorny_results(xml)[_named(xml, warned)] == "failed"  # fail-on-error fails the job
    xml, err = run(workspace, capsys, "--junit-warnings", "passed")
    case = next(case for case in gitlab_cases(xml) if case.name.startswith(warned))
    assert (case.status, case.system_output) == ("success", None)
    assert [a.start_line for a in mikepenz_annotations(xml)] == [5]
    assert dorny_results(xml)[_named(xml, warned)] == "success"
    assert f"\n{WARNING}" in err


def _named(xml: str, prefix: str) -> str:
    return next(case.name for case in gitlab_cases(xml) if case.name.startswith(prefix))


def test_the_problem_matcher_in_the_docs_annotates_every_diagnostic(workspace, capsys):
    matcher = matcher_in(CI_PAGE.read_text(encoding="utf-8"))
    _, err = run(workspace, capsys)
    issues = problem_matcher_issues(matcher, err, workspace)
    assert [(i.type, i.file, i.line, i.column) for i in issues] == [
        ("warning", FILE, 4, 1),
        ("error", FILE, 5, 34),
    ]
    assert err.count(f"\n{NOTE}") == 1  # a note is no annotation
    assert issues[0].message.startswith("ASSERT failed: a score below 80: ")

    # A warning said while a program is analysed, and an error about no program.
    (workspace / "pipes" / "a_check.sql").write_text(
        "SELECT * FROM t TO TRAIN xgboost.gbtree\n"
        "WITH objective = 'reg:squarederror', verbosity = 1\nLABEL y INTO m;\n",
        encoding="utf-8",
    )
    assert main(["check", "pipes/a_check.sql", "pipes/none.sql"]) == 1
    err = capsys.readouterr().err
    issues = problem_matcher_issues(matcher, err, workspace)
    assert [(i.type, i.file, i.line, i.column) for i in issues] == [
        ("warning", "pipes/a_check.sql", 2, 38),
        ("error", None, None, None),  # sqlml: error: cannot read pipes/none.sql
    ]
    assert "takes verbosity but does not apply it" in issues[0].message
    assert issues[1].message.startswith("cannot read pipes/none.sql")


def test_json_results_say_where_they_come_from(workspace, capsys):
    url = f"duckdb:///{workspace / 'ci.duckdb'}"
    assert main(["run", FILE, "--datasource", url, "--format", "json"]) == 1
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line) == {
        "file": FILE,
        "statement": "s2-select",
        "line": 2,
        "column": 1,
        "rows": [{"id": 1, "score": 91}, {"id": 2, "score": 78}],
    }


def test_the_run_results_hold_each_statement(workspace, capsys):
    url = f"duckdb:///{workspace / 'ci.duckdb'}"
    other = workspace / "pipes" / "c_broken.sql"
    other.write_text("SELECT 1 AS x;\nSELECT FROM;\n", encoding="utf-8")
    args = ["run", FILE, str(other.relative_to(workspace)), "--datasource", url, "--keep-going"]
    assert main([*args, "--run-results", "run_results.json"]) == 1
    err = capsys.readouterr().err
    document = json.loads((workspace / "run_results.json").read_text(encoding="utf-8"))
    assert document["metadata"]["sqlml_version"] == __version__
    results = document["results"]
    assert [(r["file"], r["statement"], r["line"], r["status"]) for r in results] == [
        (FILE, "s1-create", 1, "pass"),
        (FILE, "s2-select", 2, "pass"),
        (FILE, "s3-assert-select-min-score-from-scores-80", 4, "warn"),
        (FILE, "s4-insert", 5, "fail"),
        (FILE, "s5-create", 6, "skip"),
        ("pipes/c_broken.sql", None, 2, "error"),
    ]
    assert [r["rows_returned"] for r in results] == [None, 2, None, None, None, None]
    said = [r["message"].split("\n")[0] for r in results if r["message"]]
    assert all(f"\n{message}\n" in f"\n{err}" for message in said), err
    assert [r["started_at"] is None for r in results] == [False] * 4 + [True] * 2
    assert all(r["execution_time"] >= 0 for r in results)
    summary = err.rstrip().splitlines()[-1]
    assert summary == "sqlml: done: PASS=2 WARN=1 FAIL=1 ERROR=1 SKIP=1 TOTAL=6"
    assert document["totals"] == {
        "pass": 2,
        "warn": 1,
        "fail": 1,
        "error": 1,
        "skip": 1,
        "total": 6,
    }


def test_run_results_that_cannot_be_written_are_an_error(workspace, capsys):
    url = f"duckdb:///{workspace / 'ci.duckdb'}"
    args = ["run", FILE, "--datasource", url, "--run-results", "no/such/folder/r.json"]
    assert main(args) == 1
    assert "sqlml: error: cannot write the run results no/such/folder/r.json" in (
        capsys.readouterr().err
    )


def test_the_run_results_example_of_the_docs(tmp_path, monkeypatch, capsys):
    """docs/ci.md's example: its program run, its stdout and run_results.json as shown."""
    blocks = {block.tag: block for block in blocks_of(CI_PAGE) if block.tag}
    (tmp_path / "checks.sql").write_text(blocks["checks.sql"].text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    url = f"duckdb:///{tmp_path / 'docs.duckdb'}"
    args = ["run", "checks.sql", "--format", "json", "--run-results", "run_results.json"]
    assert main([*args, "--datasource", url]) == 0
    out = capsys.readouterr().out
    assert matches(blocks["stdout"].text, out), out
    written = (tmp_path / "run_results.json").read_text(encoding="utf-8")
    written = re.sub(r'("(?:elapsed|execution)_time": )[0-9.]+', r"\1<seconds>", written)
    written = written.replace(f'"{__version__}"', '"<version>"')
    assert matches(blocks["run_results.json"].text, placeheld(written, {})), written


@pytest.mark.parametrize("quiet", [False, True])
def test_a_piped_script_writes_its_results_alone_on_stdout(tmp_path, quiet):
    """The results, CSV tables apart as ``sqlml run`` writes them; the replies of backslash
    commands and the timings on stderr, or nowhere with ``-q``."""
    script = "\\format csv\n\\timing on\nSELECT 1 AS a;\nSELECT 'x,y' AS b, NULL AS c;\n"
    options = ["-q"] if quiet else []
    done = subprocess.run(
        [sys.executable, "-m", "sqlml", *options, "--datasource", f"duckdb:///{tmp_path}/s.db"],
        input=script,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'a\n1\n\nb,c\n"x,y",\n'
    records = list(csv.reader(io.StringIO(done.stdout)))
    assert records == [["a"], ["1"], [], ["b", "c"], ["x,y", ""]]
    said = done.stderr.splitlines()
    if quiet:
        assert said == []
    else:
        assert said[:2] == ["output format is csv", "timing is on"]
        assert [line.split(" ")[0] for line in said[2:]] == ["Time:", "Time:"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_reports_on_each_database(kind, workspace, unique_name, capsys):
    """The same reports whatever the database: JUnit cases as GitLab and mikepenz read them,
    the tagged JSON results, the run results."""
    url = datasource_url(kind, workspace)
    table = unique_name
    program = workspace / "pipes" / "each.sql"
    program.write_text(
        f"CREATE TABLE {table} AS SELECT 1 AS id, 91 AS score UNION ALL SELECT 2, 78;\n"
        f"SELECT id, score FROM {table} ORDER BY id;\n"
        f"ASSERT (SELECT min(score) FROM {table}) >= 80 MESSAGE 'below 80' WARN;\n"
        f"INSERT INTO {table} SELECT * FROM {table}_nowhere;\n"
        f"CREATE TABLE {table}_kept AS SELECT * FROM {table};\n",
        encoding="utf-8",
    )
    file = "pipes/each.sql"
    options = ["--format", "json", "--junit", "each.xml", "--run-results", "each.json"]
    try:
        assert main(["run", file, "--datasource", url, *options]) == 1
    finally:
        ds = connect(url)
        ds.execute(f"DROP TABLE IF EXISTS {table}")
        ds.close()
    out = capsys.readouterr().out
    rows = [{"id": 1, "score": 91}, {"id": 2, "score": 78}]
    tag = {"file": file, "statement": "s2-select", "line": 2, "column": 1}
    assert [json.loads(line) for line in out.splitlines()] == [{**tag, "rows": rows}]
    xml = (workspace / "each.xml").read_text(encoding="utf-8")
    cases = gitlab_cases(xml)
    assert [(c.status, c.file) for c in cases] == [
        ("success", file),
        ("success", file),
        ("failed", file),
        ("failed", file),
        ("skipped", file),
    ]
    assert str(cases[2].system_output).startswith(f"{file}:3:1: warning: ASSERT failed: below 80")
    # SQLite says no place; the others place the error at the missing table's name.
    missing = 1 if kind == "sqlite" else len(f"INSERT INTO {table} SELECT * FROM ") + 1
    assert str(cases[3].system_output).startswith(f"{file}:4:{missing}: error: ")
    assert [(a.path, a.start_line) for a in mikepenz_annotations(xml)] == [(file, 3), (file, 4)]
    results = json.loads((workspace / "each.json").read_text(encoding="utf-8"))["results"]
    assert [(r["status"], r["rows_returned"]) for r in results] == [
        ("pass", None),
        ("pass", 2),
        ("warn", None),
        ("fail", None),
        ("skip", None),
    ]


def test_a_warning_said_in_a_worker_thread_names_the_file(workspace, capsys):
    """A statement's handler warns in the worker thread that runs it (--jobs 2): the file
    the run set for its diagnostics reaches it (sqlml.errors.diagnosing)."""
    url = f"duckdb:///{workspace / 'ci.duckdb'}"
    ds = connect(url)
    ds.write_table(["t"], {"id": np.arange(30), "f": np.arange(30) % 7, "y": np.arange(30) % 2})
    ds.close()
    (workspace / "pipes" / "train.sql").write_text(
        "SELECT 1 AS one;\nSELECT * FROM t TO TRAIN xgboost.gbtree\n"
        "WITH train.num_boost_round = 2 COLUMN f LABEL y INTO m;\n",
        encoding="utf-8",
    )
    assert main(["run", "pipes/train.sql", "--datasource", url, "--jobs", "2"]) == 0
    message, hint = left_out_warning(["id"])
    assert f"\npipes/train.sql:2:1: warning: {message}\n  hint: {hint}\n" in capsys.readouterr().err
