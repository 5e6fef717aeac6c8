"""sqlml ui in a real browser (Debian's headless Chromium through Selenium): a run with a
failed step is found, its DAG shows the failed node, its log and error open on a click, the
page resumes it and the resumed run succeeds; a running run is followed and stopped; a
model's page shows its metrics and a plot; the editor runs a statement and shows its rows,
and a syntax error with its position, and says a database another process holds is busy,
running the statement once it is free; another site's forms change nothing.

Without Chromium the tests are skipped, and fail in CI (CI=true), where .ci/run installs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import duckdb_held, import_or_skip
from ui_browser import (
    FAILING_STEP_LINE,
    MISSING_TABLE,
    MODEL,
    BrowserMissing,
    Demo,
    chrome,
    make_demo,
    run_id,
    serving,
)

from sqlml.backends.local.run_file import read_run_file

import_or_skip("starlette")  # the ui extra
import_or_skip("selenium")  # the test extra
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support import expected_conditions as seen  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

WAIT = 300  # seconds a page has to show something: a deadlock guard (each wait ends as it shows)
RUN_WAIT = 300  # seconds a run started from the page has to start and to end: a deadlock guard
DONE = {"succeeded", "cached", "skipped"}
TOKEN = "the-browser-tests-token"
SYNTAX_ERROR_LINE = "FROM iris_train GROUP BY class ORDER BY n DESC LIMT 2;"  # LIMT: column 48


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """One Chromium session for the module (its start takes seconds)."""
    try:
        driver = chrome()
    except BrowserMissing as missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests need Chromium in CI: {missing}")
        pytest.skip(str(missing))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Demo, str]:
    """The demo folder and the id of its failed run."""
    demo = make_demo(tmp_path_factory.mktemp("ui-demo"))
    return demo, demo.run_program()


@pytest.fixture(scope="module")
def ui(demo: tuple[Demo, str], browser: WebDriver) -> Iterator[str]:
    """The page, served with a token, which the browser has presented once, as a user opens
    the address sqlml ui prints: from then on its cookie is the browser's."""
    with serving(demo[0].settings(TOKEN)) as address:
        browser.get(f"{address}/runs?token={TOKEN}")
        shown(browser, "table#runs")
        assert browser.current_url == f"{address}/runs", "the token stayed in the address"
        yield address


def wait(browser: WebDriver, seconds: float = WAIT) -> WebDriverWait:
    return WebDriverWait(browser, seconds)


def shown(browser: WebDriver, css: str, seconds: float = WAIT) -> WebElement:
    """The element ``css`` selects, once it is visible."""
    return wait(browser, seconds).until(seen.visibility_of_element_located((By.CSS_SELECTOR, css)))


def node_states(browser: WebDriver) -> dict[str, str]:
    nodes = browser.find_elements(By.CSS_SELECTOR, "svg#dag g.node")
    return {node.get_attribute("data-step"): node.get_attribute("data-state") for node in nodes}


def test_a_failed_run_is_resumed_from_its_page(browser, demo, ui):
    demo, failed = demo
    steps = [step["name"] for step in read_run_file(demo.run_dir / failed)["steps"]]
    failing = steps[2]

    browser.get(f"{ui}/runs")
    row = shown(browser, f'table#runs tr.run[data-run="{failed}"]')
    assert row.get_attribute("data-state") == "failed"
    row.find_element(By.CSS_SELECTOR, f'a[href="/runs/{failed}"]').click()

    shown(browser, "svg#dag g.node")
    assert node_states(browser) == {
        steps[0]: "succeeded",
        steps[1]: "succeeded",
        failing: "failed",
        steps[3]: "omitted",
    }
    drawn = {
        (before, node.get_attribute("data-step"))
        for node in browser.find_elements(By.CSS_SELECTOR, "svg#dag g.node[data-after]")
        for before in node.get_attribute("data-after").split()
    }
    assert drawn == {(steps[0], steps[1]), (steps[1], failing), (failing, steps[3])}
    (edges,) = browser.find_elements(By.CSS_SELECTOR, "svg#dag path.edges")
    assert edges.get_attribute("d").count("C") == 3  # a curve per edge

    browser.find_element(By.CSS_SELECTOR, f'svg#dag g.node[data-step="{failing}"]').click()
    error = shown(browser, "section#step p#step-error")
    wait(browser).until(lambda _: MISSING_TABLE in error.text)
    statement = shown(browser, "section#step pre#step-statement")
    assert f"CROSS JOIN {MISSING_TABLE}" in statement.text
    assert statement.get_attribute("data-line") == str(FAILING_STEP_LINE)
    log = shown(browser, "section#step pre#step-log")
    wait(browser).until(lambda _: MISSING_TABLE in log.text)

    demo.create_missing_table()
    page = browser.current_url
    shown(browser, "button#resume").click()
    wait(browser, RUN_WAIT).until(seen.url_changes(page))  # a new process starts
    resumed = browser.current_url.split("/runs/", 1)[1].strip("/")
    assert resumed != failed and (demo.run_dir / resumed).is_dir(), browser.current_url
    state = shown(browser, "span#run-state")
    wait(browser, RUN_WAIT).until(lambda _: state.text.strip() in ("succeeded", "failed"))
    assert state.text.strip() == "succeeded", browser.find_element(By.TAG_NAME, "main").text
    nodes = node_states(browser)
    assert set(nodes) == set(steps)
    assert set(nodes.values()) <= DONE and nodes[failing] == "succeeded", nodes
    assert read_run_file(demo.run_dir / resumed)["resumed_from"] == failed

    browser.get(f"{ui}/runs")
    row = shown(browser, f'table#runs tr.run[data-run="{resumed}"]')
    assert row.get_attribute("data-state") == "succeeded"


def test_a_models_page_shows_its_metrics_and_a_plot(browser, demo, ui):
    browser.get(f"{ui}/models")
    row = shown(browser, f'table#models tr.model[data-model="{MODEL}"]')
    row.find_element(By.CSS_SELECTOR, f'a[href="/models/{MODEL}"]').click()

    shown(browser, "table#metrics")
    values = {
        row.get_attribute("data-metric"): row.find_element(By.CSS_SELECTOR, "td.value").text
        for row in browser.find_elements(By.CSS_SELECTOR, "table#metrics tr[data-metric]")
    }
    assert values, "the model's page shows no metric"
    for name, value in values.items():
        assert float(value) >= 0, f"{name}: {value!r}"
    assert MODEL in shown(browser, "pre#training-statement").text

    plot = shown(browser, "figure.plot")
    drawn = browser.execute_script(
        "const f = arguments[0], img = f.querySelector('img'), svg = f.querySelector('svg');"
        "if (img) return img.complete && img.naturalWidth > 0;"
        "return !!svg && svg.getBBox().width > 0 && svg.querySelectorAll('*').length > 3;",
        plot,
    )
    assert drawn, plot.get_attribute("outerHTML")[:500]
    assert plot.size["width"] > 100 and plot.size["height"] > 100


def editor_run(browser: WebDriver, ui: str, lines: list[str]) -> None:
    """Type ``lines`` into the editor and press Run."""
    browser.get(f"{ui}/editor")
    text = shown(browser, "textarea#sql")
    text.clear()
    for number, line in enumerate(lines):
        text.send_keys(line)
        if number < len(lines) - 1:
            text.send_keys(Keys.SHIFT, Keys.ENTER)
    assert browser.execute_script("return arguments[0].value", text) == "\n".join(lines)
    browser.find_element(By.CSS_SELECTOR, "button#run").click()


def test_the_editor_runs_a_statement_and_shows_its_rows(browser, demo, ui):
    editor_run(
        browser,
        ui,
        ["SELECT class, count(*) AS n FROM iris_train", "GROUP BY class ORDER BY class;"],
    )
    table = shown(browser, "div#result table")
    header = [cell.text for cell in table.find_elements(By.CSS_SELECTOR, "th")]
    rows = [
        [cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")]
        for row in table.find_elements(By.CSS_SELECTOR, "tr")
    ]
    assert header == ["class", "n"]
    assert [row for row in rows if row] == [
        ["setosa", "40"],
        ["versicolor", "40"],
        ["virginica", "40"],
    ]


def test_the_editor_shows_a_syntax_error_with_its_position(browser, demo, ui):
    editor_run(
        browser,
        ui,
        ["SELECT class, count(*) AS n", "FROM iris_train GROUP BY class ORDER BY n DESC LIMT 2;"],
    )
    error = shown(browser, "p#error.error")
    assert "line 2, column 48" in error.text and "LIMT" in error.text, error.text
    assert not browser.find_elements(By.CSS_SELECTOR, "div#result table")


def test_the_editor_says_the_database_is_busy_and_runs_once_it_is_free(
    browser, demo, ui, monkeypatch
):
    monkeypatch.setattr("sqlml.datasources.duckdb.source.LOCK_WAIT", 0.2)  # the server's wait
    with duckdb_held(demo[0].datasource):
        editor_run(browser, ui, ["SELECT count(*) AS n FROM iris_train;"])
        error = shown(browser, "p#error")
        said = error.text
        assert "another process has it open" in said and "trying again in 5 s" in said, said
    table = shown(browser, "div#result table", seconds=30)  # run again 5 s later, by itself
    assert [cell.text for cell in table.find_elements(By.CSS_SELECTOR, "td")] == ["120"]


@contextmanager
def another_site(page: str) -> Iterator[str]:
    """A web site of another origin (another port) whose one page is ``page``."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    site = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}/"
    finally:
        site.shutdown()
        site.server_close()


def test_a_form_on_another_site_runs_nothing(browser, demo, ui):
    """The browser sends its Origin with another site's form; sqlml ui refuses it."""
    demo, failed = demo
    forms = (
        f'<form id="run" method="post" action="{ui}/editor/run">'
        '<input name="sql" value="CREATE TABLE forged AS SELECT 1 AS x;"></form>'
        f'<form id="resume" method="post" action="{ui}/runs/{failed}/resume"></form>'
    )
    runs = set(demo.run_dir.iterdir())
    with another_site(f"<!doctype html><body>{forms}</body>") as site:
        for form in ("run", "resume"):
            browser.get(site)
            browser.execute_script(f"document.getElementById('{form}').submit()")
            wait(browser).until(seen.url_contains(ui))
            body = shown(browser, "body").text
            assert "another site" in body or "refused" in body, body[:500]
    assert "forged" not in demo.tables()
    assert set(demo.run_dir.iterdir()) == runs


def test_a_running_run_is_stopped_from_its_page(browser, demo, ui):
    """Its page follows it (read from its folder: the run holds the DuckDB file) until Stop
    cancels it. Last in the module: the run holds the demo's database while it goes on."""
    demo, _ = demo
    program = demo.folder / "long.sql"
    program.write_text(
        "CREATE TABLE spun AS SELECT sum(i) AS total FROM range(100000000000) AS t(i);\n"
        "SELECT * FROM spun;\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "sqlml", "run", str(program), "--datasource", demo.datasource],
        cwd=demo.folder, env={**os.environ, **demo.env}, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        run = run_id(process.stderr.readline())
        browser.get(f"{ui}/runs/{run}")
        spinning = shown(browser, 'svg#dag g.node[data-step^="s1-"]')
        wait(browser).until(lambda _: spinning.get_attribute("data-state") == "running")
        assert shown(browser, "span#run-state").text.strip() == "running"
        assert not any(b.is_displayed() for b in browser.find_elements(By.ID, "resume"))
        shown(browser, "button#stop").click()
        state = browser.find_element(By.ID, "run-state")
        wait(browser, RUN_WAIT).until(lambda _: state.text.strip() == "cancelled")
        assert node_states(browser)[spinning.get_attribute("data-step")] == "cancelled"
        assert process.wait(timeout=RUN_WAIT) != 0
        assert shown(browser, "button#resume")
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stderr.close()
