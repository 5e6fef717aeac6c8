"""TO TRAIN xgboost with train.workers = 1, 2 and 4 on the same rows: wall time, each
process's peak resident memory and the model's accuracy on held-out rows.

    python benchmarks/distributed.py [--rows 2000000] [--rounds 2] [--workers 1 2 4]

The rows (10 numeric features, a binary label) are generated in a DuckDB file in a
temporary folder. Each training runs ``sqlml`` in a process of its own (this script with
``--train``); its process tree is sampled every 0.1 s for each process's peak resident set
(``VmHWM`` in ``/proc/<pid>/status``, a high-water mark, so a late sample holds the peak).
With one worker the step's own process trains; with N the step starts N worker processes
and stores rank 0's model (its own peak is reported apart as "step"). The contenders take
turns (1 2 4, then 4 2 1, ...); the best and the median of each are printed with the load
average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

FEATURES = 10
ROUNDS = 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--train", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.train:
        _train(args.db, args.train)
        return
    with tempfile.TemporaryDirectory(prefix="sqlml-bench-") as folder:
        db = str(Path(folder) / "rows.duckdb")
        _generate(db, args.rows)
        results: dict[int, list[dict[str, float]]] = {n: [] for n in args.workers}
        for turn in range(args.rounds):
            order = args.workers if turn % 2 == 0 else list(reversed(args.workers))
            for count in order:
                result = _measure(db, count)
                results[count].append(result)
                print(f"round {turn + 1} workers={count}: {_shown(result)}", flush=True)
        _report(db, results, args.rows)


def _generate(db: str, rows: int) -> None:
    import duckdb

    con = duckdb.connect(db)
    con.execute("SELECT setseed(0.5)")
    columns = ", ".join(f"random() * 2 - 1 AS x{i}" for i in range(FEATURES))
    score = " + ".join(f"{(i % 3) + 1} * x{i}" for i in range(FEATURES))
    for table, count in (("train", rows), ("test", 200_000)):
        con.execute(
            f"CREATE TABLE {table} AS SELECT *, CAST({score} + (random() - 0.5) * 2 > 0 "
            f"AS INTEGER) AS y FROM (SELECT {columns} FROM range({count}))"
        )
    con.close()


def _statement(count: int) -> str:
    names = ", ".join(f"x{i}" for i in range(FEATURES))
    return (
        f"SELECT {names}, y FROM train TO TRAIN xgboost.gbtree WITH "
        f"objective = 'binary:logistic', train.num_boost_round = {ROUNDS}, "
        f"train.workers = {count} LABEL y INTO model_{count};"
    )


def _train(db: str, count: int) -> None:
    """In the measured process: the TO TRAIN, through sqlml's runtime."""
    from sqlml.grammar import parse
    from sqlml.runtime.datasource import connect
    from sqlml.runtime.execute import execute
    from sqlml.semantics import analyze

    os.environ["SQLML_CACHE"] = "off"
    ds = connect(f"duckdb:///{db}")
    (statement,) = analyze(parse(_statement(count)))
    print(execute(statement, ds).summary, file=sys.stderr)
    ds.close()


def _measure(db: str, count: int) -> dict[str, float]:
    """One training: wall time, the step's and each worker's peak RSS (MiB), accuracy."""
    start = time.monotonic()
    step = subprocess.Popen(
        [sys.executable, __file__, "--train", str(count), "--db", db],
        stderr=subprocess.PIPE,
        text=True,
    )
    peaks: dict[int, int] = {}
    while step.poll() is None:
        for pid in _tree(step.pid):
            peak = _peak(pid)
            if peak is not None:
                peaks[pid] = max(peaks.get(pid, 0), peak)
        time.sleep(0.1)
    wall = time.monotonic() - start
    error = step.stderr.read() if step.stderr else ""
    if step.returncode:
        raise SystemExit(f"workers={count} failed: {error}")
    step_peak = peaks.pop(step.pid, 0) / 1024
    workers = sorted(peaks.values(), reverse=True)
    worker_peak = workers[0] / 1024 if workers else step_peak
    return {
        "wall": wall,
        "step": step_peak,
        "worker": worker_peak,
        "workers_seen": len(workers) or 1,
        "accuracy": _accuracy(db, count),
    }


def _tree(root: int) -> list[int]:
    """``root`` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def _peak(pid: int) -> int | None:
    """The process's peak resident set in KiB, None once it has gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _accuracy(db: str, count: int) -> float:
    import xgboost as xgb

    from sqlml.models.store import ModelStore
    from sqlml.runtime.datasource import connect

    ds = connect(f"duckdb:///{db}")
    data = ModelStore(ds).load(f"model_{count}").data
    test = ds.read("SELECT * FROM test")
    ds.close()
    booster = xgb.Booster()
    booster.load_model(bytearray(data))
    x = np.column_stack([test[f"x{i}"] for i in range(FEATURES)]).astype(np.float32)
    return float(((booster.predict(xgb.DMatrix(x)) > 0.5) == test["y"]).mean())


def _shown(result: dict[str, float]) -> str:
    return (
        f"{result['wall']:.1f} s, step {result['step']:.0f} MiB, worker peak "
        f"{result['worker']:.0f} MiB ({result['workers_seen']:.0f} processes), accuracy "
        f"{result['accuracy']:.4f}"
    )


def _report(db: str, results: dict[int, list[dict[str, float]]], rows: int) -> None:
    print(f"\n{rows:,} rows x {FEATURES} features, {ROUNDS} rounds; load average {os.getloadavg()}")
    base = statistics.median(r["accuracy"] for r in results[min(results)])
    print("workers | wall best / median (s) | step peak (MiB) | worker peak (MiB) | accuracy")
    for count, runs in results.items():
        walls = [r["wall"] for r in runs]
        accuracy = statistics.median(r["accuracy"] for r in runs)
        print(
            f"{count} | {min(walls):.1f} / {statistics.median(walls):.1f} | "
            f"{statistics.median(r['step'] for r in runs):.0f} | "
            f"{statistics.median(r['worker'] for r in runs):.0f} | "
            f"{accuracy:.4f} ({accuracy - base:+.4f})"
        )


if __name__ == "__main__":
    main()
