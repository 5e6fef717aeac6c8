"""What sqlml ui's browser tests, its screenshots (docs/screenshots.py) and its benchmark
(benchmarks/ui.py) share: Debian's headless Chromium driven by Selenium, the ui served by
uvicorn in a thread on a free loopback port, and a demo folder (a DuckDB database with the
iris tables, a program whose third step fails until a table exists, its recorded run).

Chromium and its driver are the system's (``apt-get install chromium chromium-driver``, as
``.ci/run`` does): Selenium is given both paths, so it never downloads a browser or a driver.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

    from sqlml.ui.server import Settings

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parent.parent
IRIS_CSV = ROOT / "examples" / "iris.csv"
MODEL = "iris_model"
MISSING_TABLE = "observers"  # the table whose absence fails the demo program's third step
FAILING_STEP_LINE = 8  # the line of that step's statement in PROGRAM
PROGRAM = f"""\
-- sqlml ui's demo: a model, its evaluation, then a step that needs {MISSING_TABLE}.
SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN xgboost.gbtree WITH train.num_boost_round = 8, validation.select =
  "SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_test"
LABEL class INTO {MODEL};
SELECT * FROM iris_test TO EVALUATE {MODEL} WITH evaluate.plot = "iris_evaluation.png"
LABEL class INTO iris_evaluation;
CREATE TABLE observed AS SELECT e.*, o.observer FROM iris_evaluation AS e
  CROSS JOIN {MISSING_TABLE} AS o;
SELECT observer, count(*) AS n FROM observed GROUP BY observer;
"""
SPINNING = 1_000_000  # rounds of a training that goes on until it is stopped
SPINNING_TRAINING = f"""\
SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN xgboost.gbtree WITH train.num_boost_round = {SPINNING}
LABEL class INTO spinner;"""
SEARCHED = "iris_searched_over_eight_hyperparameters"  # a search, for its wide trials table
SEARCH = f"""\
SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN xgboost.gbtree WITH train.num_boost_round = 2, eta = CHOICE(0.1, 0.3),
  max_depth = CHOICE(2, 4), subsample = CHOICE(0.8, 1.0), colsample_bytree = CHOICE(0.5, 1.0),
  min_child_weight = CHOICE(1.0, 2.0), lambda = CHOICE(0.5, 1.0), alpha = CHOICE(0.0, 0.1),
  gamma = CHOICE(0.0, 0.5), search.trials = 4, search.trials_table = iris_search_trials,
  validation.select =
    "SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_test"
LABEL class INTO {SEARCHED};
"""


class BrowserMissing(RuntimeError):
    """Chromium or its driver is not installed."""


def chrome(width: int = 1280, height: int = 900) -> WebDriver:
    """A headless Chromium session (the system's browser and driver, nothing downloaded)."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        raise BrowserMissing(
            f"{' and '.join(missing)} missing: apt-get install chromium chromium-driver "
            "(.ci/run installs them)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # tests run as root in CI's container
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def browser_session() -> Iterator[WebDriver]:
    """A Chromium session for a test module's fixture, quit after it; a skip where Chromium
    is missing (a failure in CI, which must run the browser tests)."""
    import pytest

    try:
        driver = chrome()
    except BrowserMissing as missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests need Chromium in CI: {missing}")
        pytest.skip(str(missing))
    yield driver
    driver.quit()


@contextmanager
def serving(settings: Settings) -> Iterator[str]:
    """sqlml ui's application for ``settings``, served by uvicorn in a thread on a free
    loopback port until the block ends; yields its address (``http://127.0.0.1:PORT``)."""
    import uvicorn

    from sqlml.ui.server import create_app

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = uvicorn.Config(create_app(settings), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 300  # a deadlock guard
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"sqlml ui did not start on 127.0.0.1:{port}")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listener.close()


def sqlml(
    *arguments: str, folder: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``sqlml ARGUMENTS`` run in ``folder`` (a process of its own, as a user runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "sqlml", *arguments],
        cwd=folder,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_id(stderr: str) -> str:
    """The run id ``sqlml run`` announces on stderr."""
    found = re.search(r"sqlml: run ([\w-]+)", stderr)
    if not found:
        raise AssertionError(f"sqlml run announced no run id:\n{stderr}")
    return found.group(1)


@dataclass(frozen=True)
class Demo:
    """A folder with a DuckDB database, the demo program and the run folder of its runs."""

    folder: Path

    @property
    def datasource(self) -> str:
        return f"duckdb:///{self.folder / 'demo.duckdb'}"

    @property
    def program(self) -> Path:
        return self.folder / "program.sql"

    @property
    def run_dir(self) -> Path:
        return self.folder / "runs"

    @property
    def env(self) -> dict[str, str]:
        """What the demo's ``sqlml`` commands (and a ui resuming its runs) see."""
        return {"SQLML_RUN_DIR": str(self.run_dir)}

    def settings(self, token: str | None = None) -> Settings:
        from sqlml.ui.server import Settings

        return Settings(self.datasource, self.run_dir, self.folder, token)

    def sqlml(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        return sqlml(*arguments, "--datasource", self.datasource, folder=self.folder, env=self.env)

    def run_program(self) -> str:
        """Run the program (its third step fails while the table is missing): its run id."""
        done = self.sqlml("run", str(self.program))
        if done.returncode != 1 or "resume with" not in done.stderr:
            raise AssertionError(f"the demo's run should fail at its third step:\n{done.stderr}")
        return run_id(done.stderr)

    def spin(self) -> subprocess.Popen[str]:
        """``sqlml run`` of a training that goes on until it is stopped, started (its
        standard error piped: its first line names the run)."""
        program = self.folder / "spin.sql"
        program.write_text(SPINNING_TRAINING + "\n", encoding="utf-8")
        return subprocess.Popen(
            [sys.executable, "-m", "sqlml", "run", str(program), "--datasource", self.datasource],
            cwd=self.folder, env={**os.environ, **self.env}, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def search(self) -> None:
        """Run the search of :data:`SEARCH` (a run of its own)."""
        program = self.folder / "search.sql"
        program.write_text(SEARCH, encoding="utf-8")
        done = self.sqlml("run", str(program))
        if done.returncode != 0:
            raise AssertionError(f"the demo's search failed:\n{done.stderr}")

    def execute(self, sql: str) -> None:
        """Run ``sql`` on the database (directly: no run of sqlml is recorded)."""
        import duckdb

        with duckdb.connect(str(self.folder / "demo.duckdb")) as connection:
            connection.execute(sql)

    def tables(self) -> set[str]:
        """The names of the database's tables."""
        import duckdb

        with duckdb.connect(str(self.folder / "demo.duckdb")) as connection:
            return {row[0] for row in connection.execute("SHOW TABLES").fetchall()}

    def create_missing_table(self) -> None:
        self.execute(
            f"CREATE TABLE {MISSING_TABLE} AS SELECT * FROM (VALUES ('Ada'), ('Bo')) AS t(observer)"
        )


def record_run(demo: Demo, steps: list[tuple[str, list[str]]], failed: str) -> str:
    """A failed run of ``steps`` (each a name and the steps it waits for, all statements)
    recorded in the demo's run folder as ``sqlml run`` records one (its ``run.json`` and
    ``states.jsonl``, written by the local backend's own functions), without running them:
    ``failed`` failed, the steps before it succeeded, the others were omitted. Its id."""
    from sqlml.backends.local.run_file import StatesFile, describe, write_run_file
    from sqlml.datasources import parse_url
    from sqlml.workflow.core import Step, Workflow

    workflow = Workflow("generated")
    for line, (name, after) in enumerate(steps, 1):
        text = f"CREATE TABLE t{line} AS SELECT {line} AS n;"
        workflow.add(Step(name, "sql", {"text": text, "line": line, "column": 1}, tuple(after)))
    identity = parse_url(demo.datasource).identity()
    run = time.strftime("%Y%m%d-%H%M%S-") + "5" * 6
    folder = demo.run_dir / run
    folder.mkdir(parents=True)
    write_run_file(folder, describe(run, workflow, None, "generated.sql", demo.folder, identity))
    states, at = StatesFile(folder), time.time()
    names = [name for name, _ in steps]
    for name in names[: names.index(failed)]:
        states.write({"step": name, "state": "succeeded", "attempts": 1, "started_at": at,
                      "ended_at": at + 0.1, "error": None})  # fmt: skip
    states.write({"step": failed, "state": "failed", "attempts": 1, "started_at": at,
                  "ended_at": at + 0.1, "error": f"step {failed} failed (generated)"})  # fmt: skip
    for name in names[names.index(failed) + 1 :]:
        states.write({"step": name, "state": "omitted", "attempts": 0, "started_at": None,
                      "ended_at": None, "error": None})  # fmt: skip
    states.write({"run": "failed", "ended_at": at + 0.2})
    states.close()
    return run


def make_demo(folder: Path) -> Demo:
    """The demo in ``folder``: the iris tables loaded, the program written, not run yet."""
    demo = Demo(folder)
    folder.mkdir(parents=True, exist_ok=True)
    demo.program.write_text(PROGRAM, encoding="utf-8")
    demo.execute(
        f"CREATE TABLE iris AS SELECT * FROM read_csv('{IRIS_CSV}');"
        "CREATE TABLE iris_train AS SELECT * FROM iris WHERE id % 5 <> 0;"
        "CREATE TABLE iris_test AS SELECT * FROM iris WHERE id % 5 = 0;"
    )
    return demo
