"""The sqlml command: exit statuses, error reports, laziness, compiled workflows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sqlml.cli import main

ROOT = Path(__file__).resolve().parent.parent


def sqlml(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sqlml", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SQLML_DATASOURCE": ""},
    )


def test_select_prints_a_table_and_loads_no_ml_library():
    code = (
        "import sys\n"
        "from sqlml.cli import main\n"
        "status = main(['-e', 'SELECT 1 AS one, 2.5 AS x;', '--datasource', 'duckdb:///:memory:'])\n"
        "heavy = ('tensorflow', 'keras', 'xgboost', 'sklearn', 'skops', 'onnx', 'onnxruntime',\n"
        "         'lightgbm', 'skl2onnx', 'onnxmltools')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "print('heavy:', heavy)\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        " one | x",
        "-----+-----",
        "   1 | 2.5",
        "(1 row)",
        "heavy: []",
    ]


def test_python_dash_m_and_usage_errors():
    assert sqlml("--version").stdout.startswith("sqlml ")
    assert sqlml("run").returncode == 2
    assert sqlml("compile", "x.sql", "--target", "cobol").returncode == 2


def test_compiled_python_workflow_runs(tmp_path):
    program = tmp_path / "small.sql"
    program.write_text(
        "CREATE TABLE d AS SELECT i AS x, i % 2 AS y FROM range(50) t(i);\n"
        "SELECT * FROM d TO TRAIN xgboost.gbtree WITH train.num_boost_round = 3\n"
        "  LABEL y INTO m;\n"
        "SELECT * FROM d TO PREDICT p.y USING m;\n"
        "SELECT count(*) AS n FROM p;\n"
    )
    out = tmp_path / "small.py"
    assert main(["compile", str(program), "--target", "python", "-o", str(out)]) == 0
    code = out.read_text()
    assert "steps.train(" in code and "ir.TrainStatement(" in code
    done = subprocess.run(
        [
            sys.executable,
            str(out),
            "--datasource",
            f"duckdb:///{tmp_path / 'w.duckdb'}",
            "--format",
            "csv",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["n", "50"]


ERRORS = [
    (
        "SELECT * FROM t TO TRAIN DNNClasifier LABEL y INTO m;",
        "<-e>:1:26: error: unknown estimator DNNClasifier",
        "did you mean DNNClassifier?",
    ),
    (
        "SELECT * FROM t TO TRAIN DNNClassifier WITH model.hiden_units = [3] LABEL y INTO m;",
        "<-e>:1:45: error: DNNClassifier has no attribute model.hiden_units",
        "did you mean model.hidden_units?",
    ),
    (
        "SELECT * FROM t TO TRAIN DNNClassifier WITH train.epoch = 'ten' LABEL y INTO m;",
        "<-e>:1:45: error: attribute train.epoch must be an integer",
        "passes over the training data",
    ),
    (
        "CREATE TABLE t AS SELECT 1 AS a, 2 AS b;\n"
        "SELECT a, b FROM t TO TRAIN xgboost.gbtree LABEL c INTO m;",
        "<-e>:2:1: error: LABEL column c is not in the result of the SELECT",
        "the SELECT returns: a, b",
    ),
    (
        "CREATE TABLE t AS SELECT 1 AS a;\nSELECT * FROM t TO PREDICT p.b USING missing;",
        "<-e>:2:38: error: model missing does not exist in duckdb:///:memory:",
        "train it first",
    ),
    (
        "SELECT * FROM nowhere;",
        "<-e>:1:15: error: DuckDB: Catalog Error: Table with name nowhere does not exist!",
        None,
    ),
    ("SELECT 'open;", "<-e>:1:8: error: this string is never closed", None),
]


@pytest.mark.parametrize(("program", "first_line", "hint"), ERRORS)
def test_user_errors_are_one_paragraph_with_location(program, first_line, hint, capsys):
    assert main(["-e", program, "--datasource", "duckdb:///:memory:"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[0].startswith(first_line), err
    if hint:
        assert hint in err


def test_unreachable_database_is_a_clear_error():
    done = sqlml("-e", "SELECT 1;", "--datasource", "mysql://root:s3cret-pw@127.0.0.1:1/test")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "cannot connect to mysql://root:***@127.0.0.1:1/test" in done.stderr
    assert "s3cret-pw" not in done.stderr + done.stdout


def test_missing_file_is_a_user_error(tmp_path):
    done = sqlml("run", str(tmp_path / "nope.sql"))
    assert done.returncode == 1
    assert "cannot read" in done.stderr and "Traceback" not in done.stderr


def test_check_reports_errors_without_running(tmp_path):
    good, bad = tmp_path / "good.sql", tmp_path / "bad.sql"
    good.write_text("SELECT * FROM nowhere TO TRAIN xgboost.gbtree LABEL y INTO m;\n")
    bad.write_text("SELECT 1;\nSELECT * FROM t TO TRAIN nonsense LABEL y INTO m;\n")
    assert main(["check", str(good)]) == 0
    done = sqlml("check", str(bad))
    assert done.returncode == 1
    assert done.stderr.startswith(f"{bad}:2:26: error: unknown estimator nonsense")


_BACKTICKS = "CREATE TABLE t AS SELECT 1 AS `x`;\nASSERT (SELECT COUNT(`x`) FROM `t`) = 1;\n"
_MYSQL_URL = "mysql://someone:pa55word@db.example:3306/shop"  # read for its dialect, not opened


@pytest.mark.parametrize(
    "where",
    [
        ["--datasource", _MYSQL_URL, "compile"],
        ["compile", "--datasource", _MYSQL_URL],
        ["compile", "--dialect", "mysql"],
        ["compile", "--environment"],
    ],
)
@pytest.mark.parametrize("target", ["argo", "python"])
def test_compile_takes_the_dialect_of_the_datasource(tmp_path, monkeypatch, where, target):
    """The datasource's dialect (option or $SQLML_DATASOURCE) compiles MySQL's backticks,
    to the very output --dialect mysql gives."""
    program = tmp_path / "ticks.sql"
    program.write_text(_BACKTICKS)
    monkeypatch.delenv("SQLML_DATASOURCE", raising=False)
    if where[-1] == "--environment":
        monkeypatch.setenv("SQLML_DATASOURCE", _MYSQL_URL)
        where = where[:-1]
    out, expected = tmp_path / "out", tmp_path / "expected"
    assert main([*where, str(program), "--target", target, "-o", str(out)]) == 0
    assert (
        main(
            ["compile", str(program), "--dialect", "mysql", "--target", target, "-o", str(expected)]
        )
        == 0
    )
    assert out.read_text() == expected.read_text()
    assert "pa55word" not in out.read_text()


def test_parse_takes_the_dialect_of_the_datasource(tmp_path, monkeypatch, capsys):
    program = tmp_path / "ticks.sql"
    program.write_text(_BACKTICKS)
    monkeypatch.delenv("SQLML_DATASOURCE", raising=False)
    assert main(["parse", str(program)]) == 1  # DuckDB reads backticks as an error
    capsys.readouterr()
    assert main(["parse", "--datasource", _MYSQL_URL, str(program)]) == 0
    assert "reads t; after s1" in capsys.readouterr().out
