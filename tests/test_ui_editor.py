"""sqlml ui's editor (Starlette's TestClient): statements run and show their rows, errors show
their line and column as ``sqlml check`` reports them, a program that fails a check runs
nothing, completion offers tables and columns, a run can be cancelled, POSTs from another site
are refused and the datasource's password appears in no response."""

from __future__ import annotations

import html
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import import_or_skip, load_iris

from sqlml.checking import check_program
from sqlml.datasources import connect

import_or_skip("starlette")  # the ui extra
from starlette.testclient import TestClient  # noqa: E402

from sqlml.datasources.redaction import scrubber  # noqa: E402
from sqlml.ui.server import Settings, create_app  # noqa: E402

ADDRESS = "http://127.0.0.1:8765"
MODEL = "editor_model"
TRAIN = f"""\
SELECT * FROM iris_train TO TRAIN xgboost.gbtree
WITH objective = 'multi:softprob', train.num_boost_round = 2
LABEL class INTO {MODEL};"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("ui-editor")
    ds = connect(f"duckdb:///{made / 'editor.duckdb'}")
    load_iris(ds)
    ds.close()
    return made


@pytest.fixture(scope="module")
def client(folder: Path) -> Iterator[TestClient]:
    settings = Settings(f"duckdb:///{folder / 'editor.duckdb'}", folder / "runs", folder)
    with TestClient(create_app(settings), base_url=ADDRESS) as made:
        yield made


def run(client: TestClient, sql: str) -> dict:
    answer = client.post("/editor/run", json={"sql": sql})
    assert answer.status_code == 200, answer.text
    return answer.json()


def text_of(fragment: str, element: str) -> str:
    found = re.search(rf"<{element}[^>]*>(.*?)</{element.split()[0]}>", fragment, re.DOTALL)
    assert found is not None, fragment
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def test_the_page_has_the_editor_and_its_script(client):
    page = client.get("/editor").text
    assert '<textarea id="sql"' in page and '<button id="run"' in page
    assert client.get("/static/editor.js").status_code == 200


def test_a_select_shows_its_rows_and_their_count(client):
    answer = run(client, "SELECT id, class FROM iris_test WHERE id <= 10 ORDER BY id;")
    assert answer["ok"]
    rows = re.findall(r"<tr><td>(\d+)</td><td>([^<]*)</td></tr>", answer["html"])
    assert rows == [("5", "setosa"), ("10", "setosa")]
    assert '<table class="rows" data-rows="2">' in answer["html"]
    assert "2 rows" in answer["html"]


def test_a_long_result_shows_its_first_rows_and_its_count(client):
    answer = run(client, "SELECT * FROM range(1200) AS t(i);")
    assert len(re.findall(r"<tr><td>", answer["html"])) == 500
    assert "1200 rows, the first 500 shown" in answer["html"]


def test_a_plain_form_post_answers_the_whole_page_with_the_result(client):
    page = client.post("/editor/run", data={"sql": "SELECT 41 + 1 AS answer;"})
    assert page.status_code == 200
    assert '<textarea id="sql"' in page.text and "SELECT 41 + 1 AS answer;" in page.text
    assert "<td>42</td>" in page.text


def test_a_syntax_error_shows_its_line_column_and_caret(client):
    sql = "SELECT * FROM iris_train\nTO TRAIN xgboost.gbtree WITH eta = = 1\nLABEL class INTO m;"
    answer = run(client, sql)
    assert not answer["ok"]
    error = text_of(answer["html"], 'p id="error"')
    (expected,) = check_program(sql, "duckdb")
    assert f"line {expected.line}, column {expected.column}: {expected.message}" in error
    assert expected.line == 2
    context = text_of(answer["html"], 'pre id="error-context"')
    assert expected.render("<editor>") in context
    caret = " " * (expected.column - 1) + "^"
    assert f"2 | TO TRAIN xgboost.gbtree WITH eta = = 1\n  | {caret}" in context


def test_a_program_that_fails_a_check_runs_nothing_and_says_what_check_says(client, folder):
    sql = (
        "CREATE TABLE made_by_editor AS SELECT 1 AS x;\n"
        "SELECT * FROM iris_train TO TRAIN xgboost.gbtree LABEL no_such_column INTO m;"
    )
    answer = run(client, sql)
    assert not answer["ok"]
    ds = connect(f"duckdb:///{folder / 'editor.duckdb'}")
    try:
        expected = check_program(sql, ds.dialect, ds)
        assert not ds.table_exists(["made_by_editor"])
    finally:
        ds.close()
    assert [e.message for e in expected] == [
        "column no_such_column is not in the result of the SELECT"
    ]
    context = text_of(answer["html"], 'pre id="error-context"')
    assert expected[0].render("<editor>") in context
    assert f"line {expected[0].line}, column {expected[0].column}" in answer["html"]


def test_every_failure_of_a_run_shows_with_the_results_of_the_others(client):
    """Each statement that fails shows its error, each it left out a note, in order (only
    the first failure used to show); the statements that succeeded show their rows."""
    answer = run(
        client,
        "ASSERT 1 = 2 MESSAGE 'first';\n"
        "ASSERT 2 = 3 MESSAGE 'second';\n"
        "CREATE TABLE editor_t AS SELECT CAST(class AS INTEGER) AS v FROM iris_train;\n"
        "SELECT * FROM editor_t;\n"
        "SELECT 41 + 1 AS answer;",
    )
    assert not answer["ok"]
    context = text_of(answer["html"], 'pre id="error-context"')
    told = [line for line in context.splitlines() if line.startswith("<editor>:")]
    assert told[:2] == [
        "<editor>:1:1: error: ASSERT failed: first: 1 = 2 is false",
        "<editor>:2:1: error: ASSERT failed: second: 2 = 3 is false",
    ]
    assert told[2].startswith("<editor>:3:33: error: ")  # at the CAST DuckDB names
    assert told[3:] == ["<editor>:4:1: note: not run: it waits for s3-create, which failed"]
    assert "<td>42</td>" in answer["html"]


def test_a_training_and_its_evaluation_plot_show_in_the_result_and_the_models_page(client):
    answer = run(
        client,
        f"{TRAIN}\nSELECT * FROM iris_test TO EVALUATE {MODEL} "
        "WITH evaluate.plot = 'editor_evaluation.png' LABEL class INTO editor_evaluation;",
    )
    assert answer["ok"], answer["html"]
    assert f"trained {MODEL}" in answer["html"]
    assert re.search(
        r'<figure class="plot"><img src="data:image/png;base64,iVBORw0KGgo', answer["html"]
    )


def test_the_checks_warnings_show_and_the_program_runs_all_the_same(client):
    answer = run(client, TRAIN)
    assert answer["ok"] and f"trained {MODEL}" in answer["html"]
    warnings = text_of(answer["html"], 'p id="warnings"')
    assert "line 1, column 8: warning: feature id looks like a key (by its name)" in warnings
    assert "hint: leave id out of the SELECT unless it measures something" in warnings


def test_a_query_with_predict_shows_the_rows_to_predict_writes(client):
    """The editor runs standard SQL calling a model it just trained, and completes the
    model's name inside ``PREDICT(``."""
    measures = "sepal_length, sepal_width, petal_length, petal_width"
    trained = run(
        client,
        f"SELECT {measures}, class FROM iris_train TO TRAIN xgboost.gbtree "
        "WITH train.num_boost_round = 3 LABEL class INTO editor_query_model;\n"
        f"SELECT id, {measures} FROM iris_test TO PREDICT editor_scored.class "
        "USING editor_query_model;",
    )
    assert trained["ok"], trained["html"]
    row = r"<tr><td>(\d+)</td><td>([^<]*)</td></tr>"
    written = re.findall(
        row, run(client, "SELECT id, class FROM editor_scored ORDER BY id;")["html"]
    )
    answer = run(
        client, "SELECT id, PREDICT(editor_query_model) AS class FROM iris_test ORDER BY id;"
    )
    assert answer["ok"], answer["html"]
    assert re.findall(row, answer["html"]) == written and len(written) == 30
    assert '<table class="rows" data-rows="30">' in answer["html"]
    likely = run(
        client,
        "SELECT id, PREDICT(editor_query_model) AS class FROM iris_test\n"
        "WHERE PREDICT_PROBA(editor_query_model, 'setosa') > 0.5 ORDER BY id;",
    )
    setosa = [(i, c) for i, c in written if c == "setosa"]
    assert re.findall(row, likely["html"]) == setosa and setosa
    offered = client.get("/editor/complete", params={"text": "SELECT PREDICT(editor_q"}).json()
    assert [c["text"] for c in offered if c["meta"] == "model"] == ["editor_query_model"]


def test_completion_offers_tables_and_their_columns(client):
    tables = client.get("/editor/complete", params={"text": "SELECT * FROM iris_t", "cursor": 20})
    assert {"text": "iris_train", "meta": "table", "replace": 6} in tables.json()
    text = "SELECT * FROM iris_train WHERE sepal_w"
    columns = client.get("/editor/complete", params={"text": text}).json()
    assert columns[0] == {"text": "sepal_width", "meta": "column of iris_train", "replace": 7}


def test_completion_offers_estimators_and_their_attributes(client):
    after_to_train = "SELECT * FROM iris_train TO TRAIN xgboost.gb"
    estimators = [
        c["text"] for c in client.get("/editor/complete", params={"text": after_to_train}).json()
    ]
    assert "xgboost.gbtree" in estimators and "xgboost.gblinear" in estimators
    after_with = "SELECT * FROM iris_train TO TRAIN xgboost.gbtree WITH train.num_b"
    attributes = client.get("/editor/complete", params={"text": after_with}).json()
    assert attributes[0]["text"] == "train.num_boost_round"


def test_completion_sees_a_table_the_editor_just_made(client):
    run(client, "CREATE TABLE fresh_table AS SELECT 1 AS fresh_column;")
    found = client.get("/editor/complete", params={"text": "SELECT fresh_c FROM fresh_table"})
    assert found.status_code == 200
    tables = client.get("/editor/complete", params={"text": "SELECT * FROM fresh_t"}).json()
    assert [c["text"] for c in tables] == ["fresh_table"]


def test_a_post_from_another_site_is_refused(client, folder):
    answer = client.post(
        "/editor/run",
        json={"sql": "CREATE TABLE forged AS SELECT 1 AS x;"},
        headers={"Origin": "http://attacker.example"},
    )
    assert answer.status_code == 403
    ds = connect(f"duckdb:///{folder / 'editor.duckdb'}")
    try:
        assert not ds.table_exists(["forged"])
    finally:
        ds.close()
    same = client.post("/editor/run", json={"sql": "SELECT 1;"}, headers={"Origin": ADDRESS})
    assert same.status_code == 200


def test_a_long_run_is_cancelled_and_a_second_run_meanwhile_is_refused(client, monkeypatch):
    from sqlml.backends.local import interactive

    started = threading.Event()

    def run_statements(*args: object, **options: object) -> object:
        started.set()  # checked; its statements start
        return original(*args, **options)

    original = interactive.run_statements
    monkeypatch.setattr(interactive, "run_statements", run_statements)
    answers: list[dict] = []
    slow = "SELECT SUM(a.range * b.range) FROM range(100000) AS a, range(1000000) AS b;"
    running = threading.Thread(target=lambda: answers.append(run(client, slow)))
    running.start()
    assert started.wait(300), "the long run never started"
    busy = client.post("/editor/run", json={"sql": "SELECT 1;"})
    assert busy.status_code == 409, busy.text
    assert busy.json()["error"] == "another statement is running: wait for it, or cancel it"
    assert client.post("/editor/cancel").json() == {"cancelled": True}
    running.join(300)
    assert not running.is_alive(), "the cancelled run did not stop"
    assert '<p id="cancelled"' in answers[0]["html"]
    assert client.post("/editor/cancel").json() == {"cancelled": False}  # no run going on
    assert run(client, "SELECT 2 AS after_cancel;")["ok"]


def test_a_cancel_while_the_program_is_checked_cancels_its_run(client, monkeypatch):
    """The Cancel button pressed before the statements start (the program being checked)
    is kept: the run is cancelled as its statements start, and the table is not made."""
    from sqlml.ui import editor_runner

    pressed: list[dict] = []

    def check_program(*args: object) -> object:
        pressed.append(client.post("/editor/cancel").json())
        return original(*args)

    original = editor_runner.check_program
    monkeypatch.setattr(editor_runner, "check_program", check_program)
    answer = run(client, "CREATE TABLE never_made AS SELECT 1 AS x;")
    assert pressed == [{"cancelled": True}]
    assert '<p id="cancelled"' in answer["html"]
    monkeypatch.undo()
    found = run(
        client,
        "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_name = 'never_made';",
    )
    assert re.findall(r"<td>(\d+)</td>", found["html"]) == ["0"]


def test_the_datasource_password_is_in_no_response(tmp_path):
    password = "s3cret-Passw0rd"
    url = f"postgresql://someone:{password}@127.0.0.1:9/nowhere"
    client = TestClient(create_app(Settings(url, tmp_path / "runs", tmp_path)), base_url=ADDRESS)
    answer = client.post("/editor/run", json={"sql": "SELECT 1;"})
    assert answer.status_code == 200 and not answer.json()["ok"]
    assert password not in answer.text and "someone:***@127.0.0.1" in answer.text
    assert password not in client.get("/editor").text


def test_the_scrubber_removes_the_url_and_the_password_from_a_drivers_message():
    url = "mysql://root:p%40ss-word@db.example:3306/prod"
    scrub = scrubber(url)
    message = f"cannot connect to {url}: access denied for root using password p@ss-word"
    cleaned = scrub(message)
    assert "p@ss-word" not in cleaned and "p%40ss-word" not in cleaned
    assert "mysql://root:***@db.example:3306/prod" in cleaned


def test_completion_without_prompt_toolkit_answers_none_and_says_why(client, monkeypatch):
    """The shell's completer needs prompt_toolkit (the repl extra): without it, no
    completions, and the header says what is missing."""
    monkeypatch.delitem(sys.modules, "sqlml.repl.completion", raising=False)
    loaded = [name for name in sys.modules if name.split(".")[0] == "prompt_toolkit"]
    for name in {*loaded, "prompt_toolkit"}:
        monkeypatch.setitem(sys.modules, name, None)
    answer = client.get("/editor/complete", params={"text": "SELECT * FROM iris_t"})
    assert answer.status_code == 200 and answer.json() == []
    assert answer.headers["x-sqlml-note"] == "completion needs prompt_toolkit"
