"""Keras at the edges of a shell session (issue 35, item 8): how long ``\\q`` takes after a
Keras training against after a plain SELECT, and how long Ctrl-C takes to give the prompt
back while TensorFlow loads and in the first epoch.

Each figure comes from a fresh ``sqlml`` shell in a pseudo-terminal (pexpect) on an iris
DuckDB file, the contenders taking turns (``rounds.py``), best and median with the load
average. ``quit after SELECT`` is the baseline of ``quit after Keras``: the interpreter's
shutdown after TensorFlow took 7 to 17 s on a busy machine, against 0.5 s.

``python benchmarks/shell_edges.py [--rounds 3]``. Leaves nothing behind.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pexpect
from rounds import taking_turns

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from conftest import load_iris  # noqa: E402

from sqlml.datasources import connect  # noqa: E402

PROMPT = r"sqlml \[[^\]\n]*\]>"
TRAINING = (
    "SELECT * FROM iris_train TO TRAIN DNNClassifier WITH model.n_classes = 3, "
    "model.hidden_units = [8], train.epoch = {epochs} LABEL class INTO m;"
)


def shell(url: str) -> pexpect.spawn:
    """A shell on ``url`` at its first prompt, progress as plain lines."""
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1",
           "PAGER": "cat", "SQLML_PROGRESS": "1", "CI": "true"}  # fmt: skip
    child = pexpect.spawn(sys.executable, ["-m", "sqlml", "--datasource", url], env=env,
                          encoding="utf-8", dimensions=(60, 200), timeout=600)  # fmt: skip
    child.expect(PROMPT)
    return child


def quit_after(url: str, statement: str) -> float:
    """Seconds from ``\\q`` to the shell's end, once ``statement`` has run."""
    child = shell(url)
    child.sendline(statement)
    child.expect(r"trained m|\(1 row\)")
    child.expect(PROMPT)
    started = time.perf_counter()
    child.sendline("\\q")
    child.expect(pexpect.EOF)
    return time.perf_counter() - started


def cancel_when(url: str, shown: str) -> float:
    """Seconds from Ctrl-C, once ``shown`` is printed by an endless training, to
    ``cancelled``."""
    child = shell(url)
    child.sendline(TRAINING.format(epochs=100000))
    child.expect(shown)
    started = time.perf_counter()
    child.sendcontrol("c")
    child.expect("cancelled")
    took = time.perf_counter() - started
    child.sendline("\\q")
    child.expect(pexpect.EOF)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory() as folder:
        url = f"duckdb:///{folder}/iris.duckdb"
        ds = connect(url)
        load_iris(ds)
        ds.close()
        runs = taking_turns(
            {
                "quit after SELECT": lambda: quit_after(url, "SELECT 1 AS one;"),
                "quit after Keras": lambda: quit_after(url, TRAINING.format(epochs=1)),
                "Ctrl-C while TensorFlow loads": lambda: cancel_when(url, "loading TensorFlow"),
                "Ctrl-C in the first epoch": lambda: cancel_when(url, "compiling the network"),
            },
            rounds,
        )
    for name in runs.names():
        print(f"{name:32} best {runs.best(name):6.2f} s   median {runs.median(name):6.2f} s")
    print(f"quit after Keras / after SELECT: {runs.ratios('quit after Keras', 'quit after SELECT')}"
          " (best, median)")  # fmt: skip
    print(runs.load())


if __name__ == "__main__":
    main()
