"""The pictures of docs/ui.md: sqlml ui's main pages, taken with headless Chromium.

``python docs/screenshots.py`` makes a small demo in a temporary folder (the iris tables in
a DuckDB file; a program that trains a model, evaluates it with a plot, then fails on a
missing table; that run resumed once the table exists), serves ``sqlml ui`` over it on a
free loopback port and writes ``docs/images/ui-*.png``: the runs list, the failed run's DAG
opened on its failed step, the model's page and the editor with a result; then the live
pages: a step found in a run of 500 steps, a training's progress in its run's step panel and
in the editor, a run stopped from its page, a run whose process was killed (lost), and a run's
page in a window 800 pixels wide; then, with a search of many hyperparameters, the list of
models and the search's trials at 1,400 and 800 pixels wide (``ui-models-WIDTH.png``,
``ui-trials-WIDTH.png``).

Needs the ``ui`` and ``test`` extras and Debian's ``chromium`` and ``chromium-driver``.
"""

from __future__ import annotations

import base64
import io
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support import expected_conditions as seen  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from ui_browser import (  # noqa: E402
    MISSING_TABLE,
    MODEL,
    SEARCHED,
    SPINNING_TRAINING,
    Demo,
    chrome,
    make_demo,
    record_run,
    run_id,
    serving,
)

IMAGES = ROOT / "docs" / "images"
WIDTH, HEIGHT = 1280, 860
NARROW = (1400, 800)  # the widths of the models list and the trials
EDITOR_SQL = "SELECT class, count(*) AS flowers, round(avg(petal_length), 2) AS petal_length\n"
EDITOR_SQL += "FROM iris_train GROUP BY class ORDER BY class;"


def shown(browser: WebDriver, css: str) -> None:
    WebDriverWait(browser, 30).until(seen.visibility_of_element_located((By.CSS_SELECTOR, css)))


def says(browser: WebDriver, element: str, pattern: str) -> None:
    """Wait until the text of the element of id ``element`` matches ``pattern``."""
    WebDriverWait(browser, 60).until(
        lambda b: re.search(pattern, b.find_element(By.ID, element).get_attribute("textContent"))
    )


def save(browser: WebDriver, name: str, whole: bool = False) -> None:
    """The window (``whole``: the whole page) as ``docs/images/ui-NAME.png``."""
    path = IMAGES / f"ui-{name}.png"
    if whole:  # images below the window load now, not when scrolled to
        browser.execute_script("document.querySelectorAll('img').forEach(i => i.loading = 'eager')")
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script(
            "return Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"
        )
    )
    if whole:
        size = browser.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        shot = browser.execute_cdp_cmd(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip}
        )
        png = base64.b64decode(shot["data"])
    else:
        png = browser.get_screenshot_as_png()
    path.write_bytes(small(png))
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size // 1024} KB)")


def small(png: bytes) -> bytes:
    """``png`` in 128 colours, about a third of its size (a page has few colours)."""
    from PIL import Image  # matplotlib's, which the demo's plot needs

    image = Image.open(io.BytesIO(png)).convert("RGB")
    smaller = io.BytesIO()
    image.quantize(128, Image.Quantize.MEDIANCUT).save(smaller, "PNG", optimize=True)
    return smaller.getvalue()


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sqlml-ui-demo-") as folder:
        demo = make_demo(Path(folder))
        failed = demo.run_program()
        demo.create_missing_table()
        resumed = demo.sqlml("run", str(demo.program), "--resume", failed)
        if resumed.returncode != 0:
            raise SystemExit(f"the demo's resumed run failed:\n{resumed.stderr}")
        browser = chrome(WIDTH, HEIGHT)
        try:
            with serving(demo.settings()) as address:
                browser.get(f"{address}/runs")
                shown(browser, "table#runs tr.run")
                save(browser, "runs")

                browser.get(f"{address}/runs/{failed}")  # it opens on its failed step
                WebDriverWait(browser, 30).until(
                    lambda b: MISSING_TABLE in b.find_element(By.ID, "step-log").text
                )
                save(browser, "run")

                browser.get(f"{address}/models/{MODEL}")
                shown(browser, "figure.plot")
                save(browser, "model", whole=True)

                browser.get(f"{address}/editor")
                shown(browser, "textarea#sql")
                browser.execute_script(
                    "arguments[0].value = arguments[1]",
                    browser.find_element(By.ID, "sql"),
                    EDITOR_SQL,
                )
                browser.find_element(By.ID, "run").click()
                shown(browser, "div#result table")
                save(browser, "editor")
                live(browser, address, demo)

                demo.search()
                for width in NARROW:
                    browser.set_window_size(width, HEIGHT)
                    browser.get(f"{address}/models")
                    shown(browser, "table#models tr.model")
                    save(browser, f"models-{width}")
                    browser.get(f"{address}/models/{SEARCHED}#search")
                    shown(browser, "table#trials")
                    save(browser, f"trials-{width}")
        finally:
            browser.quit()
    return 0


def live(browser: WebDriver, address: str, demo: Demo) -> None:
    """The live pages: a large DAG searched, a training's progress, Stop, a lost run, and
    a narrow window."""
    names = [f"s{i:03d}-step" for i in range(1, 501)]
    steps = [(name, [names[j] for j in (i - 10, i - 13) if j >= 0]) for i, name in enumerate(names)]
    big = record_run(demo, steps, failed="s250-step")
    browser.get(f"{address}/runs/{big}")
    shown(browser, "section#step")
    browser.find_element(By.ID, "step-search").send_keys("s417\n")
    says(browser, "step-name", "^s417-step$")
    save(browser, "run-search")

    browser.get(f"{address}/editor")
    browser.execute_script(
        "arguments[0].value = arguments[1]", browser.find_element(By.ID, "sql"), SPINNING_TRAINING
    )
    browser.find_element(By.ID, "run").click()
    says(browser, "progress", "rounds .*mlogloss")
    save(browser, "editor-progress")
    browser.find_element(By.ID, "cancel").click()
    shown(browser, "p#cancelled")

    spinning = demo.spin()
    try:
        run = run_id(spinning.stderr.readline())
        browser.get(f"{address}/runs/{run}")
        node = 'svg#dag g.node[data-state="running"]'
        shown(browser, node)
        browser.find_element(By.CSS_SELECTOR, node).click()
        says(browser, "step-progress", "rounds .*mlogloss")
        save(browser, "progress")
        browser.find_element(By.ID, "stop").click()
        WebDriverWait(browser, 30).until(seen.alert_is_present()).accept()
        says(browser, "action-note", "^stopped$")
        save(browser, "stopped")
    finally:
        spinning.kill()
        spinning.wait()

    killed = demo.spin()
    run = run_id(killed.stderr.readline())
    browser.get(f"{address}/runs/{run}")
    shown(browser, 'svg#dag g.node[data-state="running"]')
    browser.find_element(By.CSS_SELECTOR, 'svg#dag g.node[data-state="running"]').click()
    says(browser, "step-progress", "rounds .*mlogloss")
    killed.kill()
    killed.wait()
    says(browser, "run-state", "^lost$")
    save(browser, "lost")

    browser.set_window_size(800, HEIGHT)
    browser.get(f"{address}/runs/{big}")
    shown(browser, "section#step")
    save(browser, "narrow")


if __name__ == "__main__":
    raise SystemExit(main())
