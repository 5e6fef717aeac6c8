"""Each result in a file of its own (``--output-dir``), and ``--format csv`` on stdout."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from sqlml.cli import main
from sqlml.codegen import to_workflow
from sqlml.datasources import ResultSet
from sqlml.grammar import parse
from sqlml.runtime.output import write_atomically
from sqlml.semantics import analyze
from sqlml.workflow_cli import main as workflow_main

SHAPES = """CREATE TABLE t AS SELECT * FROM (VALUES (1, 'a'), (2, 'b,c')) AS v(x, s);
SELECT x, s FROM t ORDER BY x;
SELECT count(*) AS n FROM t;
SELECT 'line one
line two' AS text, CAST(1.5 AS DOUBLE) AS ratio, NULL AS nothing;
"""


def program(folder: Path, name: str, text: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.reader(file))


def test_each_result_is_a_csv_file_of_its_own(tmp_path, duckdb_url, capsys):
    out = tmp_path / "results"  # made by the run
    file = program(tmp_path, "shapes.sql", SHAPES)
    status = main(
        ["run", file, "--datasource", duckdb_url, "--format", "csv", "--output-dir", str(out)]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.out == ""  # the results are in the files only
    assert sorted(os.listdir(out)) == [
        "shapes-s2-select.csv",
        "shapes-s3-select.csv",
        "shapes-s4-select.csv",
    ]
    assert read_csv(out / "shapes-s2-select.csv") == [["x", "s"], ["1", "a"], ["2", "b,c"]]
    assert read_csv(out / "shapes-s3-select.csv") == [["n"], ["2"]]
    assert read_csv(out / "shapes-s4-select.csv") == [
        ["text", "ratio", "nothing"],
        ["line one\nline two", "1.5", ""],
    ]


def test_a_failed_statement_keeps_the_files_of_the_results_before_it(tmp_path, duckdb_url, capsys):
    text = (
        "SELECT 1 AS a, 2 AS b;\n"
        "CREATE TABLE bad AS SELECT * FROM no_such_table;\n"
        "SELECT * FROM bad;\n"
    )
    file = program(tmp_path, "broken.sql", text)
    out = tmp_path / "out"
    status = main(
        ["run", file, "--datasource", duckdb_url, "--format", "csv", "--output-dir", str(out)]
    )
    err = capsys.readouterr().err
    assert status == 1
    # at the missing table, where DuckDB places the error
    assert "broken.sql:2:35: error:" in err and "no_such_table" in err
    assert os.listdir(out) == ["broken-s1-select.csv"]  # s3 waited for s2 and did not run
    assert read_csv(out / "broken-s1-select.csv") == [["a", "b"], ["1", "2"]]


def test_the_files_of_several_programs_are_unique_and_sort_in_run_order(
    tmp_path, duckdb_url, capsys
):
    # the same stem in two folders; z runs before a (the order given)
    first = program(tmp_path / "z", "load.sql", "SELECT 'z' AS origin;\n")
    second = program(tmp_path / "a", "load.sql", "SELECT 'a' AS origin, 2 AS n;\n")
    out = tmp_path / "out"
    status = main(
        [
            "run",
            first,
            second,
            "--datasource",
            duckdb_url,
            "--format",
            "json",
            "--output-dir",
            str(out),
        ]
    )
    assert status == 0, capsys.readouterr().err
    assert sorted(os.listdir(out)) == ["1-load-s1-select.json", "2-load-s1-select.json"]
    assert json.loads((out / "1-load-s1-select.json").read_text()) == [{"origin": "z"}]
    assert json.loads((out / "2-load-s1-select.json").read_text()) == [{"origin": "a", "n": 2}]


def test_a_rerun_replaces_the_files_and_leaves_no_temporary_file(tmp_path, duckdb_url, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "p-s1-select.txt").write_text("stale\n")
    file = program(tmp_path, "p.sql", "SELECT 7 AS seven;\n")
    assert main(["run", file, "--datasource", duckdb_url, "--output-dir", str(out)]) == 0
    assert os.listdir(out) == ["p-s1-select.txt"]  # the table format's file
    assert (out / "p-s1-select.txt").read_text() == " seven\n-------\n     7\n(1 row)\n"


def test_a_result_that_cannot_be_written_fails_the_run_and_the_others_are_kept(
    tmp_path, duckdb_url, capsys
):
    out = tmp_path / "out"
    (out / "p-s1-select.csv").mkdir(parents=True)  # a folder where the file goes
    file = program(tmp_path, "p.sql", "SELECT 1 AS a;\nSELECT 2 AS b;\n")
    status = main(
        ["run", file, "--datasource", duckdb_url, "--format", "csv", "--output-dir", str(out)]
    )
    err = capsys.readouterr().err
    assert status == 1
    assert (
        f"p.sql:1:1: error: cannot write the result of s1-select to {out / 'p-s1-select.csv'}"
        in err
    )
    assert read_csv(out / "p-s2-select.csv") == [["b"], ["2"]]
    assert sorted(os.listdir(out)) == ["p-s1-select.csv", "p-s2-select.csv"]  # no temporary left
    assert err.rstrip().endswith("sqlml: done: PASS=1 WARN=0 FAIL=0 ERROR=1 SKIP=0 TOTAL=2")


def test_write_atomically_keeps_the_old_file_when_the_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "r.csv"
    target.write_text("old\n")

    def fail(source: str, destination: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        write_atomically(target, "new\n")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["r.csv"]


def test_an_output_dir_that_cannot_be_made_stops_before_running(tmp_path, duckdb_url, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    file = program(tmp_path, "p.sql", "CREATE TABLE made AS SELECT 1 AS a;\n")
    status = main(["run", file, "--datasource", duckdb_url, "--output-dir", str(blocker / "out")])
    err = capsys.readouterr().err
    assert status == 1
    assert f"cannot make the --output-dir folder {blocker / 'out'}" in err
    assert "sqlml: run " not in err  # nothing ran


def test_execute_writes_its_results_to_files_named_execute(
    tmp_path, duckdb_url, capsys, monkeypatch
):
    out = tmp_path / "out"
    status = main(
        [
            "-e",
            "SELECT 1 AS a; SELECT 'x' AS b;",
            "--datasource",
            duckdb_url,
            "--format",
            "csv",
            "--output-dir",
            str(out),
        ]
    )
    assert status == 0, capsys.readouterr().err
    assert read_csv(out / "execute-s1-select.csv") == [["a"], ["1"]]
    assert read_csv(out / "execute-s2-select.csv") == [["b"], ["x"]]


def test_a_compiled_program_takes_output_dir(tmp_path, duckdb_url, capsys):
    workflow = to_workflow(analyze(parse("SELECT 3 AS c;\n")), "job", "duckdb")
    out = tmp_path / "out"
    argv = ["--datasource", duckdb_url, "--format", "csv", "--output-dir", str(out)]
    assert workflow_main(workflow, str(tmp_path), argv) == 0
    assert read_csv(out / "job-s1-select.csv") == [["c"], ["3"]]


def test_csv_results_on_stdout_are_separated_by_an_empty_line(tmp_path, duckdb_url, capsys):
    first = program(tmp_path, "one.sql", "SELECT 1 AS a, 2 AS b;\n")
    second = program(
        tmp_path,
        "two.sql",
        "SELECT '' AS c, NULL AS e;\nSELECT NULL AS f;\nSELECT 'x\n\ny' AS d;\n",
    )
    status = main(["run", first, second, "--datasource", duckdb_url, "--format", "csv"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.out == 'a,b\n1,2\n\nc,e\n,\n\nf\n""\n\nd\n"x\n\ny"\n'
    records = list(csv.reader(io.StringIO(captured.out, newline="")))
    tables, table = [], []
    for record in records:  # an empty record separates tables; an empty value is ""
        if record:
            table.append(record)
        else:
            tables.append(table)
            table = []
    tables.append(table)
    assert tables == [
        [["a", "b"], ["1", "2"]],
        [["c", "e"], ["", ""]],
        [["f"], [""]],  # a lone empty value is "", not an empty line
        [["d"], ["x\n\ny"]],
    ]
    assert captured.err.count("sqlml: note:") == 1
    assert (
        "sqlml: note: the result of s1-select is a second CSV table on stdout, after an empty "
        "line; --output-dir DIR writes each result to a CSV file of its own"
    ) in captured.err


def test_json_on_stdout_is_one_line_per_result(tmp_path, duckdb_url, capsys):
    """Each tagged with its file, statement id and position."""
    file = program(tmp_path, "shapes.sql", SHAPES)
    assert main(["run", file, "--datasource", duckdb_url, "--format", "json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in lines] == [
        {"file": file, "statement": "s2-select", "line": 2, "column": 1,
         "rows": [{"x": 1, "s": "a"}, {"x": 2, "s": "b,c"}]},
        {"file": file, "statement": "s3-select", "line": 3, "column": 1, "rows": [{"n": 2}]},
        {"file": file, "statement": "s4-select", "line": 4, "column": 1,
         "rows": [{"text": "line one\nline two", "ratio": 1.5, "nothing": None}]},
    ]  # fmt: skip


def test_json_of_a_string_names_it(duckdb_url, capsys):
    assert main(["-e", "SELECT 1 AS a;\n  SELECT 2 AS b;", "--datasource", duckdb_url,
                 "--format", "json"]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in lines] == [
        {"file": "<-e>", "statement": "s1-select", "line": 1, "column": 1, "rows": [{"a": 1}]},
        {"file": "<-e>", "statement": "s2-select", "line": 2, "column": 3, "rows": [{"b": 2}]},
    ]


def test_json_files_of_output_dir_hold_the_rows(tmp_path, duckdb_url):
    """A file of its own is named for its statement: its JSON is the rows alone."""
    file = program(tmp_path, "p.sql", "SELECT 1 AS a;\n")
    out = tmp_path / "out"
    args = ["run", file, "--datasource", duckdb_url, "--format", "json", "--output-dir", str(out)]
    assert main(args) == 0
    assert json.loads((out / "p-s1-select.json").read_text()) == [{"a": 1}]


def test_a_single_csv_result_on_stdout_is_kept(tmp_path, duckdb_url, capsys):
    file = program(tmp_path, "p.sql", "CREATE TABLE t AS SELECT 1 AS a;\nSELECT a FROM t;\n")
    assert main(["run", file, "--datasource", duckdb_url, "--format", "csv"]) == 0
    assert capsys.readouterr().out == "a\n1\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "p.sql", "--output-dir", "out", "--backend", "argo"],
            "--output-dir is for the local backend",
        ),
        (
            ["--output-dir", "out", "repl"],
            "--output-dir keeps the results of sqlml run and sqlml -e SQL",
        ),
    ],
)
def test_output_dir_where_it_does_not_apply_is_bad_usage(
    argv, message, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.sql").write_text("SELECT 1;\n")
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_result_files_name_their_statements(tmp_path):
    from sqlml.runtime.output import ResultFiles

    files = ResultFiles(tmp_path, "p-", "json")
    path = files.write("s01-select", ResultSet(["a"], [[1]]))
    assert path == tmp_path / "p-s01-select.json"
    assert json.loads(path.read_text()) == [{"a": 1}]
