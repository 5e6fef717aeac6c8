"""sqlml ui in a real browser (Debian's headless Chromium through Selenium): a run with a
failed step is found, its DAG shows the failed node, its log and error open on a click, the
page resumes it and the resumed run succeeds; a model's page shows its metrics and a plot;
the editor runs a statement and shows its rows, and a syntax error with its position, and
says a database another process holds is busy, running the statement once it is free;
another site's forms change nothing.

Live runs, at 1,400 and 800 pixels wide: a failed run opens on its failed step, its edges end
in arrowheads and pass beside the boxes (measured on the drawn SVG); a step is found in a run
of 500 steps, which zooms and shows as a list; no page is wider than the window; a training
shows its rounds and metric in the run's step panel and in the editor as it goes; Stop asks
first (cancelled, the run goes on) and says when the run has stopped; a run whose process was
killed is lost, ended when it was last heard of.

Without Chromium the tests are skipped, and fail in CI (CI=true), where .ci/run installs it.
"""

from __future__ import annotations

import re
import signal
import subprocess
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
    SPINNING,
    SPINNING_TRAINING,
    Demo,
    browser_session,
    make_demo,
    record_run,
    run_id,
    serving,
)

from sqlml.backends.local.run_file import STATES_FILE, read_run_file
from sqlml.backends.runs import clock, duration

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
WIDTHS = (1400, 800)  # the window widths the live pages are tested at
HEIGHT = 900
PROGRESS = re.compile(rf"training \(spinner\): (\d+)/{SPINNING} rounds  \w+ [\d.e+-]+")
SYNTAX_ERROR_LINE = "FROM iris_train GROUP BY class ORDER BY n DESC LIMT 2;"  # LIMT: column 48


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """One Chromium session for the module (its start takes seconds)."""
    yield from browser_session()


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


def fits_the_window(browser: WebDriver) -> None:
    """The page is no wider than the window: no horizontal scrollbar."""
    wide, window = browser.execute_script(
        "const e = document.documentElement; return [e.scrollWidth, e.clientWidth]"
    )
    assert wide <= window, f"the page is {wide} px wide in a window of {window} px"


def sized(browser: WebDriver, width: int) -> None:
    browser.set_window_size(width, HEIGHT)


def big_dag(steps: int = 500) -> list[tuple[str, list[str]]]:
    """Ten steps a layer, each waiting for one or two of the layers above it."""
    names = [f"s{i:03d}-step" for i in range(1, steps + 1)]
    return [(name, [names[j] for j in (i - 10, i - 13) if j >= 0]) for i, name in enumerate(names)]


@pytest.fixture(scope="module")
def skipping_run(demo: tuple[Demo, str]) -> str:
    """A run whose s03 -> s07 skips the layer of s05, failed at s07."""
    steps = [("s01", []), ("s02", ["s01"]), ("s03", ["s01"]), ("s05", ["s03"]),
             ("s07", ["s05", "s03"])]  # fmt: skip
    return record_run(demo[0], steps, failed="s07")


@pytest.fixture(scope="module")
def big_run(demo: tuple[Demo, str]) -> str:
    return record_run(demo[0], big_dag(), failed="s250-step")


DRAWN = r"""
const svg = document.getElementById("dag");
const boxes = [...svg.querySelectorAll("g.node")].map((node) => {
  const m = node.transform.baseVal.consolidate().matrix, r = node.querySelector("rect");
  return {name: node.dataset.step, after: node.dataset.after, x: m.e, y: m.f,
          w: r.width.baseVal.value, h: r.height.baseVal.value};
});
const edges = svg.querySelector("path.edges"), length = edges.getTotalLength();
let inside = 0, sampled = 0;
for (let at = 0; at <= length; at += 1.5, sampled++) {
  const p = edges.getPointAtLength(at);
  for (const b of boxes) {
    if (p.x > b.x + 1 && p.x < b.x + b.w - 1 && p.y > b.y + 1 && p.y < b.y + b.h - 1) inside++;
  }
}
const arrows = svg.querySelector("path.arrows");
const tips = [...arrows.getAttribute("d").matchAll(/M([-\d.]+) ([-\d.]+)l/g)]
  .map((m) => [+m[1], +m[2]]);
const targets = boxes.filter((b) => b.after).map((b) => [b.x + b.w / 2, b.y]);
const style = getComputedStyle(arrows);
return {inside, sampled, tips, targets, fill: style.fill, shown: arrows.getBBox().width > 0};
"""


@pytest.mark.parametrize("width", WIDTHS)
def test_a_failed_run_opens_on_its_failed_step_with_arrows_beside_the_boxes(
    browser, demo, ui, skipping_run, width
):
    sized(browser, width)
    browser.get(f"{ui}/runs/{skipping_run}")
    wait(browser).until(lambda b: b.find_element(By.ID, "step-name").text == "s07")
    assert "s07 failed (generated)" in shown(browser, "p#step-error").text
    selected = browser.find_elements(By.CSS_SELECTOR, "svg#dag g.node.selected")
    assert [node.get_attribute("data-step") for node in selected] == ["s07"]
    drawn = browser.execute_script(DRAWN)
    assert drawn["sampled"] > 300 and drawn["inside"] == 0, drawn
    assert sorted(map(tuple, drawn["tips"])) == sorted(map(tuple, drawn["targets"]))
    assert len(drawn["tips"]) == 4 and drawn["shown"] and drawn["fill"] != "none", drawn
    fits_the_window(browser)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_step_is_found_in_a_run_of_500_steps_which_zooms_and_lists(
    browser, demo, ui, big_run, width
):
    sized(browser, width)
    browser.get(f"{ui}/runs/{big_run}")
    name = browser.find_element(By.ID, "step-name")
    wait(browser).until(lambda _: name.text == "s250-step")  # its failed step
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg#dag g.node")) == 500
    fits_the_window(browser)

    def found(css: str) -> bool:
        """Whether ``css`` is the selected s417 and shown inside the DAG's frame."""
        return browser.execute_script(
            "const e = document.querySelector(arguments[0]);"
            "const f = document.getElementById('dag-frame').getBoundingClientRect();"
            "const r = e.getBoundingClientRect();"
            "return e.classList.contains('selected') && r.top >= f.top && r.bottom <= f.bottom"
            " && r.left < f.right && r.right > f.left",
            css,
        )

    search = shown(browser, "input#step-search")
    search.send_keys("s417", Keys.ENTER)
    wait(browser).until(lambda _: name.text == "s417-step")
    assert found('svg#dag g.node[data-step="s417-step"]')
    assert shown(browser, "span#step-state").text == "omitted"
    search.clear()
    search.send_keys("s9999", Keys.ENTER)
    wait(browser).until(lambda b: "no step" in b.find_element(By.ID, "step-found").text)

    dag = browser.find_element(By.ID, "dag")
    full = float(dag.get_attribute("width"))
    browser.find_element(By.ID, "zoom-out").click()
    assert float(dag.get_attribute("width")) == pytest.approx(full / 1.25)
    browser.find_element(By.ID, "zoom-fit").click()
    frame = browser.find_element(By.ID, "dag-frame")
    assert dag.size["width"] <= frame.size["width"] < full
    browser.find_element(By.ID, "zoom-in").click()
    assert dag.size["width"] > frame.size["width"] * 1.2
    fits_the_window(browser)

    browser.find_element(By.ID, "show-list").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "table#step-list tbody tr")
    assert len(rows) == 500 and not dag.is_displayed()
    assert rows[249].find_element(By.CSS_SELECTOR, ".state").text == "failed"
    search.clear()
    search.send_keys("s417", Keys.ENTER)
    wait(browser).until(lambda _: found('table#step-list tr[data-step="s417-step"]'))
    rows[9].find_element(By.TAG_NAME, "a").click()
    wait(browser).until(lambda _: name.text == "s010-step")
    fits_the_window(browser)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_runs_list_a_run_and_the_editor_fit_the_window(browser, demo, ui, width):
    demo, failed = demo
    sized(browser, width)
    browser.get(f"{ui}/runs")
    shown(browser, "table#runs tr.run")
    fits_the_window(browser)
    browser.get(f"{ui}/runs/{failed}")
    shown(browser, "section#step")  # opened on its failed step
    fits_the_window(browser)
    columns = ", ".join(f"'a rather long value {i}' AS column_{i}" for i in range(12))
    editor_run(browser, ui, [f"SELECT {columns};"])
    table = shown(browser, "div#result table")
    assert table.size["width"] > width  # wider than the window: it scrolls in its own frame
    fits_the_window(browser)


@contextmanager
def ended(process: subprocess.Popen[str]) -> Iterator[subprocess.Popen[str]]:
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stderr.close()


def test_the_editor_shows_a_trainings_progress(browser, demo, ui):
    sized(browser, WIDTHS[0])
    editor_run(
        browser,
        ui,
        SPINNING_TRAINING.splitlines(),
    )
    progress = shown(browser, "p#progress")
    wait(browser).until(lambda _: PROGRESS.search(progress.text))
    rounds = int(PROGRESS.search(progress.text).group(1))
    wait(browser).until(lambda _: int(PROGRESS.search(progress.text).group(1)) > rounds)
    fits_the_window(browser)
    browser.find_element(By.ID, "cancel").click()
    shown(browser, "p#cancelled")
    assert not progress.is_displayed()


def test_a_killed_runs_process_shows_it_lost_when_last_heard_of(browser, demo, ui):
    demo, _ = demo
    sized(browser, WIDTHS[0])
    with ended(demo.spin()) as process:
        run = run_id(process.stderr.readline())
        browser.get(f"{ui}/runs/{run}")
        state = shown(browser, "span#run-state")
        assert state.text == "running"
        process.send_signal(signal.SIGKILL)
        wait(browser).until(lambda _: state.text == "lost")
    assert list(node_states(browser).values()) == ["lost"]  # its step died with it
    folder = demo.run_dir / run
    last = (folder / STATES_FILE).stat().st_mtime
    took = duration(last - read_run_file(folder)["started_at"])
    assert browser.find_element(By.ID, "run-duration").text == took  # no longer grows
    assert browser.find_element(By.ID, "run-ended").text == f", last heard of at {clock(last)}"
    browser.refresh()
    assert shown(browser, "span#run-duration").text == took
    assert shown(browser, "button#resume")
    browser.get(f"{ui}/runs")
    row = shown(browser, f'table#runs tr.run[data-run="{run}"]')
    assert row.get_attribute("data-state") == "lost" and took in row.text


def test_a_trainings_progress_shows_and_stop_asks_first(browser, demo, ui):
    """The run's step panel shows the training's rounds and metric as it goes; Stop asks,
    and cancelling leaves the run going; once confirmed it stops, and the note says so.
    Last in the module: the run holds the demo's database while it goes on."""
    demo, _ = demo
    sized(browser, WIDTHS[1])
    with ended(demo.spin()) as process:
        run = run_id(process.stderr.readline())
        browser.get(f"{ui}/runs/{run}")
        node = shown(browser, 'svg#dag g.node[data-step^="s1-"]')
        wait(browser).until(lambda _: node.get_attribute("data-state") == "running")
        node.click()
        progress = shown(browser, "p#step-progress")
        wait(browser).until(lambda _: PROGRESS.search(progress.text))
        rounds = int(PROGRESS.search(progress.text).group(1))
        wait(browser).until(lambda _: int(PROGRESS.search(progress.text).group(1)) > rounds)
        fits_the_window(browser)

        stop = shown(browser, "button#stop")
        stop.click()
        asked = wait(browser).until(seen.alert_is_present())
        assert f"Stop run {run}?" in asked.text
        asked.dismiss()
        posted = browser.execute_script(
            "return performance.getEntriesByType('resource')"
            ".filter((e) => e.name.endsWith('/stop')).length"
        )
        assert posted == 0 and process.poll() is None
        assert browser.find_element(By.ID, "action-note").text == ""
        rounds = int(PROGRESS.search(progress.text).group(1))
        wait(browser).until(lambda _: int(PROGRESS.search(progress.text).group(1)) > rounds)

        stop.click()
        wait(browser).until(seen.alert_is_present()).accept()
        note = browser.find_element(By.ID, "action-note")
        state = browser.find_element(By.ID, "run-state")
        wait(browser).until(lambda _: note.text in ("stopping…", "stopped"))
        wait(browser, RUN_WAIT).until(lambda _: state.text.strip() == "cancelled")
        wait(browser).until(lambda _: note.text == "stopped")
        assert node.get_attribute("data-state") == "cancelled"
        assert process.wait(timeout=RUN_WAIT) != 0
        assert shown(browser, "button#resume")
