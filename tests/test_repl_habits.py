"""The shell's psql/duckdb habits: \\dt, \\x, \\format, \\o, \\i, \\e, exit/quit/help, the
database in the prompt, the confirmation of DROP, and scripts piped on stdin."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pexpect
import pytest

from sqlml.datasources import ResultSet
from sqlml.repl.expanded import render_expanded
from sqlml.repl.statements import bare_command, entries, is_complete
from tests.test_repl import GUARD, Shell, completions


@pytest.fixture
def shell(iris_duckdb_url, tmp_path):
    started = Shell(iris_duckdb_url, tmp_path / "history", EDITOR="sed -i s/41/42/")
    yield started
    if started.child.isalive():
        started.child.terminate(force=True)


def test_a_script_splits_into_the_entries_the_shell_would_run():
    script = [
        "-- a comment\n",
        "SELECT 1\n",
        "  AS one;\n",
        "\n",
        "\\dt iris*\n",
        "exit\n",
        "SELECT 2",
    ]
    assert list(entries(script)) == [
        (1, "-- a comment\nSELECT 1\n  AS one;\n"),
        (5, "\\dt iris*\n"),
        (6, "exit\n"),
        (7, "SELECT 2\n"),  # unfinished at the end: run as it is
    ]
    assert bare_command(" QUIT; ") == "\\q" and bare_command("help") == "\\?"
    assert bare_command("exit_code") is None and is_complete("exit") and not is_complete("exits")


def test_the_new_commands_complete_and_dt_completes_tables():
    assert set(completions("\\f")) == {"\\format"}
    assert {"\\dt", "\\d"} <= set(completions("\\d"))
    assert set(completions("\\dt s")) == {"sales"}


def test_expanded_display_shows_a_record_per_row():
    result = ResultSet(["id", "petal_width"], [(1, 0.2), (2, None)])
    assert render_expanded(result).splitlines() == [
        "-[ RECORD 1 ]-----",  # as wide as the widest name and value
        "id          | 1",
        "petal_width | 0.2",
        "-[ RECORD 2 ]-----",
        "id          | 2",
        "petal_width | NULL",
    ]
    wide = ResultSet(["a_long_column_name", "b"], [(1, "a wider value")])
    assert render_expanded(wide).splitlines() == [
        "-[ RECORD 1 ]------+--------------",  # the + over the | when the title leaves room
        "a_long_column_name | 1",
        "b                  | a wider value",
    ]
    assert render_expanded(ResultSet(["id"], [])) == "(0 rows)\n"


def test_dt_lists_tables_and_the_prompt_names_the_database(shell, tmp_path):
    shell.child.send("\\dt iris_t*\r")
    listed = shell.expect(r"(?s)\\dt iris_t\*\r*\n(.*?\(2 rows\))").group(1).replace("\r", "")
    assert re.search(r"iris_test\s+\|\s+6", listed) and re.search(r"iris_train\s+\|\s+6", listed)
    assert "iris_train" in shell.run("\\d", until=r"\(\d+ rows\)")  # \d alone: the same list
    assert "(0 rows)" in shell.run("\\dt nothing*", until=r"\(0 rows\)")
    shell.expect(r"sqlml \[test\]>")  # the duckdb file test.duckdb
    shell.run(f"\\c duckdb:///{tmp_path / 'other.duckdb'}", until=r"\n")
    shell.expect(r"sqlml \[other\]>")
    shell.quit()


def test_expanded_display_and_formats(shell):
    query = "SELECT id, class FROM iris_train WHERE id <= 2 ORDER BY id;"
    assert shell.run("\\x", until=r"\n") == "expanded display is on\n"
    record = ["-[ RECORD 1 ]-", "id    | 1", "class | setosa"]
    assert shell.run(query).splitlines()[:3] == record
    assert shell.run("\\x auto", until=r"\n") == "expanded display is auto\n"
    assert shell.run(query).splitlines()[:2] == [" id | class", "----+--------"]  # it fits
    wide = "SELECT repeat('x', 300) AS wide;"
    assert shell.run(wide).splitlines()[0].startswith("-[ RECORD 1 ]")
    assert shell.run("\\x off", until=r"\n") == "expanded display is off\n"
    assert shell.run("\\format csv", until=r"\n") == "output format is csv\n"
    assert shell.run(query).splitlines()[:3] == ["id,class", "1,setosa", "2,setosa"]
    assert shell.run("\\format json", until=r"\n") == "output format is json\n"
    rows = '[{"id": 1, "class": "setosa"}, {"id": 2, "class": "setosa"}]'
    assert shell.run(query).splitlines()[0] == rows
    assert "\\format takes table, csv, json, not xml" in shell.run("\\format xml", until=r"\n")
    shell.run("\\format table", until=r"\n")
    assert shell.run(query).splitlines()[0] == " id | class"
    shell.quit()


def test_o_sends_results_to_a_file_until_o_alone(shell, tmp_path):
    out = tmp_path / "results.txt"
    shell.run(f"\\o {out}", until="")
    shown = shell.run("SELECT 40 + 2 AS answer;")
    # only the timing stays on the screen (it may read 42 ms itself)
    assert re.fullmatch(r"Time: [\d.]+ m?s\s*", shown), shown
    train = (
        "SELECT * FROM iris_train TO TRAIN xgboost.gbtree WITH objective = 'multi:softprob', "
        "train.num_boost_round = 2 LABEL class INTO quiet_model;"
    )
    assert shell.run(train).startswith("Time:")  # a summary goes to the file too
    shell.run("\\o", until="")
    assert re.search(r"seven\s+-+\s+7\b", shell.run("SELECT 7 AS seven;"))
    written = out.read_text().splitlines()
    assert written[:4] == [" answer", "--------", "     42", "(1 row)"]
    assert written[4].startswith("trained quiet_model (xgboost.gbtree) on 96 rows")
    assert len(written) == 5
    shell.quit()


def test_i_runs_a_file_as_if_typed_up_to_its_first_error(shell, tmp_path):
    script = tmp_path / "script.sql"
    script.write_text(
        "CREATE TABLE from_file AS\n  SELECT 5 AS five;\n\\timing off\nSELECT * FROM from_file;\n"
        "SELECT * FROM nowhere;\nSELECT 'never run';\n"
    )
    ran = shell.run(f"\\i {script}", until=rf"{re.escape(str(script))}:5:15: error: .*\n")
    assert re.search(r"five\n-+\n +5\n\(1 row\)", ran) and "never run" not in ran
    assert "timing is off" in ran
    assert "cannot read" in shell.run(f"\\i {tmp_path / 'missing.sql'}", until=r"\n")
    shell.quit()


def test_e_edits_the_last_entry_and_runs_it(shell, tmp_path):
    assert shell.run("SELECT 41 AS n;").splitlines()[2].strip() == "41"
    edited = shell.run("\\e")  # EDITOR is sed s/41/42/
    assert edited.splitlines()[0] == "SELECT 42 AS n;" and edited.splitlines()[3].strip() == "42"
    unfinished = tmp_path / "unfinished.sql"
    unfinished.write_text("SELECT 41 AS m\n")
    shell.child.send(f"\\e {unfinished}\r")  # not complete: it waits at the prompt
    shell.expect(r"SELECT 42 AS m")
    assert shell.run(";").splitlines()[2].strip() == "42"
    shell.child.send("SELECT 41 AS typed;")
    shell.expect("typed;")
    shell.child.send("\x18\x05")  # Ctrl-X Ctrl-E: the entry being typed, in the editor
    assert re.search(r"typed\r?\n-+\r?\n +42\r?\n", shell.expect(r"\(1 row\)").string)
    shell.quit()


def test_help_exit_and_quit_without_a_backslash(iris_duckdb_url, tmp_path):
    for word in ("exit", "quit;", "\\q"):
        shell = Shell(iris_duckdb_url, tmp_path / "history")
        assert "\\x [on|off|auto]" in shell.run("help", until=r"Ctrl-C cancels.*\n")
        shell.child.send(word + "\r")
        shell.child.expect(pexpect.EOF, timeout=GUARD)
        shell.child.close()
        assert shell.child.exitstatus == 0


def test_drop_asks_first_on_a_terminal(shell, unique_name):
    shell.run(f"CREATE TABLE {unique_name} AS SELECT 1 AS x;")
    shell.child.send(f"DROP TABLE {unique_name};\r")
    shell.expect(
        rf"drops or truncates for good:\r\n  DROP TABLE {unique_name}\r\nRun it\? \[y/N\] "
    )
    shell.child.send("n\r")
    shell.expect("not run")
    assert unique_name in shell.run("\\dt", until=r"\(\d+ rows\)")
    shell.child.send(f"DROP TABLE {unique_name};\r")
    shell.expect(r"Run it\? \[y/N\] ")
    shell.child.send("y\r")
    shell.expect("Time:")
    assert unique_name not in shell.run("\\dt", until=r"\(\d+ rows\)")
    shell.run(
        "SELECT * FROM iris_train TO TRAIN xgboost.gbtree WITH objective = 'multi:softprob', "
        "train.num_boost_round = 2 LABEL class INTO doomed;"
    )
    shell.child.send("DROP MODEL doomed;\r")
    shell.expect(r"DROP MODEL doomed\r\nRun it\? \[y/N\] ")
    shell.child.send("\r")  # no answer is no
    shell.expect("not run")
    assert shell.run("\\confirm off", until=r"\n") == "confirmation is off\n"
    assert "Run it?" not in shell.run("DROP MODEL doomed;")
    assert "doomed" not in shell.run("\\models", until=r"\(\d+ rows?\)")
    shell.quit()


def _piped(url: str, script: str, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sqlml", *command, "--datasource", url],
        input=script,
        capture_output=True,
        text=True,
        env={**os.environ, "TERM": "xterm"},
    )


def test_a_script_piped_on_stdin_runs_without_prompts(iris_duckdb_url, tmp_path):
    script = (
        "SELECT count(*) AS n\nFROM iris_test;\n\\format csv\nSELECT 'a;b' AS s;\nhelp\n"
        "DROP TABLE iris_test;\nexit\nSELECT 'after exit';\n"
    )
    done = _piped(iris_duckdb_url, script, "repl")
    assert done.returncode == 0 and done.stderr == "output format is csv\n"  # not in the results
    out = done.stdout
    assert out.startswith("  n\n----\n 30\n(1 row)\n\ns\na;b\n")
    assert "sqlml [" not in out and "terminal" not in out and "Time:" not in out
    assert "after exit" not in out and "Run it?" not in out  # no question in a script
    assert "iris_test" not in _piped(iris_duckdb_url, "\\dt\n", "repl").stdout


def test_a_failing_piped_script_stops_with_status_1(iris_duckdb_url):
    done = _piped(
        iris_duckdb_url, "SELECT 1 AS one;\n\nSELECT *\nFROM nowhere;\nSELECT 2;\n", "repl"
    )
    assert done.returncode == 1
    assert done.stdout == " one\n-----\n   1\n(1 row)\n"
    assert done.stderr.startswith("<stdin>:4:6: error:") and "nowhere" in done.stderr


def test_plain_sqlml_reads_a_piped_script(iris_duckdb_url):
    done = _piped(iris_duckdb_url, "SELECT 40 + 2 AS answer;\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == " answer\n--------\n     42\n(1 row)\n"
