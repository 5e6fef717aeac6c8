"""The local executor: its overhead per no-op step, and two independent trainings vs one.

- Overhead: a workflow of ``STEPS`` independent ``SELECT 1`` statement steps on a DuckDB file,
  run by the local executor (run record, per-step logs, content hashes, worker connections
  included) against the same statements run one after another on one connection; the
  difference divided by the steps. Target: under 20 ms per step.
- Parallel training: ``sqlml run`` of a program with one XGBoost TO TRAIN (1 core:
  ``OMP_NUM_THREADS=1``) against a program with two independent ones on the same table,
  ``--jobs 2``; each in a fresh process (input cache off). Target: the two finish in about
  the time of one (ratio near 1 on a machine with 2 free cores).

In each part the contenders take turns (A B C, C B A, ...: benchmarks/rounds.py), REPEATS
rounds; best and median are reported with the load average.

``python benchmarks/workflow.py`` prints a Markdown table; each part is a function that
returns its rows, so more parts can be added. Nothing is left behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rounds import taking_turns, timed

STEPS = 200
ROWS = 200_000
FEATURES = 10
ROUNDS = 60
REPEATS = 3

Row = tuple[str, str, str]  # what, figure, note


def noop_overhead(folder: Path, steps: int = STEPS) -> list[Row]:
    """Per-step overhead of the executor, with 1 and 2 workers."""
    from sqlml import ir
    from sqlml.backends.local.executor import LocalExecutor
    from sqlml.datasources import connect
    from sqlml.runtime.execute import execute
    from sqlml.steps import sql
    from sqlml.workflow import Workflow

    url = f"duckdb:///{folder / 'noop.duckdb'}"
    statements = [ir.SqlStatement(f"s{i}", "SELECT 1", 1, 1) for i in range(steps)]
    ds = connect(url)

    def direct() -> None:
        for statement in statements:
            execute(statement, ds)

    contenders = {"direct": timed(direct)}
    for jobs in (1, 2):
        workflow = Workflow("noop")
        for statement in statements:
            workflow.add(sql(statement))
        executor = LocalExecutor(url, folder, jobs=jobs, run_dir=folder / "runs")
        contenders[f"--jobs {jobs}"] = timed(lambda e=executor, w=workflow: e.run(w))
    runs = taking_turns(contenders, REPEATS)
    ds.close()
    rows = [
        (
            "no-op steps run directly on one connection",
            f"{_ms(runs.best('direct') / steps)} / {_ms(runs.median('direct') / steps)}",
            f"{steps} steps; {runs.load()}",
        )
    ]
    for jobs in (1, 2):
        name = f"--jobs {jobs}"
        best = (runs.best(name) - runs.best("direct")) / steps
        median = (runs.median(name) - runs.median("direct")) / steps
        rows.append(
            (
                f"local executor, {name}: overhead per no-op step",
                f"{_ms(best)} / {_ms(median)}",
                f"{_ms(runs.best(name))} for {steps} steps (best); target < 20 ms",
            )
        )
    return rows


def parallel_training(folder: Path, rows: int = ROWS, rounds: int = ROUNDS) -> list[Row]:
    """Two independent 1-core TO TRAIN statements against one."""
    url = f"duckdb:///{folder / 'train.duckdb'}"
    columns = ", ".join(f"random() AS f{i}" for i in range(FEATURES))
    _sqlml(
        folder,
        "-e",
        f"SELECT setseed(0.5); CREATE TABLE bench AS SELECT {columns} FROM range({rows}) t(i); "
        "CREATE TABLE data AS SELECT *, CAST(f0 + f1 * f2 > 0.6 AS INTEGER) AS y FROM bench;",
        "--datasource",
        url,
    )
    train = (
        "SELECT * FROM data TO TRAIN xgboost.gbtree WITH train.num_boost_round = {rounds}, "
        "validation.split = 0 LABEL y INTO {model};\n"
    )
    one = folder / "one.sql"
    one.write_text(train.format(rounds=rounds, model="m1"))
    two = folder / "two.sql"
    two.write_text(
        train.format(rounds=rounds, model="m1") + train.format(rounds=rounds, model="m2")
    )
    runs = taking_turns({p.stem: lambda p=p: _run(folder, p, url) for p in (one, two)}, REPEATS)

    def figure(key: str, text: str) -> str:
        return text.format(runs.best("one", key), runs.median("one", key),
                           runs.best("two", key), runs.median("two", key))  # fmt: skip

    def ratio(key: str) -> str:
        best = runs.best("two", key) / runs.best("one", key)
        return f"{best:.2f}x / {runs.median('two', key) / runs.median('one', key):.2f}x"

    return [
        ("one TO TRAIN (1 core), process", figure("seconds", "{0:.2f} s / {1:.2f} s"),
         f"{rows:,} rows, {rounds} rounds; {runs.load()}"),
        ("two independent TO TRAIN, --jobs 2, process",
         figure("seconds", "{2:.2f} s / {3:.2f} s"), ""),
        ("ratio two / one, process", ratio("seconds"), "target: about 1"),
        ("one TO TRAIN, run (record)", figure("run", "{0:.2f} s / {1:.2f} s"),
         "start to end of the run"),
        ("two independent TO TRAIN, run (record)", figure("run", "{2:.2f} s / {3:.2f} s"), ""),
        ("ratio two / one, run", ratio("run"), "target: about 1"),
    ]  # fmt: skip


def _run(folder: Path, program: Path, url: str) -> dict[str, float]:
    """``sqlml run program`` in a fresh process: its seconds, and the run's from the record."""
    from sqlml.datasources import connect

    start = time.perf_counter()
    _sqlml(folder, "run", str(program), "--datasource", url, "--jobs", "2")
    seconds = time.perf_counter() - start
    ds = connect(url)
    found = ds.execute(
        "SELECT ended_at - started_at FROM sqlml_runs ORDER BY started_at DESC LIMIT 1"
    )
    ds.close()
    return {"seconds": seconds, "run": found.rows[0][0]}


def _sqlml(folder: Path, *args: str) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "SQLML_CACHE": "off"}
    env["SQLML_RUN_DIR"] = str(folder / "runs")
    subprocess.run(
        [sys.executable, "-m", "sqlml", *args], cwd=folder, env=env, check=True, capture_output=True
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def main() -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        rows = noop_overhead(folder) + parallel_training(folder)
    print("| measure | figure (best / median) | note |\n| --- | ---: | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
