"""The shell runs statements as ``sqlml run`` does: a search gets its trials, Ctrl-C stops a
training with nothing saved, long statements show progress. Driven in a real
pseudo-terminal (pexpect)."""

from __future__ import annotations

import pytest

from sqlml.datasources import connect
from sqlml.repl.session import Session
from sqlml.tables import RUNS
from tests.test_repl import CTRL_C, GUARD, Shell


def test_a_search_typed_in_the_shell_trains_its_trials(shell, unique_name):
    model = f"{unique_name}_searched"
    said = shell.run(
        "SELECT * FROM iris_train TO TRAIN xgboost.gbtree "
        "WITH objective = 'multi:softprob', num_class = 3, max_depth = CHOICE(1, 3), "
        f"search.trials = 2, search.algorithm = grid LABEL class INTO {model};"
    )
    assert "error" not in said.lower(), said
    trials = shell.run(f"SELECT count(*) AS n FROM {model}_trials;", until=r"\(1 row\)")
    assert trials.splitlines()[2].strip() == "2"
    assert model in shell.run("SHOW MODELS;", until=r"\(\d+ rows?\)")
    shell.quit()


def _cancel_training(shell: Shell, statement: str, started: str) -> None:
    """Type ``statement``, wait for ``started`` in its progress (the training under way,
    for hours), press Ctrl-C: the shell says it cancelled."""
    shell.child.send(statement + "\r")
    shell.expect(started)
    shell.child.send(CTRL_C)
    shell.expect(r"cancelled\r\n", timeout=GUARD)


def test_ctrl_c_stops_boosting_and_saves_nothing(progress_shell):
    shell = progress_shell
    _cancel_training(
        shell,
        "SELECT * FROM iris_train TO TRAIN xgboost.gbtree WITH max_depth = 6, "
        "train.num_boost_round = 1000000 LABEL class INTO endless;",
        r"training \(endless\): \d+/1000000 rounds",
    )
    assert "endless" not in shell.run("SHOW MODELS;", until=r"\(\d+ rows?\)")
    assert shell.run("SELECT 1 AS one;").splitlines()[2].strip() == "1"
    shell.quit()


@pytest.mark.keras
def test_ctrl_c_stops_a_keras_training_between_batches(progress_shell, unique_name):
    shell, model = progress_shell, f"{unique_name}_dnn"
    pytest.importorskip("tensorflow")
    shell.run(
        "SELECT * FROM iris_train TO TRAIN DNNClassifier WITH model.n_classes = 3, "
        f"model.hidden_units = [8], train.epoch = 1 LABEL class INTO {model};"
    )
    first = shell.run(f"DESCRIBE MODEL {model};", until=r"\(\d+ rows?\)")
    _cancel_training(
        shell,
        "SELECT * FROM iris_train TO TRAIN DNNClassifier WITH model.n_classes = 3, "
        f"model.hidden_units = [8], train.epoch = 100000, train.batch_size = 1 "
        f"LABEL class INTO {model};",
        rf"training \({model}\): \d+/100000 epochs",
    )
    # The previous version is still the model: nothing of the cancelled training was saved.
    assert shell.run(f"DESCRIBE MODEL {model};", until=r"\(\d+ rows?\)") == first
    shell.quit()


def test_a_shell_entry_writes_no_run_record(tmp_path):
    url = f"duckdb:///{tmp_path}/entries.duckdb"
    shown: list[str] = []
    session = Session(url, "table", shown.append)
    try:
        assert session.run("CREATE TABLE t AS SELECT 1 AS x; SELECT x FROM t;")
    finally:
        session.close()
    assert shown[-2].splitlines()[-1] == "(1 row)"  # then its time
    datasource = connect(url, tmp_path)
    try:
        assert not datasource.table_exists([RUNS])
    finally:
        datasource.close()


def test_an_entry_shows_every_failure_and_what_it_left_out(tmp_path):
    """Each statement of an entry that fails shows its error, each one not run a note, in
    the entry's order; the others' results still show (only the first error used to)."""
    shown: list[str] = []
    warned: list[str] = []
    session = Session(
        f"duckdb:///{tmp_path}/entry.duckdb", "table", shown.append, warn=warned.append
    )
    try:
        assert not session.run(
            "ASSERT 1 = 2 MESSAGE 'first';\n"
            "ASSERT 2 = 3 MESSAGE 'second';\n"
            "CREATE TABLE t AS SELECT * FROM nowhere;\n"
            "SELECT * FROM t;\n"
            "SELECT 1 AS one;"
        )
    finally:
        session.close()
    assert [warning.splitlines()[0] for warning in warned] == [
        "<input>:1:1: error: ASSERT failed: first: 1 = 2 is false",
        "<input>:2:1: error: ASSERT failed: second: 2 = 3 is false",
        "<input>:3:33: error: DuckDB: Catalog Error: Table with name nowhere does not exist!",
        "<input>:4:1: note: not run: it waits for s3-create, which failed",
    ]
    assert [text for text in shown if not text.startswith("Time: ")] == [
        " one\n-----\n   1\n(1 row)\n"
    ]


def test_training_explaining_and_evaluating_show_progress(iris_duckdb_url, tmp_path, unique_name):
    """On a terminal (outside CI), each long statement draws its stages as bars, named for
    the model or table it writes, the training's with its rounds."""
    shell = Shell(iris_duckdb_url, tmp_path / "history", SQLML_PROGRESS="", CI="")
    model = f"{unique_name}_bars"
    try:
        shell.child.send(
            "SELECT * FROM iris_train TO TRAIN xgboost.gbtree "
            "WITH objective = 'multi:softprob', max_depth = 6, train.num_boost_round = 400 "
            f"LABEL class INTO {model};\r"
        )
        shell.expect(rf"training \({model}\)[^\n]*\d+/400 rounds")
        shell.expect(r"(?s)trained .*?Time: ")
        shell.child.send(f"SELECT * FROM iris_test TO EXPLAIN {model} USING TreeExplainer;\r")
        shell.expect(r"explaining[^\n]*30/30 rows")
        shell.expect(r"Time: ")
        shell.child.send(
            f"SELECT * FROM iris_test TO EVALUATE {model} "
            "WITH validation.metrics = 'accuracy,f1' LABEL class INTO evaluated;\r"
        )
        shell.expect(r"scoring \(evaluated\)[^\n]*30/30 rows")
        shell.expect(r"computing metrics \(evaluated\)[^\n]*2/2 metrics")
        shell.expect(r"(?s)evaluated .*?Time: ")
        shell.quit()
    finally:
        if shell.child.isalive():
            shell.child.terminate(force=True)
