"""The interactive shell: entry completeness, completion, history, and whole sessions driven
through a pseudo-terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from pygments.token import Keyword, Name

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import CheckError, DatasourceError
from sqlml.repl.catalog import Catalog
from sqlml.repl.completion import SqlmlCompleter
from sqlml.repl.history import RedactedHistory, history_file
from sqlml.repl.lexer import SqlmlLexer
from sqlml.repl.session import format_error
from sqlml.repl.statements import current_statement, is_complete

# (text typed so far, whether Enter runs it)
COMPLETENESS = [
    ("", True),
    ("   \n", True),
    ("SELECT 1;", True),
    ("SELECT 1;  \n", True),
    ("SELECT 1; -- a comment", True),
    ("SELECT 1; /* a\ncomment */", True),
    ("SELECT 1", False),
    ("SELECT 1 -- ends later;", False),
    ("SELECT 1 /* ; */", False),
    ("SELECT 1 /* never closed;", False),
    ("SELECT ';'", False),
    ("SELECT 'it''s;", False),
    ('SELECT "a;b"', False),
    ('SELECT "a;b";', True),
    ("SELECT 1; SELECT 2", False),
    ("SELECT 1; SELECT 2;", True),
    ("SELECT *\nFROM t\nTO TRAIN xgboost.gbtree\nLABEL y INTO m", False),
    ("SELECT *\nFROM t\nTO TRAIN xgboost.gbtree\nLABEL y INTO m;", True),
    ("\\d", True),
    ("  \\d iris_train", True),
]


@pytest.mark.parametrize(("text", "complete"), COMPLETENESS)
def test_enter_runs_an_entry_only_when_its_statements_are_complete(text, complete):
    assert is_complete(text) is complete


def test_the_current_statement_follows_the_last_top_level_semicolon():
    assert current_statement("SELECT 1; SELECT ';' AS x; SELECT a FR") == " SELECT a FR"
    assert current_statement("SELECT 'a;b' FR") == "SELECT 'a;b' FR"


CATALOG = Catalog(
    tables={
        "iris_train": [("sepal_length", "DOUBLE"), ("petal_width", "DOUBLE"), ("class", "TEXT")],
        "sales": [("amount", "DOUBLE"), ("region", "TEXT")],
    },
    models=["iris_model", "sales_model"],
)


def completions(text: str) -> dict[str, str]:
    """What Tab offers at the end of ``text``: completion -> its one-line description."""
    found = SqlmlCompleter(CATALOG).get_completions(Document(text), CompleteEvent())
    return {c.text: c.display_meta_text for c in found}


def test_attribute_names_complete_after_with_with_their_docs():
    found = completions("SELECT * FROM iris_train TO TRAIN DNNClassifier WITH model.n_cl")
    assert list(found) == ["model.n_classes"]
    assert found["model.n_classes"].startswith("number of classes")
    after_comma = completions(
        "SELECT * FROM iris_train\nTO TRAIN DNNClassifier WITH model.n_classes = 3, train.ep"
    )
    assert list(after_comma)[:1] == ["train.epoch"]  # then fuzzy matches (train.max_steps...)
    # xgboost.gbtree has no model.* attributes: its own names come instead
    assert "num_class" in completions("SELECT * FROM t TO TRAIN xgboost.gbtree WITH ")
    assert "model.n_classes" not in completions("SELECT * FROM t TO TRAIN xgboost.gbtree WITH ")
    assert list(completions("SELECT * FROM t TO PREDICT r.y WITH predict.b")) == [
        "predict.batch_size"
    ]


def test_estimators_values_models_and_explainers_complete_in_their_clauses():
    estimators = completions("SELECT * FROM t TO TRAIN DNNC")
    assert list(estimators)[:1] == ["DNNClassifier"]  # then DNNLinearCombinedClassifier...
    assert "neural network" in estimators["DNNClassifier"]
    assert set(completions("SELECT * FROM t TO TRAIN xgboost.gbtree WITH objective = multi")) == {
        "multi:softmax",
        "multi:softprob",
    }
    assert set(completions("SELECT * FROM t TO PREDICT r.y USING ")) == {
        "iris_model",
        "sales_model",
    }
    assert set(completions("SELECT * FROM t TO TRAIN DNNClassifier LABEL y INTO iris")) == {
        "iris_model"
    }
    assert set(completions("SELECT * FROM t TO EVALUATE iris_model LABEL y INTO s")) == {"sales"}
    assert set(completions("SELECT * FROM t TO EXPLAIN iris_model USING ")) == {
        "TreeExplainer",
        "PermutationExplainer",
    }
    for direction in ("MAXIMIZE", "MINIMIZE"):  # a kind of two clause words
        optimize = f"SELECT * FROM t TO {direction} SUM(x * c) WITH var_type = 'Reals' "
        assert set(completions(optimize + "USING ")) == {"highs", "glpk"}
        assert set(completions(f"SELECT * FROM t TO {direction} SUM(x) WITH var")) == {
            "variables",
            "var_type",
        }
    assert set(completions("DESCRIBE MODEL ")) == {"iris_model", "sales_model"}
    assert set(completions("SELECT 1; DROP MODEL IF EXISTS s")) == {"sales_model"}


def test_tables_columns_and_keywords_complete_from_the_catalog():
    assert completions("SELECT * FROM ir") == {"iris_train": "table"}
    assert list(completions("SELECT pet").items())[:1] == [("petal_width", "column of iris_train")]
    # only the columns of the tables the statement names
    assert "amount" not in completions("SELECT  FROM iris_train WHERE ")
    assert completions("SELECT iris_train.cl") == {"iris_train.class": "column"}
    assert completions("SELECT * FROM iris_train TO TRAIN DNNClassifier LABEL cl") == {
        "class": "column of iris_train"
    }
    assert "SELECT" in completions("SEL") and "select" in completions("sel")
    assert completions("SELECT 'FROM ir") == {}  # inside a string: nothing matches the word


def test_backslash_commands_complete_with_their_help():
    assert completions("\\mo") == {"\\models": "list the stored models (SHOW MODELS)"}
    assert set(completions("\\d s")) == {"sales"}


def test_the_lexer_knows_sqlmls_keywords_estimators_and_attributes():
    tokens = [
        (kind, value)
        for kind, value in SqlmlLexer().get_tokens(
            "SELECT * FROM t TO TRAIN xgboost.gbtree WITH model.n_classes = 3 LABEL y INTO m;"
        )
        if value.strip()
    ]
    assert (Keyword, "TRAIN") in tokens and (Keyword, "LABEL") in tokens
    assert (Name.Class, "xgboost.gbtree") in tokens
    assert (Name.Attribute, "model.n_classes") in tokens


def test_the_catalog_reads_tables_columns_and_models(iris_url):
    ds = connect(iris_url)
    try:
        catalog = Catalog()
        catalog.refresh(ds)
        assert {"iris_train", "iris_test"} <= set(catalog.tables)
        names = [column for column, _ in catalog.tables["iris_train"]]
        assert names[:2] == ["id", "sepal_length"] and names[-1] == "class" and len(names) == 6
    finally:
        ds.close()


def test_history_lives_where_sqlml_history_says_and_hides_passwords(tmp_path, monkeypatch):
    monkeypatch.setenv("SQLML_HISTORY", str(tmp_path / "h"))
    assert history_file() == tmp_path / "h"
    monkeypatch.delenv("SQLML_HISTORY")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert history_file() == tmp_path / "sqlml" / "history"
    history = RedactedHistory(str(tmp_path / "h"))
    history.store_string("\\c mysql://root:s3cret@127.0.0.1:3306/test")
    stored = (tmp_path / "h").read_text()
    assert "s3cret" not in stored and "mysql://root:***@127.0.0.1:3306/test" in stored
    history.store_string("\\c mysql://bob:p@ss@db.example/test")  # an @ in the password
    history.store_string("SELECT * FROM read_csv('http://files:8080/a.csv');")
    stored = (tmp_path / "h").read_text()
    assert "ss@" not in stored and "mysql://bob:***@db.example/test" in stored
    assert "read_csv('http://files:8080/a.csv')" in stored  # no password: kept as typed


def test_errors_point_at_their_line_of_the_entry():
    error = CheckError("unknown estimator Foo", line=2, column=10, hint="try DNNClassifier")
    assert format_error(error, "SELECT *\nFROM t TO TRAIN Foo\nINTO m;").splitlines() == [
        "<input>:2:10: error: unknown estimator Foo",
        "  hint: try DNNClassifier",
        "2 | FROM t TO TRAIN Foo",
        "  |          ^",
    ]
    # a database's error points at its statement, without a caret under the statement's start
    assert format_error(DatasourceError("no table t", line=1, column=1), "SELECT * FROM t;") == (
        "<input>:1:1: error: no table t\n"
    )


def test_a_missing_repl_extra_is_a_clear_error(monkeypatch, capsys):
    for name in [m for m in sys.modules if m.startswith(("prompt_toolkit", "sqlml.repl."))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "prompt_toolkit", None)
    assert main(["repl", "--datasource", "duckdb:///:memory:"]) == 1
    err = capsys.readouterr().err
    assert "the interactive shell needs prompt_toolkit" in err
    assert "pip install 'sqlml[repl]'" in err


def test_importing_the_cli_and_a_select_in_the_shell_stay_light():
    code = (
        "import sys\n"
        "import sqlml.cli\n"
        "print(sorted(m for m in ('prompt_toolkit', 'pygments') if m in sys.modules))\n"
        "from sqlml.repl.session import Session\n"
        "shown = []\n"
        "Session('duckdb:///:memory:', 'table', shown.append).run('SELECT 1 AS one;')\n"
        "print(shown[0].splitlines()[-1])\n"
        "heavy = ('tensorflow', 'keras', 'xgboost', 'sklearn', 'skops', 'pandas', 'matplotlib',"
        " 'IPython')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "(1 row)", "[]"]


def test_a_session_opens_at_once_unless_told_to_open_later(iris_duckdb_url):
    from sqlml.repl.session import Session

    refused = "mysql://root@127.0.0.1:1/test"
    with pytest.raises(DatasourceError, match="unsupported datasource URL"):
        Session("nope://x", "table", print, open_later=True)  # the URL is read at once
    with pytest.raises(DatasourceError, match="cannot connect"):
        Session(refused, "table", print)
    later = Session(refused, "table", print, open_later=True)
    assert later.database == "test" and str(later.url) == refused
    later.open()
    with pytest.raises(DatasourceError, match="cannot connect"):
        later.wait_open()
    later.close()
    shown: list[str] = []
    session = Session(iris_duckdb_url, "table", shown.append, open_later=True)
    session.open()
    assert session.run("SELECT count(*) AS n FROM iris_test;")  # queued behind the open
    assert shown[0].splitlines()[-2:] == [" 30", "(1 row)"]
    assert "iris_train" in session.catalog.tables
    session.close()


# --- whole sessions through a pseudo-terminal ------------------------------------------------

_ESCAPES = re.compile(r"\x1b(?:\[[0-9;?]*[A-Za-z]|[()][A-Z0-9]|[=>])")
UP, CTRL_C, CTRL_D, CTRL_R, TAB = "\x1b[A", "\x03", "\x04", "\x12", "\t"
PROMPT = r"sqlml \[[^\]\n]*\]>"  # the database's name in brackets
GUARD = 300  # seconds the shell may take to show what is expected: a deadlock guard


class Shell:
    """``sqlml repl`` in a pseudo-terminal of 60x200, its output read with escapes removed."""

    def __init__(self, url: str, history: Path, command: str = "repl", **env: str) -> None:
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "sqlml", *command.split(), "--datasource", url],
            env={
                **os.environ,
                "TERM": "xterm",
                "PROMPT_TOOLKIT_NO_CPR": "1",
                "NO_COLOR": "1",
                "PAGER": "cat",
                "SQLML_HISTORY": str(history),
                "SQLMLRC": str(history.with_name("no-sqlmlrc")),  # none but the test's own
                "SQLML_PROGRESS": "0",  # no bars between the outputs the tests read
                **env,
            },
            dimensions=(60, 200),
            encoding="utf-8",
        )
        self.output = ""  # read but not yet matched
        self.prompt = self.expect(PROMPT).group()  # the first

    def expect(self, pattern: str, timeout: float = GUARD) -> re.Match[str]:
        """Wait until the output matches ``pattern``; consume it up to the match's end."""
        deadline = time.monotonic() + timeout
        while (found := re.search(pattern, self.output)) is None:
            if time.monotonic() > deadline or not self.child.isalive():
                raise AssertionError(f"{pattern!r} never came; the output was {self.output!r}")
            try:
                self.output += _ESCAPES.sub("", self.child.read_nonblocking(65536, timeout=0.2))
            except pexpect.TIMEOUT:
                pass
            except pexpect.EOF:
                break
        if found is None:
            raise AssertionError(f"{pattern!r} never came; the output was {self.output!r}")
        self.output = self.output[found.end() :]
        return found

    def run(self, text: str, until: str = r"Time: [^\n]*\n") -> str:
        """Type ``text`` and Enter; the output after the echo of ``text``, up to ``until``."""
        self.output = ""
        self.child.send(text + "\r")
        echo_end = re.escape(text[-1:])
        # Completing while typing, prompt_toolkit keeps lines free below the entry for its
        # menu (blank lines here) and draws the entry again once Enter accepts it: the output
        # follows that drawing.
        redrawn = rf"(?:[\r\n \x08]*(?:{PROMPT}|\.\.\.>)[^\n]*\n)+"
        pattern = rf"(?s){echo_end}\r*\n(?:{redrawn})?(?!\r*\n)(.*?{until})"
        return self.expect(pattern).group(1).replace("\r", "")

    def quit(self) -> None:
        self.child.send(CTRL_D)
        self.child.expect(pexpect.EOF, timeout=GUARD)
        self.child.close()
        assert self.child.exitstatus == 0


def test_a_multi_line_training_then_a_select_of_its_predictions(shell, unique_name):
    model, table = f"{unique_name}_model", f"{unique_name}_pred"
    shell.child.send("SELECT * FROM iris_train\r")
    shell.expect(r"\.\.\.>")  # the continuation prompt: the statement is not complete yet
    shell.child.send("TO TRAIN xgboost.gbtree\rWITH objective = multi:softprob, num_class = 3\r")
    shell.child.send(f"LABEL class\rINTO {model};\r")
    trained = shell.expect(r"trained .*\n").group()
    assert f"trained {model} (xgboost.gbtree) on 96 rows" in trained
    shell.expect(r"Time: [\d.]+ m?s")
    shell.run(f"SELECT * FROM iris_test TO PREDICT {table}.class USING {model};")
    result = shell.run(
        f"SELECT count(*) AS n, sum(CASE WHEN p.class = t.class THEN 1 ELSE 0 END) AS right_ones "
        f"FROM {table} AS p JOIN iris_test AS t USING (id);"
    )
    n, right = (int(v) for v in result.splitlines()[2].split("|"))
    assert n == 30 and right >= 27
    assert model in shell.run("\\models", until=r"\(\d+ rows?\)")
    shell.quit()


def test_plain_sqlml_on_a_terminal_is_the_shell(iris_duckdb_url, tmp_path):
    shell = Shell(iris_duckdb_url, tmp_path / "history", command="")
    assert shell.run("SELECT count(*) AS n FROM iris_test;").splitlines()[2].strip() == "30"
    shell.quit()


def test_the_first_prompt_comes_before_the_datasource_is_open(iris_duckdb_url, tmp_path):
    """The shell opens the datasource once its first prompt is drawn: the prompt (naming the
    database) comes while another process holds the DuckDB file, which the open waits for
    (up to LOCK_WAIT, here made long enough for the test's own pace), and a statement typed
    at once runs when the file is free."""
    path = iris_duckdb_url.removeprefix("duckdb:///")
    (tmp_path / "sitecustomize.py").write_text(
        f"from sqlml.datasources.duckdb import source as duckdb\nduckdb.LOCK_WAIT = {GUARD}\n"
    )
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({path!r}); print('held', flush=True); "
            "sys.stdin.readline(); c.close()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        python_path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
        shell = Shell(iris_duckdb_url, tmp_path / "history", PYTHONPATH=python_path)  # 1st prompt
        assert holder.poll() is None  # the file is still held: the prompt did not wait for it
        assert shell.prompt == f"sqlml [{Path(path).stem}]>"
        shell.child.send("SELECT count(*) AS n FROM iris_test;\r")
    finally:
        holder.communicate("\n", timeout=GUARD)  # frees the file
    assert shell.expect(r"\n *(\d+)\r?\n\(1 row\)").group(1) == "30"
    shell.quit()


def test_an_open_that_fails_after_the_first_prompt_ends_the_shell(tmp_path):
    shell = Shell("mysql://someone:s3cret@127.0.0.1:1/nowhere", tmp_path / "history")
    assert shell.prompt == "sqlml [nowhere]>"  # the database's name needs no connection
    shell.child.expect(pexpect.EOF, timeout=GUARD)  # not a prompt that cannot work
    shell.child.close()
    told = shell.output + _ESCAPES.sub("", shell.child.before)
    assert "sqlml: error: cannot connect to mysql://someone:***@127.0.0.1:1/nowhere" in told
    assert "hint: check that the server is running" in told
    assert "s3cret" not in told
    assert shell.child.exitstatus == 1


def test_results_are_those_of_sqlml_dash_e(shell, iris_duckdb_url):
    query = (
        "SELECT class, count(*) AS n, avg(petal_width) AS w FROM iris_train GROUP BY 1 ORDER BY 1;"
    )
    shown = shell.run(query)
    shell.quit()
    done = subprocess.run(
        [sys.executable, "-m", "sqlml", "-e", query, "--datasource", iris_duckdb_url],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert shown.startswith(done.stdout) and done.stdout.endswith("(3 rows)\n")


def test_tab_completes_an_attribute_name(shell):
    shell.child.send("SELECT * FROM iris_train TO TRAIN DNNClassifier WITH model.n_cl")
    shell.expect(r"model\.n_classes\s+number of classes")  # the menu, shown while typing
    shell.child.send(TAB)  # takes its only entry
    # The statement as completed reaches the checker, which names the attribute.
    error = shell.run(" = 1 LABEL class INTO m;", until=r"\^")
    assert "attribute model.n_classes must be >= 2 (got 1)" in error
    assert "1 | SELECT * FROM iris_train TO TRAIN DNNClassifier WITH model.n_classes = 1" in error
    shell.quit()


def test_history_is_recalled_after_a_restart(iris_duckdb_url, tmp_path):
    first = Shell(iris_duckdb_url, tmp_path / "history")
    first.run("SELECT 40 + 2 AS answer;")
    first.run("SELECT 'other' AS entry;")
    first.quit()
    again = Shell(iris_duckdb_url, tmp_path / "history")
    again.child.send(UP)
    again.expect("SELECT 'other' AS entry;")
    again.child.send(UP)  # (the terminal gets only what changes on the screen)
    again.expect("40 \\+ 2 AS answer")
    assert again.run("").splitlines()[2].strip() == "42"
    again.child.send(CTRL_R + "'oth")
    again.expect(r"reverse-i-search.*'oth.*SELECT 'other' AS entry;")
    again.child.send("\r")  # accept the search's result
    assert again.run("").splitlines()[2].strip() == "other"
    again.quit()


def test_ctrl_c_cancels_a_running_statement_and_clears_the_line(shell):
    shell.child.send(
        "CREATE TABLE first_one AS SELECT 1 AS one; "
        "SELECT sum(i * i % 13) AS s FROM first_one, range(10000000000000) t(i);\r"
    )
    shell.expect(r"Time: ")  # the first statement ended; the second reads its table
    shell.child.send(CTRL_C)
    # The query would run for hours: the prompt returns once DuckDB has stopped it.
    shell.expect(r"cancelled\r\n", timeout=GUARD)
    assert shell.run("SELECT 1 AS one;").splitlines()[2].strip() == "1"
    shell.child.send("SELECT 'half typed")
    shell.expect("half typed")
    shell.child.send(CTRL_C)  # at the prompt: the line is dropped
    assert shell.run("SELECT 2 AS two;").splitlines()[2].strip() == "2"
    shell.quit()


def test_ctrl_c_stops_a_training_which_saves_nothing(progress_shell):
    shell = progress_shell
    shell.child.send(
        "SELECT * FROM iris_train TO TRAIN xgboost.gbtree WITH max_depth = 6, "
        "train.num_boost_round = 1000000 LABEL class INTO endless;\r"
    )
    shell.expect(r"training \(endless\): \d+/1000000 rounds")  # the rounds, for many minutes
    shell.child.send(CTRL_C)
    shell.expect(r"cancelled\r\n", timeout=GUARD)
    assert "endless" not in shell.run("SHOW MODELS;", until=r"\(\d+ rows?\)")
    shell.quit()


def test_meta_commands(shell, tmp_path):
    tables = shell.run("\\d", until=r"\(\d+ rows\)")
    assert re.search(r"iris_test\s+\|\s+6", tables) and re.search(r"iris_train\s+\|\s+6", tables)
    described = shell.run("\\d iris_train", until=r"\(6 rows\)")
    assert re.search(r"petal_width\s+\|\s+DOUBLE", described)
    assert "no table nope" in shell.run("\\d nope", until=r"hint: .*\n")
    assert "unknown command \\nope: type \\? for the list" in shell.run("\\nope", until=r"\n")
    assert "\\connect URL" in shell.run("\\?", until=r"Ctrl-C cancels.*\n")
    assert shell.run("\\timing", until=r"\n") == "timing is off\n"
    assert "Time:" not in shell.run("SELECT 1 AS one;", until=r"\(1 row\)")
    assert shell.run("\\timing on", until=r"\n") == "timing is on\n"
    refused = shell.run("\\c mysql://someone:s3cret@127.0.0.1:1/nowhere", until=r"hint: .*\n")
    assert "cannot connect to mysql://someone:***@127.0.0.1:1/nowhere" in refused
    assert "s3cret" not in refused.replace("\\c mysql://someone:s3cret", "")
    other = tmp_path / "other.duckdb"
    assert shell.run(f"\\c duckdb:///{other}", until=r"\n") == f"connected to duckdb:///{other}\n"
    shell.run("CREATE TABLE only_here AS SELECT 7 AS seven;")
    assert "only_here" in shell.run("\\d", until=r"\(1 row\)")
    shell.child.send("SELECT * FROM only_h")  # the catalog was read again after DDL:
    shell.expect("only_here")  # the menu offers the new table as it is typed
    shell.child.send(TAB)
    shell.expect("only_here")
    assert shell.run(";").splitlines()[2].strip() == "7"
    shell.child.send("\\q\r")
    shell.child.expect(pexpect.EOF, timeout=GUARD)
    assert "s3cret" not in (tmp_path / "history").read_text()


def test_errors_keep_the_shell_alive(shell):
    parse_error = shell.run("SELECT *\nFROM iris_train TO TRAIN;", until=r"\^.*\n")
    assert "<input>:2:" in parse_error and "error:" in parse_error
    assert "2 | FROM iris_train TO TRAIN;" in parse_error
    missing = shell.run("SELECT * FROM no_such_table;", until=r"\n(?=sqlml \[)")
    assert "<input>:1:15: error:" in missing and "no_such_table" in missing  # at the name
    assert shell.run("SELECT 1 AS one;").splitlines()[2].strip() == "1"
    shell.quit()


def test_a_bug_is_one_paragraph_and_keeps_the_shell(iris_duckdb_url, tmp_path):
    """A bug in sqlml (planted: an AttributeError for entries that say boom) is one
    paragraph, its traceback kept in a file; the next entry runs."""
    (tmp_path / "plant").mkdir()
    (tmp_path / "plant" / "sitecustomize.py").write_text(
        "import sqlml.repl.shell as shell\n"
        "def broken(text, session, original=shell.run_entry):\n"
        "    if 'boom' in text:\n"
        "        raise AttributeError('planted')\n"
        "    return original(text, session)\n"
        "shell.run_entry = broken\n"
    )
    cache = tmp_path / "cache"
    shell = Shell(
        iris_duckdb_url, tmp_path / "history", PYTHONPATH=str(tmp_path / "plant"),
        SQLML_CACHE_DIR=str(cache),
    )  # fmt: skip
    said = shell.run("SELECT 'boom';", until=r"traceback kept in \S+\r?\n")
    assert said.startswith("sqlml: error: internal error in the shell: AttributeError: planted\n")
    assert "Traceback" not in said
    assert (
        shell.run("SELECT 40 + 2 AS answer;", until=r"\(1 row\)").splitlines()[-2].strip() == "42"
    )
    shell.quit()
    (kept,) = (cache / "errors").iterdir()
    assert "AttributeError: planted" in kept.read_text()


def test_long_results_go_through_the_pager(iris_duckdb_url, tmp_path):
    shell = Shell(iris_duckdb_url, tmp_path / "history", PAGER="sed s/^/paged:/")
    paged = shell.run("SELECT id FROM iris_train ORDER BY id;", until=r"paged:\(120 rows\)")
    assert paged.splitlines()[:3] == ["paged:  id", "paged:-----", "paged:   1"]
    assert "paged:" not in shell.run("SELECT 1 AS one;")  # short results print as they are
    shell.quit()


def test_summaries_and_errors_are_said_and_tables_shown(iris_duckdb_url):
    """The shell pages what ``show`` gets (tables) and prints what ``say`` gets: a long
    training summary must never wait in a pager."""
    from sqlml.repl.session import Session

    shown: list[str] = []
    said: list[str] = []
    session = Session(iris_duckdb_url, "table", shown.append, say=said.append)
    try:
        session.run(
            "SELECT * FROM iris_train TO TRAIN xgboost.gbtree WITH objective = 'multi:softprob' "
            "LABEL class INTO m; SELECT count(*) AS n FROM iris_train; SELECT * FROM nowhere;"
        )
    finally:
        session.close()
    assert said[0].startswith("trained m (xgboost.gbtree) on 96 rows")
    assert said[1].startswith("Time: ") and said[2].startswith("Time: ")
    assert "nowhere" in said[3] and "error" in said[3]
    assert len(said) == 4
    assert len(shown) == 1 and shown[0].splitlines()[-2:] == [" 120", "(1 row)"]
