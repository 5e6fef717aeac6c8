"""The JUnit reports of ``sqlml run`` and ``sqlml check`` validate against the JUnit schema of
Jenkins' xunit plugin (tests/junit/junit-10.xsd; see tests/junit/README.md) with the testcase's
``file`` and ``line`` added (tests/ci_parsers.py), and against it as it is with
``--junit-warnings passed`` but for those two attributes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from ci_parsers import junit_schema

from sqlml.cli import main

SCHEMA = junit_schema()


def _write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _outcome(case: ET.Element) -> str:
    return case[0].tag if len(case) else "passed"


def test_a_run_with_every_outcome_validates(tmp_path, duckdb_url, capsys):
    passes = _write(
        tmp_path,
        "passes.sql",
        "CREATE TABLE a AS SELECT 1 AS x;\n"
        "ASSERT (SELECT count(*) FROM a) = 2 MESSAGE 'one row short' WARN;\n",
    )
    fails = _write(
        tmp_path,
        "fails.sql",
        "INSERT INTO a SELECT * FROM no_such_table;\nSELECT * FROM a;\nASSERT 1 = 2;\n",
    )
    broken = _write(tmp_path, "broken.sql", "SELECT * FROM a TO TRAIN;\n")
    report = tmp_path / "run.xml"
    args = ["run", passes, fails, broken, "--keep-going", "--datasource", duckdb_url]
    assert main([*args, "--junit", str(report)]) == 1
    SCHEMA.validate(str(report))
    root = ET.parse(report).getroot()
    outcomes = [_outcome(case) for case in root.iter("testcase")]
    assert outcomes == ["passed", "failure", "failure", "skipped", "failure", "error"]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("6", "3", "1")
    assert [suite.get("skipped") for suite in root] == ["0", "1", "0"]
    warned = next(root.iter("failure"))
    assert warned.get("type") == "warning" and "one row short" in warned.get("message")
    stderr = capsys.readouterr().err
    assert stderr.rstrip().endswith("sqlml: done: PASS=1 WARN=1 FAIL=2 ERROR=1 SKIP=1 TOTAL=6")


def test_a_check_report_validates(tmp_path):
    good = _write(tmp_path, "good.sql", "SELECT 1;\n")
    bad = _write(tmp_path, "bad.sql", "SELECT 1;\nASSERT;\n")
    report = tmp_path / "check.xml"
    assert main(["check", good, bad, "--junit", str(report)]) == 1
    SCHEMA.validate(str(report))
    assert [_outcome(case) for case in ET.parse(report).getroot().iter("testcase")] == [
        "passed",
        "error",
    ]


def test_the_schema_refuses_a_skipped_count_on_testsuites(tmp_path):
    """The form reports had before: the schema is strict where Jenkins is."""
    report = tmp_path / "old.xml"
    report.write_text(
        '<testsuites name="sqlml" tests="0" failures="0" errors="0" skipped="0" time="0.000"/>',
        encoding="utf-8",
    )
    with pytest.raises(xmlschema.XMLSchemaValidationError, match="skipped"):
        SCHEMA.validate(str(report))


def test_without_file_and_line_a_report_is_valid_under_the_schema_as_it_is(tmp_path, duckdb_url):
    """Only the testcase's file and line are outside Jenkins' xunit schema: with warnings
    as passed cases, a report without them validates under the schema unchanged."""
    program = _write(tmp_path, "warns.sql", "SELECT 1;\nASSERT 1 = 2 WARN;\nASSERT 1 = 3;\n")
    report = tmp_path / "run.xml"
    args = ["run", program, "--datasource", duckdb_url, "--junit", str(report)]
    assert main([*args, "--junit-warnings", "passed"]) == 1
    root = ET.parse(report).getroot()
    assert [_outcome(case) for case in root.iter("testcase")] == ["passed", "system-out", "failure"]
    places = [(case.attrib.pop("file"), case.attrib.pop("line")) for case in root.iter("testcase")]
    assert places == [(program, "1"), (program, "2"), (program, "3")]
    junit_schema(with_file_and_line=False).validate(root)
