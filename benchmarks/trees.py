"""What a redesign costs: the same sqlml commands under several source trees, taking turns.

Workloads, each ``python -m sqlml ...`` in a fresh process on one DuckDB file, as a user runs
them: ``startup`` (``-e "SELECT 1;"``), ``compile`` (compile.py's 1,000-statement program to
an Argo Workflow), ``train`` (train.py's XGBoost TO TRAIN of 1,000,000 rows, every row) and
``predict`` (TO PREDICT of those rows with the model). The first tree is the baseline: each
other tree's time is given as a ratio of its (best, median), with CPU time and peak RSS.
Target for a redesign that changes no behaviour: every ratio within the noise, 1.00x +- 0.05.

``python benchmarks/trees.py --tree before=DIR --tree after=DIR [--rounds 3]`` (DIR holds
a ``sqlml`` package: a checkout or ``git worktree add DIR REV``). Leaves nothing behind.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from compile import program
from rounds import in_fresh_process, taking_turns
from train import MODEL, TABLE, generate, statement

WORKLOADS = ("startup", "compile", "train", "predict")


def commands(folder: Path) -> dict[str, list[str]]:
    """Each workload's arguments to ``python -m sqlml``."""
    (folder / "program.sql").write_text(program())
    return {
        "startup": ["-e", "SELECT 1;"],
        "compile": ["compile", str(folder / "program.sql"), "--target", "argo"],
        "train": ["-e", statement(0.0)],
        "predict": ["-e", f"SELECT * FROM {TABLE} TO PREDICT predicted.label USING {MODEL};"],
    }


def make(database: Path) -> None:
    """train.py's table in a DuckDB file."""
    import duckdb

    con = duckdb.connect(str(database))
    con.register("data", generate())
    con.execute(f"CREATE TABLE {TABLE} AS SELECT * FROM data")
    con.close()


def main() -> None:
    if sys.argv[1:2] == ["--make"]:
        return make(Path(sys.argv[2]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", required=True, metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    options = parser.parse_args()
    trees = dict(tree.split("=", 1) for tree in options.tree)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        database = folder / "bench.duckdb"
        # Made in a child: a peak RSS read after exec counts the parent's memory at the fork.
        subprocess.run([sys.executable, __file__, "--make", str(database)], check=True)
        args = commands(folder)
        for workload in options.workloads.split(","):
            contenders = {
                name: _runner(name, source, args[workload], database, folder)
                for name, source in trees.items()
            }
            if workload == "predict":  # the model it uses, trained once
                _runner("setup", next(iter(trees.values())), args["train"], database, folder)()
            runs = taking_turns(contenders, options.rounds, required=contenders)
            first = runs.names()[0]
            print(f"{workload}: {options.rounds} rounds, {runs.load()}")
            for name in runs.names():
                print(
                    f"  {name:<10} best {runs.best(name):7.3f} s  median {runs.median(name):7.3f} s"
                    f"  CPU {runs.best(name, 'cpu'):7.3f} s  peak {runs.largest(name, 'peak'):6.0f}"
                    f" MiB  vs {first}: {runs.ratios(name, first)}"
                )


def _runner(name: str, source: str, args: list[str], database: Path, folder: Path):
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(source).resolve()),
        "SQLML_DATASOURCE": f"duckdb:///{database}",
        "SQLML_CACHE": "off",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "sqlml", *args]

    def run() -> dict[str, float]:
        os.chdir(folder)  # so that the working folder's sqlml, if any, is not the one run
        return in_fresh_process(name, command, env)

    return run


if __name__ == "__main__":
    main()
