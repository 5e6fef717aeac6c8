"""The JUnit reports of ``sqlml run`` and ``sqlml check`` validate against the JUnit schema of
Jenkins' xunit plugin (tests/junit/junit-10.xsd; see tests/junit/README.md)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from sqlml.cli import main

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "junit" / "junit-10.xsd")


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
    assert outcomes == ["passed", "system-out", "failure", "skipped", "failure", "error"]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("6", "2", "1")
    assert [suite.get("skipped") for suite in root] == ["0", "1", "0"]
    assert "one row short" in next(root.iter("system-out")).text
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
