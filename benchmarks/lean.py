"""Script baselines in lean environments: each runs with its own virtual environment holding
only the distributions it imports, at the versions installed in the environment running the
benchmark (sqlml's), so that both sides use the same libraries and the baseline pays for no
import it does not make (XGBoost imports scikit-learn when it finds it, for one).

The environments are made once (``python -m venv``, then pip installs the pinned
distributions, their dependencies constrained to this environment's versions too) and kept
under ``benchmarks/.lean/<distributions>`` (git-ignored); one whose pins no longer match this
environment is made again. Nothing is downloaded while a benchmark is timed.

Both sides run with ``OMP_WAIT_POLICY=PASSIVE`` (sqlml sets it itself before XGBoost loads;
the baseline is given it) and the input cache off.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).parent
LEAN = HERE / ".lean"
BASELINES = HERE / "baselines"
# What a baseline's interpreter sees of this process's environment: nothing else.
KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ")
# Distributions a distribution is used with here when this environment has them (psycopg's C
# implementation is a distribution of its own).
COMPANIONS = {"psycopg": ("psycopg-binary",)}


def pins(modules: Iterable[str]) -> list[str]:
    """The distributions providing ``modules`` (import names) and their installed companions:
    ``name==version`` at this environment's version, or ``name`` alone for one this
    environment lacks (a baseline's own reader: sqlml does not use it)."""
    providers = importlib.metadata.packages_distributions()
    names = set()
    for module in modules:
        for name in providers.get(module, [module.replace("_", "-")]):
            names.add(name)
            names.update(c for c in COMPANIONS.get(name, ()) if version(c))
    return sorted(f"{name}=={version(name)}" if version(name) else name for name in names)


def version(distribution: str) -> str | None:
    """``distribution``'s version in this environment; None if it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def constraints() -> str:
    """Every distribution of this environment pinned (sqlml itself left out): the versions
    the lean environments' dependencies must have too."""
    lines = {
        f"{dist.metadata['Name']}=={dist.version}"
        for dist in importlib.metadata.distributions()
        if dist.metadata["Name"] and dist.metadata["Name"].lower() != "sqlml"
    }
    return "\n".join(sorted(lines)) + "\n"


def python(modules: Iterable[str]) -> str:
    """The interpreter of the lean environment holding ``modules`` (import names), made if
    missing or stale."""
    wanted = pins(modules)
    folder = LEAN / "-".join(pin.split("==")[0] for pin in wanted)
    interpreter = folder / "bin" / "python"
    stamp = folder / "pins.txt"  # written last: its presence says the environment is whole
    text = "\n".join(wanted) + "\n"
    if interpreter.exists() and stamp.exists() and stamp.read_text() == text:
        return str(interpreter)
    shutil.rmtree(folder, ignore_errors=True)
    print(f"lean environment {folder.name}: {' '.join(wanted)}", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    (folder / "constraints.txt").write_text(constraints())
    install = [str(interpreter), "-m", "pip", "install", "--quiet", *wanted]
    done = subprocess.run(
        [*install, "-c", str(folder / "constraints.txt")], capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"pip failed for {folder.name}:\n{done.stderr[-3000:]}")
    stamp.write_text(text)
    return str(interpreter)


def command(modules: Iterable[str], script: str, *args: str) -> list[str]:
    """The command running ``benchmarks/baselines/<script>`` with ``args`` in the lean
    environment of ``modules`` (made now if needed, so before any timing)."""
    return [python(modules), "-I", str(BASELINES / script), *args]


def baseline_environment() -> dict[str, str]:
    """A baseline's environment: the basics of this one, OMP passive."""
    kept = {name: os.environ[name] for name in KEPT if name in os.environ}
    return {**kept, "OMP_WAIT_POLICY": "PASSIVE"}


def run(command: list[str]) -> dict[str, float]:
    """``command`` in a fresh process, in a lean environment's (``command``'s) or sqlml's:
    its wall and CPU seconds (user + system) and peak RSS (MiB): rounds.in_fresh_process."""
    from rounds import in_fresh_process

    baseline = command[0].startswith(str(LEAN))
    env = baseline_environment() if baseline else sqlml_environment()
    return in_fresh_process(" ".join(command[:6]), command, env)


def rows(default: int) -> int:
    """The benchmark's rows: ``$SQLML_BENCH_ROWS`` (a trial run at a reduced size), else
    ``default``."""
    return int(os.environ.get("SQLML_BENCH_ROWS", default))


def sqlml_environment() -> dict[str, str]:
    """sqlml's environment for a timed run: this one, OMP passive, the input cache off, and
    sqlml as installed, its bytecode cached (written by the first run where missing) as the
    baseline's libraries have theirs: with ``PYTHONDONTWRITEBYTECODE`` set, every run
    compiled sqlml's modules again (0.85 G of a small TO PREDICT's 3.9 G instructions)."""
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "SQLML_CACHE": "off"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
