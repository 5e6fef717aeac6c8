"""SQL programs on the local executor: the dependency DAG in parallel, results in program
order, the run record, --resume after an injected failure, memoisation, timeouts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sqlml import local_files
from sqlml.backends.local.codegen import to_python
from sqlml.backends.local.record import RunRecord, StepRecord
from sqlml.backends.local.tasks import StepLog
from sqlml.cli import main
from sqlml.codegen import to_workflow
from sqlml.datasources import connect
from sqlml.grammar import parse
from sqlml.semantics import analyze

HEAVY = "SELECT sum(i * i % 13) AS s FROM range({rows}) t(i)"


def program(tmp_path: Path, text: str) -> str:
    path = tmp_path / "program.sql"
    path.write_text(text)
    return str(path)


def run(file: str, url: str, capsys: pytest.CaptureFixture[str], *options: str):
    """``sqlml run`` in this process: exit status, run id, stdout, stderr."""
    status = main(["run", file, "--datasource", url, *options])
    out, err = capsys.readouterr()
    found = re.match(r"sqlml: run ([\w-]+)", err)
    assert found, err
    return status, found.group(1), out, err


def record(url: str, run_id: str) -> dict[str, StepRecord]:
    ds = connect(url)
    try:
        return RunRecord(ds).steps(run_id)
    finally:
        ds.close()


def states(steps: dict[str, StepRecord]) -> dict[str, str]:
    return {name: step.state for name, step in sorted(steps.items())}


def test_independent_statements_have_no_edge():
    statements = analyze(
        parse(
            "CREATE TABLE a AS SELECT 1 AS x;\n"
            "CREATE TABLE b AS SELECT 2 AS x;\n"
            "SELECT * FROM a;\n"
            "SELECT * FROM a, b;\n"
        )
    )
    workflow = to_workflow(statements, "w")
    assert [step.after for step in workflow.steps] == [
        (),
        (),
        ("s1-create",),
        ("s1-create", "s2-create"),
    ]
    code = to_python(statements, "w")
    assert "after=[s1_create, s2_create]" in code and code.count("after=") == 2


def test_independent_statements_run_in_parallel(tmp_path, duckdb_url, capsys):
    file = program(
        tmp_path,
        f"CREATE TABLE a AS {HEAVY.format(rows=30_000_000)};\n"
        f"CREATE TABLE b AS {HEAVY.format(rows=30_000_000)};\n",
    )
    status, run_id, _, _ = run(file, duckdb_url, capsys, "--jobs", "2")
    assert status == 0
    a, b = record(duckdb_url, run_id).values()
    assert a.started_at < b.ended_at and b.started_at < a.ended_at
    status, run_id, _, _ = run(
        program(tmp_path, "CREATE TABLE c AS SELECT 1 AS x;\nCREATE TABLE d AS SELECT 1 AS x;"),
        duckdb_url,
        capsys,
        "--jobs",
        "1",
    )
    first, second = sorted(record(duckdb_url, run_id).values(), key=lambda s: s.started_at)
    assert second.started_at >= first.ended_at


def test_results_print_in_program_order(tmp_path, duckdb_url, capsys):
    file = program(tmp_path, f"{HEAVY.format(rows=20_000_000)};\nSELECT 'small' AS small;\n")
    status, _, out, _ = run(file, duckdb_url, capsys, "--jobs", "2", "--format", "csv")
    assert status == 0
    assert out.split()[0] == "s" and out.split()[2:] == ["small", "small"]


RESUMABLE = """
CREATE TABLE src AS SELECT i AS k, i * 2 AS v FROM range(100) t(i);
CREATE TABLE other AS SELECT 1 AS one;
CREATE TABLE joined AS SELECT src.k, lookup.name FROM src JOIN lookup ON src.k = lookup.k;
SELECT count(*) AS n FROM joined;
SELECT count(*) AS m FROM other;
"""


def test_resume_runs_only_the_failed_and_downstream_steps(tmp_path, duckdb_url, capsys):
    file = program(tmp_path, RESUMABLE)
    status, first, _, err = run(file, duckdb_url, capsys, "--jobs", "2")
    assert status == 1
    assert "Table with name lookup does not exist" in err and f"--resume {first}" in err
    assert states(record(duckdb_url, first)) == {
        "s1-create": "succeeded",
        "s2-create": "succeeded",
        "s3-create": "failed",
        "s4-select": "omitted",
        "s5-select": "succeeded",
    }
    ds = connect(duckdb_url)  # the fix: the missing table appears
    ds.execute("CREATE TABLE lookup AS SELECT i AS k, 'n' || i AS name FROM range(10) t(i)")
    ds.close()

    status, second, out, err = run(file, duckdb_url, capsys, "--resume", first, "--format", "csv")
    assert status == 0, err
    assert second != first and f"resuming {first}" in err
    steps = record(duckdb_url, second)
    assert states(steps) == {
        "s1-create": "cached",
        "s2-create": "cached",
        "s3-create": "succeeded",
        "s4-select": "succeeded",
        "s5-select": "cached",
    }
    assert steps["s4-select"].outputs == {"result": "10"}
    assert steps["s5-select"].outputs == {"result": "1"}  # from the first run
    assert out.split() == ["n", "10"]  # cached steps print nothing


def test_resume_reruns_a_succeeded_step_whose_input_table_changed(tmp_path, duckdb_url, capsys):
    ds = connect(duckdb_url)
    ds.execute("CREATE TABLE base AS SELECT 1 AS x")
    ds.close()
    file = program(
        tmp_path,
        "CREATE OR REPLACE TABLE total AS SELECT count(*) AS n FROM base;\n"
        "CREATE OR REPLACE TABLE copy AS SELECT 1 AS x;\n"
        "SELECT * FROM needed;\n",
    )
    status, first, _, _ = run(file, duckdb_url, capsys)
    assert status == 1
    ds = connect(duckdb_url)
    ds.execute("INSERT INTO base VALUES (2)")
    ds.execute("CREATE TABLE needed AS SELECT 1 AS y")
    ds.close()
    status, second, _, _ = run(file, duckdb_url, capsys, "--resume", first)
    assert status == 0
    steps = record(duckdb_url, second)
    assert states(steps) == {
        "s1-create": "succeeded",
        "s2-create": "cached",
        "s3-select": "succeeded",
    }
    assert steps["s1-create"].content_hash != record(duckdb_url, first)["s1-create"].content_hash


def test_resume_reruns_an_edited_statement(tmp_path, duckdb_url, capsys):
    file = program(tmp_path, "CREATE OR REPLACE TABLE t AS SELECT 1 AS x;\nSELECT * FROM gone;\n")
    status, first, _, _ = run(file, duckdb_url, capsys)
    program(tmp_path, "CREATE OR REPLACE TABLE t AS SELECT 2 AS x;\nSELECT * FROM t;\n")
    status, second, out, _ = run(file, duckdb_url, capsys, "--resume", first, "--format", "csv")
    assert status == 0
    assert states(record(duckdb_url, second)) == {
        "s1-create": "succeeded",
        "s2-select": "succeeded",
    }
    assert out.split() == ["x", "2"]


def test_resuming_an_unknown_run_is_a_clear_error(tmp_path, duckdb_url, capsys):
    file = program(tmp_path, "SELECT 1;")
    assert main(["run", file, "--datasource", duckdb_url]) == 0
    assert main(["run", file, "--datasource", duckdb_url, "--resume", "nope"]) == 1
    err = capsys.readouterr().err
    assert "there is no run 'nope'" in err and "hint: give the run id printed" in err


def test_a_statement_past_its_timeout_is_interrupted(tmp_path, duckdb_url, capsys):
    file = program(tmp_path, f"{HEAVY.format(rows=10**13)};\n")
    status, run_id, _, err = run(file, duckdb_url, capsys, "--timeout", "0.5")
    assert status == 1 and "ran longer than its timeout of 0.5 s" in err
    (step,) = record(duckdb_url, run_id).values()
    assert step.state == "failed" and step.ended_at - step.started_at < 30


def test_argo_backend_refuses_a_file_database_its_pods_cannot_open(tmp_path, duckdb_url, capsys):
    file = program(tmp_path, "SELECT 1;")
    assert main(["run", file, "--datasource", duckdb_url, "--backend", "argo"]) == 1
    assert "pods of an Argo run cannot open the file database" in capsys.readouterr().err


def test_in_memory_databases_run_on_one_connection(capsys):
    status = main(
        ["-e", "CREATE TABLE a AS SELECT 1 AS x; CREATE TABLE b AS SELECT 2 AS y; "
         "SELECT * FROM a, b;", "--datasource", "duckdb:///:memory:", "--format", "csv"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.split() == ["x,y", "1,2"] and "sqlml: run" not in err


def test_resume_on_mysql(tmp_path, mysql_url, unique_name, capsys):
    src, missing = f"{unique_name}_src", f"{unique_name}_missing"
    file = program(
        tmp_path,
        f"CREATE TABLE {src} AS SELECT 1 AS x;\nSELECT count(*) AS n FROM {missing};\n",
    )
    try:
        status, first, _, _ = run(file, mysql_url, capsys, "--jobs", "2")
        assert status == 1
        ds = connect(mysql_url)
        ds.execute(f"CREATE TABLE {missing} AS SELECT 1 AS y")
        ds.close()
        status, second, out, _ = run(file, mysql_url, capsys, "--resume", first, "--format", "csv")
        assert status == 0 and out.split() == ["n", "1"]
        assert states(record(mysql_url, second)) == {
            "s1-create": "cached",
            "s2-select": "succeeded",
        }
    finally:
        ds = connect(mysql_url)
        for table in (src, missing):
            ds.execute(f"DROP TABLE IF EXISTS {table}")
        ds.close()


def test_sqlite_steps_share_one_connection_and_resume(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'test.db'}"
    file = program(tmp_path, "CREATE TABLE a AS SELECT 1 AS x;\nSELECT count(*) AS n FROM b;\n")
    status, first, _, _ = run(file, url, capsys, "--jobs", "4")
    assert status == 1
    ds = connect(url)
    ds.execute("CREATE TABLE b AS SELECT 1 AS y")
    ds.close()
    status, second, out, _ = run(file, url, capsys, "--resume", first, "--format", "csv")
    assert status == 0 and out.split() == ["n", "1"]
    assert states(record(url, second)) == {"s1-create": "cached", "s2-select": "succeeded"}


def test_a_run_whose_log_folder_cannot_be_made_runs_without_logs(
    tmp_path, duckdb_url, capsys, monkeypatch
):
    """The run folder cannot be created (under a file: not even root can): one warning, the
    run goes on, and its record has every step."""
    monkeypatch.setattr(local_files, "_warned", set())
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("SQLML_RUN_DIR", str(tmp_path / "file" / "runs"))
    file = program(tmp_path, "CREATE TABLE a AS SELECT 1 AS x;\nSELECT * FROM a;\n")
    status, run_id, out, err = run(file, duckdb_url, capsys, "--format", "csv")
    assert status == 0, err
    assert out.split() == ["x", "1"]
    assert re.search(r"sqlml: run [\w-]+: 2 steps, no logs\n", err)
    assert err.count("sqlml: warning:") == 1 and "Not a directory" in err, err
    steps = states(record(duckdb_url, run_id))
    assert steps == {"s1-create": "succeeded", "s2-select": "succeeded"}


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_a_step_log_on_a_full_disk_is_dropped_with_one_warning(capsys, monkeypatch):
    """/dev/full: every write fails with ENOSPC, as on a full disk."""
    monkeypatch.setattr(local_files, "_warned", set())
    for _ in range(2):
        with StepLog(Path("/dev/full")) as log:
            for line in ("attempt 1\n", "succeeded\n"):
                assert log.write(line) == len(line)
                log.flush()
    err = capsys.readouterr().err
    assert err.count("sqlml: warning:") == 1 and "No space left on device" in err, err
