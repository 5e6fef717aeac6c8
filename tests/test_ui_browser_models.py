"""sqlml ui's models pages in a real browser (Debian's headless Chromium through Selenium):
the list of models, a search's trials table and a model's page with its lineage fit the
window at 1,400 and 800 pixels (no sideways scrolling of the page); a version's page shows
its plots and its lineage, whose step link opens the run's page at the step that trained
it, and that step's panel links back.

Without Chromium the tests are skipped, and fail in CI (CI=true), where .ci/run installs it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import import_or_skip
from ui_browser import MODEL, SEARCHED, Demo, browser_session, make_demo, serving

import_or_skip("starlette")  # the ui extra
import_or_skip("selenium")  # the test extra
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support import expected_conditions as seen  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

WAIT = 300  # seconds a page has to show something: a deadlock guard (each wait ends as it shows)
WIDTHS = (1400, 800)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """One Chromium session for the module (its start takes seconds)."""
    yield from browser_session()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """The demo's failed run resumed, and a search of many hyperparameters."""
    demo = make_demo(tmp_path_factory.mktemp("ui-models-demo"))
    failed = demo.run_program()
    demo.create_missing_table()
    assert demo.sqlml("run", str(demo.program), "--resume", failed).returncode == 0
    demo.search()
    return demo


@pytest.fixture(scope="module")
def ui(demo: Demo) -> Iterator[str]:
    with serving(demo.settings()) as address:
        yield address


def shown(browser: WebDriver, css: str) -> WebElement:
    return WebDriverWait(browser, WAIT).until(
        seen.visibility_of_element_located((By.CSS_SELECTOR, css))
    )


def overflow(browser: WebDriver) -> int:
    """How many pixels the page is wider than the window (0: it fits)."""
    return browser.execute_script(
        "const e = document.documentElement; return Math.max(0, e.scrollWidth - e.clientWidth);"
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_the_models_list_and_the_trials_table_fit_the_window(browser, ui, width):
    browser.set_window_size(width, 900)
    browser.get(f"{ui}/models")
    shown(browser, f'table#models tr.model[data-model="{SEARCHED}"]')
    assert overflow(browser) == 0, f"the list of models is wider than {width} px"
    browser.get(f"{ui}/models/{SEARCHED}")
    trials = shown(browser, "table#trials")
    assert len(trials.find_elements(By.CSS_SELECTOR, "tr.trial")) == 4
    assert overflow(browser) == 0, f"the trials' page is wider than {width} px"
    frame = trials.find_element(By.XPATH, "..")  # the table scrolls inside its frame
    assert frame.size["width"] <= width
    browser.get(f"{ui}/models/{MODEL}")
    shown(browser, "table#lineage")
    assert overflow(browser) == 0, f"the model's page is wider than {width} px"


def test_a_version_links_to_the_step_that_trained_it_and_back(browser, ui):
    browser.set_window_size(1400, 900)
    browser.get(f"{ui}/models/{MODEL}?version=1")
    shown(browser, "figure.plot")  # the evaluation of version 1
    link = shown(browser, "table#lineage a[href*='#step=']")
    step = link.get_attribute("href").rsplit("#step=", 1)[1]
    link.click()
    panel = shown(browser, "#model-link")
    assert browser.find_element(By.ID, "step-name").text == step
    assert panel.text == f"model {MODEL} version 1"
    panel.click()
    heading = shown(browser, "h1#model")
    assert (heading.get_attribute("data-model"), heading.get_attribute("data-version")) == (
        MODEL,
        "1",
    )
