"""sqlml ui's pages as a browser loads them (issue 19: a page loads in under 300 ms for a run
of 1,000 steps and a model store of 1,000 versions).

A DuckDB file holds a model store of 1,000 models of one version and one model of 1,000
versions (the metadata of a real XGBoost model, rows written as ui_models.py writes them)
and the run record of a run of 1,000 steps (20 side by side, each after one or two of the
layer before, the last one failed), whose run folder holds its description (``run.json``),
its states (``states.jsonl``) and a log per step, all written by sqlml's own writers without
running the steps. ``sqlml ui``'s application is served by uvicorn on a loopback port.

Each page is measured twice: the server's answer (an HTTP GET over loopback with httpx2, the
whole body read) and a browser's load (Debian's headless Chromium, ``driver.get`` from
``about:blank``; from the page's Navigation Timing from the start of the navigation: the
response's end, the DOM parsed (``domInteractive``) and the load event's end, its script and
stylesheets included; and the CPU time of the page's renderer main thread from the
navigation to its load, from Chrome's Performance.getMetrics (``ThreadTime``), which the
machine's load changes less than the times).
The pages take turns (benchmarks/rounds.py: A B C D, D C B A ...), best and median of
ROUNDS, with the load average.

Run: python benchmarks/ui.py (needs the ui and test extras and chromium, chromium-driver)
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx2 as httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from rounds import Runs, taking_turns
from selenium.webdriver.remote.webdriver import WebDriver
from ui_browser import chrome, serving
from ui_models import fill, real_metadata

from sqlml import ir
from sqlml.backends.local.record import RunRecord, StepRecord
from sqlml.backends.local.run_file import StatesFile, describe, write_run_file
from sqlml.datasources import connect
from sqlml.steps import sql
from sqlml.ui.server import Settings
from sqlml.workflow import Workflow

STEPS = 1_000
WIDTH = 20  # steps side by side in each layer of the run's DAG
ROUNDS = 15
RUN_ID = "20260101-000000-benchmark"
TARGET_MS = 300
BROWSER = ("response", "parsed", "loaded")  # Navigation Timing's, in ms
CPU = "cpu"  # the renderer main thread's CPU time through the load, in ms
NAVIGATION = (
    "const n = performance.getEntriesByType('navigation')[0];"
    "return [n.responseEnd - n.startTime, n.domInteractive - n.startTime,"
    " n.loadEventEnd - n.startTime];"
)


def big_workflow() -> Workflow:
    """A program of STEPS statements, each reading the tables of one or two of the layer
    before (the first layer reads none)."""
    workflow = Workflow("big")
    steps = []
    for i in range(STEPS):
        inputs = [j for j in (i - WIDTH, i - WIDTH - 1) if j >= 0 and (j % WIDTH) <= (i % WIDTH)]
        reads = " JOIN ".join(f"t{j}" for j in inputs) or "(SELECT 1 AS x)"
        statement = ir.SqlStatement(
            f"s{i + 1}-create-t{i}", f"CREATE TABLE t{i} AS SELECT * FROM {reads}", i + 1, 1
        )
        steps.append(workflow.add(sql(statement, after=[steps[j] for j in inputs])))
    return workflow


def record_run(url: str, run_dir: Path, base_dir: Path) -> None:
    """The run of :func:`big_workflow` as sqlml records one: its folder and its record."""
    workflow = big_workflow()
    folder = run_dir / RUN_ID
    folder.mkdir(parents=True)
    ds = connect(url)
    source = str(base_dir / "big.sql")
    description = describe(RUN_ID, workflow, None, source, base_dir, ds.url.identity())
    write_run_file(folder, description)
    started = description["started_at"] - STEPS * 0.05
    states = StatesFile(folder)
    try:
        record = RunRecord(ds)
        record.start_run(RUN_ID, workflow.name, None, started)
        for i, step in enumerate(workflow.steps):
            failed = i == STEPS - 1
            begin, end = started + i * 0.05, started + i * 0.05 + 0.04
            error = f"Catalog Error: Table with name t{i} already exists!" if failed else None
            state = "failed" if failed else "succeeded"
            entry = StepRecord(step.name, f"{i:064x}", state, 1, begin, end, error, {})
            record.end_step(RUN_ID, entry, new=True)
            states.write({"step": step.name, "state": "running", "started_at": begin})
            states.write({"step": step.name, "state": state, "attempts": 1,
                          "started_at": begin, "ended_at": end, "error": error})  # fmt: skip
            (folder / f"{step.name}.log").write_text(f"attempt 1\n{state}\n")
        record.end_run(RUN_ID, "failed", started + STEPS * 0.05)
        states.write({"run": "failed", "ended_at": started + STEPS * 0.05})
    finally:
        states.close()
        ds.close()


def page_load(
    client: httpx.Client, browser: WebDriver, address: str, path: str
) -> Callable[[], dict[str, float]]:
    """A contender: the page's server answer (seconds), then (a page, not the polled JSON)
    its load in the browser (Navigation Timing and main-thread CPU, ms)."""

    def load() -> dict[str, float]:
        started = time.perf_counter()
        response = client.get(path)
        figures = {"seconds": time.perf_counter() - started}
        assert response.status_code == 200 and len(response.content) > 1000, path
        if not path.endswith("/state"):
            browser.get("about:blank")  # then the page opens in this renderer, counted from here
            before = thread_time(browser)
            browser.get(address + path)
            figures[CPU] = (thread_time(browser) - before) * 1000
            if figures[CPU] < 0:
                raise SystemExit(f"{path}: opened in another renderer, its CPU time not counted")
            figures |= zip(BROWSER, browser.execute_script(NAVIGATION), strict=True)
        return figures

    return load


def thread_time(browser: WebDriver) -> float:
    """The CPU seconds the page's renderer main thread has used (Chrome's metrics)."""
    metrics = browser.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]
    return next(metric["value"] for metric in metrics if metric["name"] == "ThreadTime")


def measure(address: str, pages: dict[str, str]) -> Runs:
    """Each page's server answer and browser load, ROUNDS times, the pages taking turns."""
    browser = chrome()
    browser.execute_cdp_cmd("Performance.enable", {"timeDomain": "threadTicks"})
    try:
        with httpx.Client(base_url=address, timeout=60) as client:
            contenders = {name: page_load(client, browser, address, p) for name, p in pages.items()}
            for contender in contenders.values():  # warm up: imports, templates, browser cache
                contender()
            return taking_turns(contenders, ROUNDS, required=pages)
    finally:
        browser.quit()


def main() -> None:
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        url = f"duckdb:///{folder / 'ui.duckdb'}"
        fill(url, real_metadata(folder))
        record_run(url, folder / "runs", folder)
        pages = {
            f"run of {STEPS:,} steps": f"/runs/{RUN_ID}",
            f"its state, polled (JSON, {STEPS:,} steps)": f"/runs/{RUN_ID}/state",
            "list of runs": "/runs",
            "list of 1,000 models": "/models",
            "model of 1,000 versions": "/models/many",
            "compare 2 of 1,000 versions": "/models/many/compare?a=1&b=1000",
        }
        with serving(Settings(url, folder / "runs", folder)) as address:
            bodies = {name: httpx.get(address + path).content for name, path in pages.items()}
            runs = measure(address, pages)
    print(f"{ROUNDS} rounds, {runs.load()}; best / median, ms; target < {TARGET_MS} ms\n")
    print(
        "| page | size (elements) | server (HTTP GET) | response end | DOM parsed | load event "
        "| main-thread CPU |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in runs.names():
        cells = [f"{runs.best(name) * 1000:.0f} / {runs.median(name) * 1000:.0f}"] + [
            f"{runs.best(name, part):.0f} / {runs.median(name, part):.0f}"
            if part in runs.runs[name][0]
            else "-"
            for part in (*BROWSER, CPU)
        ]
        body = bodies[name]
        size = f"{len(body) / 1024:.0f} KiB ({len(re.findall(rb'<[a-zA-Z]', body)):,})"
        print(f"| {name} | {size} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
