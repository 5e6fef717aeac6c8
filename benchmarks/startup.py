"""Start-up time: ``sqlml -e "SELECT 1;"``, ``sqlml check`` (of two SELECTs, and of a
20-statement program of trainings, predictions, evaluations and queries) and the shell's
first prompt against Python + DuckDB.

Each command runs in a fresh process, ROUNDS times, taking turns (round 1 in order, round 2
in reverse order, ...), so that a change in the machine's load falls on all of them; the
best and median wall times are printed with the load average seen during the runs. The
baseline is ``python -c "import duckdb; duckdb.connect(FILE).sql('SELECT 1').fetchall()"``
on the same DuckDB file, in a lean environment holding duckdb alone at this environment's
version (benchmarks/lean.py); the DuckDB CLI is timed too when it is installed. ``sqlml repl`` is
timed from its start to its first prompt, in a pseudo-terminal (pexpect), then told to quit.
One warm-up run of each command comes first: it fills sqlml's parser cache and writes the
bytecode of modules that have none (as installing a package does; ``PYTHONDONTWRITEBYTECODE``
is dropped).

Targets: sqlml's best time <= the baseline's best + 0.1 s (issue 18); ``sqlml -e``'s median
<= the baseline's median + 0.1 s (issue 37).

``python benchmarks/startup.py [--rounds 15]``. Leaves nothing behind.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lean

TARGET = 0.1  # seconds over the baseline
# A program of 20 statements as the examples' (checked, never run: its files need not exist).
PROGRAM = """
CREATE OR REPLACE TABLE churn AS SELECT * FROM read_csv('churn.csv');
CREATE OR REPLACE TABLE churn_train AS SELECT * FROM churn WHERE customer_id % 5 <> 0;
CREATE OR REPLACE TABLE churn_test AS SELECT * FROM churn WHERE customer_id % 5 = 0;
SELECT tenure, contract, monthly_charges, churned FROM churn_train
TO TRAIN xgboost.gbtree WITH eta = 0.1, max_depth = 3, train.num_boost_round = 60
LABEL churned INTO churn_xgboost;
SELECT tenure, contract, monthly_charges, churned FROM churn_train
TO TRAIN DNNClassifier WITH model.hidden_units = [16, 8], train.epoch = 10
LABEL churned INTO churn_dnn;
SELECT * FROM churn_test TO EVALUATE churn_xgboost LABEL churned INTO churn_xgboost_metrics;
SELECT * FROM churn_test TO EVALUATE churn_dnn LABEL churned INTO churn_dnn_metrics;
SELECT * FROM churn_test TO PREDICT churn_pred.churned
WITH predict.extra_outputs = 'probabilities' USING churn_xgboost;
SELECT * FROM churn_test TO EXPLAIN churn_xgboost INTO churn_explanation;
SELECT 'xgboost' AS model, round(accuracy, 3) AS accuracy FROM churn_xgboost_metrics
UNION ALL SELECT 'dnn', round(accuracy, 3) FROM churn_dnn_metrics;
SELECT feature, round(importance, 3) AS importance FROM churn_explanation ORDER BY 2 DESC;
SELECT customer_id, churned, round(churned_yes, 3) AS p_yes FROM churn_pred
ORDER BY churned_yes DESC LIMIT 5;
CREATE OR REPLACE TABLE iris AS SELECT * FROM read_csv('iris.csv');
CREATE OR REPLACE TABLE iris_train AS SELECT * FROM iris WHERE id % 5 <> 0;
SELECT sepal_length, sepal_width, petal_length, petal_width, class FROM iris_train
TO TRAIN sklearn.ensemble.RandomForestClassifier WITH model.n_estimators = 10
LABEL class INTO iris_forest;
SELECT * FROM iris TO PREDICT iris_pred.class USING iris_forest;
SELECT * FROM iris TO EVALUATE iris_forest WITH validation.metrics = "accuracy_score"
LABEL class INTO iris_metrics;
SHOW TRAIN iris_forest;
SELECT class, count(*) AS n FROM iris_pred GROUP BY class ORDER BY class;
SELECT * FROM iris_metrics;
"""
SHELL = " repl prompt"  # timed to its first prompt: the commands named ...SHELL


def commands(folder: Path, trees: dict[str, str]) -> dict[str, list[str]]:
    """What is timed, by name: each a command line run in a fresh process; ``trees``: other
    sqlml source trees to time as well (name -> folder holding their ``sqlml`` package)."""
    database, program = folder / "bench.duckdb", folder / "check.sql"
    subprocess.run(
        [sys.executable, "-c", f"import duckdb; duckdb.connect({str(database)!r}).close()"],
        check=True,
    )
    program.write_text("SELECT 1;\nSELECT a, b FROM t WHERE a > 1;\n")
    (folder / "check20.sql").write_text(PROGRAM)
    script = Path(sys.executable).parent / "sqlml"  # the installed command, as users run it
    sqlml = [str(script)] if script.exists() else [sys.executable, "-m", "sqlml"]
    found = {
        "python + duckdb": [
            lean.python(["duckdb"]),
            "-I",
            "-c",
            f"import duckdb; duckdb.connect({str(database)!r}).sql('SELECT 1').fetchall()",
        ],
        **sqlml_commands("sqlml", sqlml, folder),
    }
    for name, source in trees.items():  # another tree's sqlml, first on the module path
        found.update(sqlml_commands(name, [sys.executable, "-m", "sqlml"], folder, source))
    if shutil.which("duckdb"):
        found["duckdb CLI"] = ["duckdb", str(database), "-c", "SELECT 1"]
    return found


def sqlml_commands(
    name: str, sqlml: list[str], folder: Path, source: str | None = None
) -> dict[str, list[str]]:
    """The sqlml commands timed, run with ``sqlml`` (the sqlml in the folder ``source``,
    if given: through ``env``, which puts it first on the module path)."""
    env = ["env", f"PYTHONPATH={source}"] if source else []
    shell = [*sqlml, "repl", "--datasource", f"duckdb:///{folder / 'bench.duckdb'}"]
    return {
        f"{name} -e": [*env, *sqlml, *select_arguments(folder)],
        f"{name} check": [*env, *sqlml, "check", str(folder / "check.sql")],
        f"{name} check 20": [*env, *sqlml, "check", str(folder / "check20.sql")],
        f"{name}{SHELL}": [*env, *shell],
    }


def select_arguments(folder: Path) -> list[str]:
    """The arguments of ``sqlml -e "SELECT 1;"`` on the benchmark's DuckDB file."""
    return ["-e", "SELECT 1;", "--datasource", f"duckdb:///{folder / 'bench.duckdb'}"]


def timed(command: list[str], env: dict[str, str], shell: bool = False) -> tuple[float, float]:
    """The wall time of one run of ``command``, which must succeed (of a ``shell``: to its
    first prompt), and the CPU time its processes took (user and system, to their end),
    which a loaded machine inflates less than the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if shell:
        wall = to_prompt(command, env)
    else:
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
        wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def to_prompt(command: list[str], env: dict[str, str]) -> float:
    """The seconds from starting the shell ``command`` in a pseudo-terminal to its first
    prompt; the shell is then ended with an end of input."""
    import pexpect

    terminal = {**env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    start = time.perf_counter()
    shell = pexpect.spawn(
        command[0], command[1:], env=terminal, dimensions=(40, 200), encoding="utf-8", timeout=60
    )
    shell.expect(r"sqlml \[")
    seconds = time.perf_counter() - start
    shell.sendeof()
    shell.expect(pexpect.EOF)
    shell.close()
    return seconds


def breakdown(arguments: list[str], env: dict[str, str]) -> dict[str, float]:
    """Seconds spent importing each package in one run of ``sqlml ARGUMENTS`` (``-X
    importtime``: each module's own time, summed by top-level package; sqlml's by
    subpackage)."""
    command = [sys.executable, "-X", "importtime", "-m", "sqlml", *arguments]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    spent: dict[str, float] = {}
    for line in done.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue
        parts = fields[2].strip().split(".")
        package = ".".join(parts[:2]) if parts[0] == "sqlml" else parts[0]
        spent[package] = spent.get(package, 0.0) + int(fields[0]) / 1e6
    return spent


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--rounds", type=int, default=15)
    arguments.add_argument(
        "--imports", action="store_true", help="also show where one start's imports go"
    )
    arguments.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="also time the sqlml of another source tree (DIR holds its sqlml package), "
        "e.g. before=/tmp/sqlml-before from `git archive`",
    )
    options = arguments.parse_args()
    rounds, shown = options.rounds, {}
    home = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="sqlml-startup-") as folder:
        # Commands run in the folder: `python -m sqlml` puts the working directory first on
        # the module path, which would put a checkout's sqlml before a --tree's.
        os.chdir(folder)
        # sqlml as installed: its bytecode compiled (the warm-up writes what is missing).
        env = {**os.environ, "SQLML_CACHE_DIR": str(Path(folder) / "cache")}
        env["SQLML_HISTORY"] = str(Path(folder) / "history")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        timing = commands(Path(folder), dict(tree.split("=", 1) for tree in options.tree))
        if importlib.util.find_spec("pexpect") is None:
            print("pexpect is not installed: the shell's first prompt is not timed")
            timing = {name: command for name, command in timing.items() if SHELL not in name}
        names = list(timing)
        for name in names:  # warm-up: the disk's cache, sqlml's parser cache
            timed(timing[name], env, SHELL in name)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
        loads = [os.getloadavg()[0]]
        for round_ in range(rounds):
            for name in names if round_ % 2 == 0 else reversed(names):
                times[name].append(timed(timing[name], env, SHELL in name))
            loads.append(os.getloadavg()[0])
        if options.imports:
            shown = breakdown(select_arguments(Path(folder)), env)
        os.chdir(home)
    walls = {name: [wall for wall, _ in runs] for name, runs in times.items()}
    cpus = {name: [cpu for _, cpu in runs] for name, runs in times.items()}
    baseline, cpu_baseline = min(walls["python + duckdb"]), min(cpus["python + duckdb"])
    print(f"{rounds} rounds, load average {min(loads):.2f} to {max(loads):.2f}")
    print(
        f"{'command':<24} {'best':>8} {'median':>8} {'best - baseline':>16}"
        f" {'CPU best':>9} {'median':>8} {'- baseline':>11}"
    )
    for name in names:
        best, median = min(walls[name]), statistics.median(walls[name])
        cpu, cpu_median = min(cpus[name]), statistics.median(cpus[name])
        print(
            f"{name:<24} {best:>7.3f}s {median:>7.3f}s {best - baseline:>+15.3f}s"
            f" {cpu:>8.3f}s {cpu_median:>7.3f}s {cpu - cpu_baseline:>+10.3f}s"
        )
    worst = max(min(walls[name]) - baseline for name in names if name.startswith("sqlml "))
    verdict = "met" if worst <= TARGET else "NOT met"
    print(f"target: sqlml <= python + duckdb + {TARGET:.1f} s: {verdict} (+{worst:.3f} s)")
    over = statistics.median(walls["sqlml -e"]) - statistics.median(walls["python + duckdb"])
    verdict = "met" if over <= TARGET else "NOT met"
    print(f"target: sqlml -e's median <= baseline's + {TARGET:.1f} s: {verdict} (+{over:.3f} s)")
    if shown:
        print("\nimports of one `sqlml -e` (ms, own time summed by package):")
        spent = sorted(shown.items(), key=lambda item: -item[1])
        print(", ".join(f"{name} {seconds * 1000:.0f}" for name, seconds in spent[:16]))
        print(f"all imports: {sum(shown.values()) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
