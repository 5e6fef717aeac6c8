"""CI batch runs: ASSERT statements, JUnit XML reports, --keep-going and clean machine output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from ci_parsers import junit_schema

from sqlml import ir
from sqlml.backends.argo.codegen import to_argo_yaml
from sqlml.backends.local import record as rec
from sqlml.backends.local.codegen import to_python
from sqlml.backends.local.executor import RunResult
from sqlml.backends.local.record import StepRecord
from sqlml.backends.local.run_log import RunLog, StatementEnd, Unrecorded
from sqlml.cli import main
from sqlml.codegen import to_workflow
from sqlml.datasources import connect
from sqlml.errors import SqlmlError
from sqlml.grammar import parse
from sqlml.junit import JUnitReport
from sqlml.plan import dependencies
from sqlml.runtime.cancel import Cancelled
from sqlml.semantics import analyze

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = junit_schema()
TABLE = "CREATE TABLE {t} AS SELECT * FROM (VALUES (1), (2), (3)) AS v(x);\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def junit(path: Path) -> ET.Element:
    """The report at ``path``, validated against Jenkins' JUnit schema (with the testcase's
    file and line), its counts checked."""
    SCHEMA.validate(str(path))
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = list(root)
    for element in [root, *suites]:
        assert {"tests", "failures", "errors", "time"} <= set(element.attrib)
        float(element.get("time"))
    totals = {key: 0 for key in ("tests", "failures", "errors")}
    for suite in suites:
        assert suite.tag == "testsuite" and suite.get("name")
        cases = list(suite)
        assert all(case.tag == "testcase" for case in cases)
        counts = {
            "tests": len(cases),
            "failures": sum(case.find("failure") is not None for case in cases),
            "errors": sum(case.find("error") is not None for case in cases),
            "skipped": sum(case.find("skipped") is not None for case in cases),
        }
        for key, value in counts.items():
            assert int(suite.get(key)) == value, (key, ET.tostring(suite))
            if key in totals:
                totals[key] += value
        for case in cases:
            assert case.get("name") and case.get("classname") == suite.get("name")
            assert case.get("file") == suite.get("name") and int(case.get("line")) >= 1
            assert float(case.get("time")) >= 0
            assert len(case) <= 1
            assert all(c.tag in ("failure", "error", "skipped", "system-out") for c in case)
    assert "skipped" not in root.attrib  # the schema has no skipped count on testsuites
    assert {key: int(root.get(key)) for key in totals} == totals
    return root


def cases(root: ET.Element) -> dict[str, str]:
    """Each testcase's name -> its outcome (passed, warning, failure, error, skipped)."""
    return {case.get("name"): outcome(case) for case in root.iter("testcase")}


def outcome(case: ET.Element) -> str:
    """A testcase's outcome: a warning is a failure of type warning (or a system-out)."""
    if not len(case):
        return "passed"
    if case[0].tag == "system-out" or case[0].get("type") == "warning":
        return "warning"
    return case[0].tag


def run(*args: str) -> int:
    return main(["run", *args])


# ASSERT and the JUnit report --------------------------------------------------------------------


def test_failing_assertion_fails_the_run_and_the_report_names_it(tmp_path, duckdb_url, capsys):
    program = write(
        tmp_path,
        "rows.sql",
        TABLE.format(t="t")
        + "SELECT count(*) AS n FROM t;\n"
        + "ASSERT (SELECT count(*) FROM t) = 4\n"
        + "  MESSAGE 'lost <rows> & \"more\"';\n",
    )
    report = tmp_path / "out.xml"
    assert run(str(program), "--datasource", duckdb_url, "--junit", str(report)) == 1
    err = capsys.readouterr().err
    assert f'{program}:3:1: error: ASSERT failed: lost <rows> & "more": ' in err
    assert "(SELECT count(*) FROM t) = 4 is false; (SELECT COUNT(*) FROM t) was 3" in err

    root = junit(report)
    outcomes = cases(root)
    assert list(outcomes.values()) == ["passed", "passed", "failure"]
    name = next(name for name, outcome in outcomes.items() if outcome == "failure")
    assert name.startswith("s3-assert-") and name.endswith("ASSERT (SELECT count(*) FROM t) = 4")
    failure = next(root.iter("failure"))
    assert failure.get("message").startswith(f"{program}:3:1: error: ASSERT failed: lost <rows>")
    assert "MESSAGE 'lost <rows> & \"more\"'" in failure.text  # the statement, escaped and back


def test_passing_program_report_has_every_statement_passed(tmp_path, duckdb_url):
    program = write(
        tmp_path,
        "ok.sql",
        TABLE.format(t="t")
        + "ASSERT (SELECT sum(x) FROM t) = 6 AND NOT EXISTS (SELECT 1 FROM t WHERE x < 0);\n"
        + "SELECT x FROM t ORDER BY x;\n",
    )
    report = tmp_path / "out.xml"
    assert run(str(program), "--datasource", duckdb_url, "--junit", str(report)) == 0
    root = junit(report)
    assert [suite.get("name") for suite in root] == [str(program)]
    assert list(cases(root).values()) == ["passed"] * 3
    assert root.get("tests") == "3"


def test_assertion_on_an_evaluation_metric(tmp_path, iris_duckdb_url, unique_name):
    """TO TRAIN + TO EVALUATE on iris: accuracy >= 0.85 holds, >= 1.01 cannot."""
    program = write(
        tmp_path,
        "iris.sql",
        f"""
        SELECT * FROM iris_train TO TRAIN xgboost.gbtree
        WITH objective = "multi:softprob", max_depth = 4, train.num_boost_round = 30
        LABEL class INTO {unique_name};
        SELECT * FROM iris_test TO EVALUATE {unique_name} LABEL class INTO eval_{unique_name};
        ASSERT (SELECT accuracy FROM eval_{unique_name}) >= 0.85 MESSAGE 'model too weak';
        ASSERT (SELECT accuracy FROM eval_{unique_name}) >= 1.01 MESSAGE 'cannot hold';
        """,
    )
    report = tmp_path / "out.xml"
    assert run(str(program), "--datasource", iris_duckdb_url, "--junit", str(report)) == 1
    outcomes = list(cases(junit(report)).values())
    assert outcomes == ["passed", "passed", "passed", "failure"]
    failure = next(junit(report).iter("failure")).get("message")
    assert f"{program}:7:9: error: ASSERT failed: cannot hold: " in failure
    accuracy = float(failure.rsplit("accuracy was ", 1)[1])
    assert 0.85 <= accuracy <= 1.0


def test_ci_example_passes(tmp_path, duckdb_url):
    report = tmp_path / "out.xml"
    example = ROOT / "examples" / "iris_ci.sql"
    assert run(str(example), "--datasource", duckdb_url, "--junit", str(report)) == 0
    outcomes = cases(junit(report))
    assert len(outcomes) == 9 and set(outcomes.values()) == {"passed"}
    assert sum(name.split(": ", 1)[1].startswith("ASSERT") for name in outcomes) == 3


def test_null_condition_fails(tmp_path, duckdb_url, capsys):
    program = write(
        tmp_path, "null.sql", TABLE.format(t="t") + "ASSERT (SELECT max(x) FROM t WHERE x > 5) > 0;"
    )
    assert run(str(program), "--datasource", duckdb_url) == 1
    err = capsys.readouterr().err
    assert f"{program}:2:1: error: ASSERT failed:" in err
    assert "is NULL (counted as false)" in err and "was NULL" in err


@pytest.mark.parametrize(
    ("statement", "condition", "message", "warn"),
    [
        ("ASSERT (SELECT count(*) FROM t) > 5 WARN;", "(SELECT count(*) FROM t) > 5", None, True),
        ("ASSERT x > 1 MESSAGE 'low' warn\n;", "x > 1", "low", True),
        ("ASSERT warn = 1 AND (SELECT 1 AS warn) = 1;", "warn = 1 AND (SELECT 1 AS warn) = 1",
         None, False),
        ("ASSERT x > 1 MESSAGE 'x WARN';", "x > 1", "x WARN", False),
    ],
)  # fmt: skip
def test_assert_warn_syntax(statement, condition, message, warn):
    (assertion,) = parse(statement).statements
    assert (assertion.condition, assertion.message, assertion.warn) == (condition, message, warn)
    (lowered,) = analyze(parse(statement))
    assert lowered.warn is warn and lowered.text == statement.rstrip(";\n").rstrip()
    assert ("warn" in lowered.to_dict()) is warn  # without WARN, the IR's form of before
    assert ir.from_dict(json.loads(lowered.to_json())) == lowered


def test_a_condition_ending_with_a_column_named_warn_gets_a_hint():
    with pytest.raises(SqlmlError) as raised:
        analyze(parse("ASSERT 1 = warn;"))
    assert 'is written "warn"' in raised.value.hint
    (quoted,) = analyze(parse('ASSERT 1 = "warn";'))
    assert (quoted.condition, quoted.warn) == ('1 = "warn"', False)


def test_a_failed_warn_assertion_warns_and_the_run_passes(tmp_path, duckdb_url, capsys):
    program = write(
        tmp_path,
        "warn.sql",
        TABLE.format(t="t")
        + "ASSERT (SELECT count(*) FROM t) > 5 MESSAGE 'few rows' WARN;\n"
        + "ASSERT (SELECT count(*) FROM t) = 3 WARN;\n",
    )
    report = tmp_path / "out.xml"
    assert run(str(program), "--datasource", duckdb_url, "--junit", str(report)) == 0
    err = capsys.readouterr().err
    warning = f"{program}:2:1: warning: ASSERT failed: few rows: (SELECT count(*) FROM t) > 5 "
    assert f"{warning}is false; (SELECT COUNT(*) FROM t) was 3\n" in err
    assert "assertion holds: (SELECT count(*) FROM t) = 3" in err
    assert err.rstrip().endswith("sqlml: done: PASS=2 WARN=1 FAIL=0 ERROR=0 SKIP=0 TOTAL=3")
    root = junit(report)
    assert list(cases(root).values()) == ["passed", "warning", "passed"]
    warned = next(root.iter("failure"))
    assert warned.get("type") == "warning" and warned.get("message").startswith(warning)
    assert (root.get("failures"), root.get("errors")) == ("1", "0")


def test_the_summary_line_counts_statements(tmp_path, duckdb_url, capsys):
    first = write(tmp_path, "first.sql", TABLE.format(t="t") + "ASSERT 1 = 2;\n")
    second = write(tmp_path, "second.sql", "SELECT 1 AS x;\nSELECT 2 AS y;\n")
    assert run(str(first), str(second), "--datasource", duckdb_url) == 1
    last = capsys.readouterr().err.rstrip().splitlines()[-1]
    assert last == "sqlml: done: PASS=1 WARN=0 FAIL=1 ERROR=0 SKIP=2 TOTAL=4"


def test_no_summary_line_when_a_run_reports_no_outcomes(tmp_path, duckdb_url, capsys):
    """A run that gave no result (it did not start, or its backend reports no statement's
    outcome, as Argo's) leaves the counts unknown: no summary line then."""
    program = write(tmp_path, "one.sql", "SELECT 1 AS x;\n")
    assert run(str(program), "--datasource", duckdb_url, "--resume", "no-such-run") == 1
    err = capsys.readouterr().err
    assert "there is no run 'no-such-run'" in err and "sqlml: done:" not in err
    assert run(str(program), "--datasource", duckdb_url) == 0
    assert "sqlml: done: PASS=1 WARN=0" in capsys.readouterr().err


def test_select_runs_only_the_matching_files(tmp_path, duckdb_url, capsys):
    (tmp_path / "p" / "staging").mkdir(parents=True)
    write(tmp_path / "p", "load.sql", TABLE.format(t="loaded"))
    write(tmp_path / "p" / "staging", "a.sql", TABLE.format(t="a"))
    write(tmp_path / "p" / "staging", "b.sql", TABLE.format(t="b"))
    folder = str(tmp_path / "p")

    def made(*args: str) -> list[str]:
        url = f"duckdb:///{tmp_path / (str(len(list(tmp_path.glob('*.duckdb')))) + '.duckdb')}"
        assert run(folder, *args, "--datasource", url) == 0
        ds = connect(url)
        try:
            return [t for t in ("loaded", "a", "b") if ds.table_exists([t])]
        finally:
            ds.close()

    assert made() == ["loaded", "a", "b"]
    assert made("--select", "staging/b*.sql") == ["b"]
    assert made("--select", "load.sql", "--select", str(tmp_path / "p" / "staging")) == [
        "loaded",
        "a",
        "b",
    ]
    assert made("--select", f"{tmp_path / 'p' / 'staging'}/") == ["a", "b"]
    capsys.readouterr()
    assert run(folder, "--select", "nothing*.sql", "--datasource", duckdb_url) == 1
    err = capsys.readouterr().err
    assert "--select nothing*.sql matches none of the 3 files given" in err
    (tmp_path / "empty").mkdir()
    assert run(str(tmp_path / "empty"), "--datasource", duckdb_url) == 1
    assert "empty holds no .sql files" in capsys.readouterr().err


def test_assertion_runs_after_the_writers_of_its_tables_in_parallel(tmp_path, duckdb_url):
    text = (
        "CREATE TABLE a AS SELECT range AS x FROM range(200000);\n"
        "CREATE TABLE b AS SELECT 1 AS y;\n"
        "ASSERT (SELECT count(*) FROM a) = 200000 AND (SELECT count(*) FROM b) = 1;\n"
        "INSERT INTO a SELECT 7;\n"
        "ASSERT (SELECT count(*) FROM a) = 200001;\n"
    )
    statements = analyze(parse(text), "duckdb")
    graph = dependencies(statements, "duckdb")
    ids = [statement.id for statement in statements]
    assert graph.io[ids[2]].reads_tables == {"a", "b"}
    assert graph.after[ids[2]] == (ids[0], ids[1])
    assert graph.after[ids[3]] == (ids[2],)  # the INSERT waits for the ASSERT that reads a
    assert graph.after[ids[4]] == (ids[3],)
    for attempt in range(3):
        url = duckdb_url.replace(".duckdb", f"{attempt}.duckdb")
        program = write(tmp_path, "order.sql", text)
        assert run(str(program), "--datasource", url, "--jobs", "2") == 0


def test_assert_compiles_to_its_own_step_and_template():
    statements = analyze(parse("CREATE TABLE t (x INT);\nASSERT (SELECT count(*) FROM t) = 0;"))
    code = to_python(statements, "prog")
    assert "steps.assertion(" in code and "ir.AssertStatement(" in code
    argo = to_argo_yaml(statements, "prog")
    assert "name: assert\n" in argo and "template: assert\n" in argo


def test_step_entry_point_fails_on_a_false_assertion(tmp_path):
    (statement,) = analyze(parse("ASSERT 1 > 2 MESSAGE 'never';"))
    env = {**os.environ, "SQLML_DATASOURCE": f"duckdb:///{tmp_path / 'step.duckdb'}"}
    done = subprocess.run(
        [sys.executable, "-m", "sqlml.runtime.step", statement.to_json()],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 1
    assert "ASSERT failed: never: 1 > 2 is false" in done.stderr


def test_step_entry_point_passes_a_false_warn_assertion(tmp_path):
    """As an Argo step runs it: the IR's JSON carries WARN, and the step succeeds."""
    (statement,) = analyze(parse("ASSERT 1 > 2 MESSAGE 'never' WARN;"))
    assert json.loads(statement.to_json())["warn"] is True
    env = {**os.environ, "SQLML_DATASOURCE": f"duckdb:///{tmp_path / 'step.duckdb'}"}
    done = subprocess.run(
        [sys.executable, "-m", "sqlml.runtime.step", statement.to_json()],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "warning: line 1: ASSERT failed: never: 1 > 2 is false" in done.stderr + done.stdout


def test_report_text_is_escaped_and_valid_xml(tmp_path):
    report = JUnitReport()
    error = SqlmlError("bad \x01 <value> & 'quote' \"", line=2, column=5, hint="fix ]]> it")
    report.add_error("odd <name>.sql", error)
    path = tmp_path / "out.xml"
    report.write(path)
    root = junit(path)
    element = next(root.iter("error"))
    assert element.get("message") == "odd <name>.sql:2:5: error: bad \ufffd <value> & 'quote' \""
    assert element.text.endswith("hint: fix ]]> it")
    with pytest.raises(SqlmlError, match="cannot write the JUnit report"):
        report.write(tmp_path / "no" / "such" / "folder.xml")


def test_a_search_cancelled_during_its_trials_is_an_error_not_a_skip():
    """A search is two steps (its trials, then the best kept): one verdict on the statement,
    from its trials' cancellation, not a skip for the step the cancellation left out."""
    (search,) = analyze(
        parse(
            "SELECT * FROM t TO TRAIN xgboost.gbtree WITH max_depth = CHOICE(2, 3) LABEL y INTO m;"
        )
    )
    workflow = to_workflow([search], "search")
    trials, best = (step.name for step in workflow.steps)
    ends: list[StatementEnd] = []
    log = RunLog(Unrecorded(), "r", workflow, None, None, ends.append)
    stopped = Cancelled("the statement was cancelled (Ctrl-C)", line=1, column=1)
    log.end_step(StepRecord(trials, "", rec.CANCELLED, 1, 1.0, 2.0, "cancelled", {}), error=stopped)
    why = "the run was cancelled (Ctrl-C)"
    log.end_step(StepRecord(best, "", rec.OMITTED, 0, 2.0, 2.0, why, {}), new=True)
    assert [(end.step.name, end.verdict.outcome) for end in ends] == [(best, "error")]
    assert ends[0].verdict.diagnostic.render("search.sql") == (
        "search.sql:1:1: error: the statement was cancelled (Ctrl-C)"
    )
    report = JUnitReport()
    result = RunResult("r", log.states, stopped, log.records, log.verdicts)
    report.add_run("search.sql", [search], result)
    assert report.summary() == "PASS=0 WARN=0 FAIL=0 ERROR=1 SKIP=0 TOTAL=1"


# Errors before running --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "where", "message"),
    [
        ("ASSERT (SELECT 1) >;", "3:19", "an expression is incomplete"),
        ("ASSERT SELECT count(*) FROM t;", "3:8", "ASSERT takes a condition, not a query"),
        ("ASSERT 1 = 1 MESSAGE;", "3:14", "MESSAGE takes a text in single quotes"),
        ("ASSERT;", "3:7", "expected a condition"),
    ],
)
def test_bad_assert_syntax_is_located(tmp_path, line, where, message, capsys):
    program = write(tmp_path, "bad.sql", f"SELECT 1;\n\n{line}\n")
    report = tmp_path / "check.xml"
    assert main(["check", str(program), "--junit", str(report)]) == 1
    err = capsys.readouterr().err
    assert f"{program}:{where}: error:" in err and message in err
    error = next(junit(report).iter("error"))
    assert error.get("message").startswith(f"{program}:{where}: error:")

    report = tmp_path / "run.xml"
    assert run(str(program), "--datasource", "duckdb:///:memory:", "--junit", str(report)) == 1
    assert cases(junit(report)) == {"parse and check": "error"}


def test_check_finds_an_assertion_on_a_missing_table(tmp_path, duckdb_url, capsys):
    program = write(
        tmp_path,
        "missing.sql",
        TABLE.format(t="t")
        + "ASSERT (SELECT count(*) FROM t) = 3;\n"
        + "ASSERT (SELECT count(*) FROM no_such_table) = 0;\n",
    )
    assert main(["check", str(program), "--datasource", duckdb_url]) == 1
    err = capsys.readouterr().err
    assert f"{program}:3:1: error:" in err and "no_such_table" in err
    assert ":2:1:" not in err  # t is created by the program itself


# Several files, machine output ------------------------------------------------------------------


def test_stop_at_the_first_failed_file_unless_keep_going(tmp_path, duckdb_url):
    first = write(tmp_path, "first.sql", "ASSERT 1 = 2;\n")
    second = write(
        tmp_path, "second.sql", "CREATE TABLE made AS SELECT 1 AS x;\nSELECT * FROM made;"
    )
    report = tmp_path / "out.xml"
    files = [str(first), str(second), "--datasource", duckdb_url, "--junit", str(report)]
    assert run(*files) == 1
    ds = connect(duckdb_url)
    assert not ds.table_exists(["made"])
    ds.close()
    root = junit(report)
    assert [suite.get("name") for suite in root] == [str(first), str(second)]
    assert list(cases(root).values()) == ["failure", "skipped", "skipped"]
    assert "earlier file failed" in next(root.iter("skipped")).get("message")

    assert run(*files, "--keep-going") == 1
    ds = connect(duckdb_url)
    assert ds.execute("SELECT x FROM made").rows == [(1,)]
    ds.close()
    assert list(cases(junit(report)).values()) == ["failure", "passed", "passed"]


def test_skipped_statements_downstream_of_a_failure(tmp_path, duckdb_url):
    program = write(
        tmp_path,
        "down.sql",
        "CREATE TABLE a AS SELECT 1 AS x;\n"
        "INSERT INTO a SELECT * FROM no_such_table;\n"
        "SELECT * FROM a;\n"
        "CREATE TABLE other AS SELECT 2 AS y;\n",
    )
    report = tmp_path / "out.xml"
    assert run(str(program), "--datasource", duckdb_url, "--junit", str(report)) == 1
    outcomes = list(cases(junit(report)).values())
    assert outcomes == ["passed", "failure", "skipped", "passed"]


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_machine_output_is_clean_on_stdout(tmp_path, fmt):
    """Results alone on stdout (CSV: in files of their own); the run announcement and
    summaries on stderr; no colours."""
    program = write(
        tmp_path,
        "out.sql",
        TABLE.format(t="t") + "ASSERT (SELECT count(*) FROM t) = 3;\n"
        "SELECT x FROM t ORDER BY x;\nSELECT 'a,\"b' AS s;\n",
    )
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    files = ["--output-dir", "results"] if fmt == "csv" else []
    done = subprocess.run(
        [sys.executable, "-m", "sqlml", "run", str(program), "--format", fmt, *files],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    if fmt == "json":
        results = [json.loads(line) for line in done.stdout.splitlines()]
        assert results == [
            {"file": str(program), "statement": "s3-select", "line": 3, "column": 1,
             "rows": [{"x": 1}, {"x": 2}, {"x": 3}]},
            {"file": str(program), "statement": "s4-select", "line": 4, "column": 1,
             "rows": [{"s": 'a,"b'}]},
        ]  # fmt: skip
    else:
        assert done.stdout == ""
        results = tmp_path / "results"
        assert (results / "out-s3-select.csv").read_text() == "x\n1\n2\n3\n"
        assert (results / "out-s4-select.csv").read_text() == 's\n"a,""b"\n'
    assert "sqlml: run " in done.stderr and "assertion holds" in done.stderr
    assert "\x1b" not in done.stdout + done.stderr


# MySQL ------------------------------------------------------------------------------------------


def test_assertions_on_mysql(tmp_path, mysql_url, unique_name):
    program = write(
        tmp_path,
        "mysql.sql",
        TABLE.format(t=unique_name).replace(
            "(VALUES (1), (2), (3)) AS v(x)",
            "(SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 3) AS v",
        )
        + f"ASSERT (SELECT count(*) FROM {unique_name}) = 3;\n"
        + f"ASSERT (SELECT avg(x) FROM {unique_name}) > 2 MESSAGE 'mean too low';\n",
    )
    report = tmp_path / "out.xml"
    try:
        assert run(str(program), "--datasource", mysql_url, "--junit", str(report)) == 1
    finally:
        ds = connect(mysql_url)
        ds.execute(f"DROP TABLE IF EXISTS {unique_name}")
        ds.close()
    root = junit(report)
    assert list(cases(root).values()) == ["passed", "passed", "failure"]
    message = next(root.iter("failure")).get("message")
    assert f"{program}:3:1: error: ASSERT failed: mean too low: " in message
    assert message.endswith("was 2.0000")  # MySQL's AVG of integers is a DECIMAL
