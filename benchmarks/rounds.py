"""Benchmark contenders taking turns: A B C in one round, C B A in the next, and so on, so
that a change in the machine's load falls on all of them; each run's figures and the load
average (1 minute) read before it; best and median per contender."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

Figures = dict[str, float]  # one run's figures: "seconds" and any others, "load"


@dataclass
class Runs:
    """Each contender's runs, in the order the contenders were given."""

    runs: dict[str, list[Figures]] = field(default_factory=dict)

    def names(self) -> list[str]:
        return list(self.runs)

    def best(self, name: str, key: str = "seconds") -> float:
        return min(run[key] for run in self.runs[name])

    def median(self, name: str, key: str = "seconds") -> float:
        return statistics.median(run[key] for run in self.runs[name])

    def largest(self, name: str, key: str) -> float:
        return max(run[key] for run in self.runs[name])

    def load(self) -> str:
        """The load averages seen before the runs: lowest, highest, median."""
        loads = [run["load"] for each in self.runs.values() for run in each]
        return (
            f"load average (1 min) {min(loads):.1f} to {max(loads):.1f}, "
            f"median {statistics.median(loads):.1f}"
        )

    def ratios(self, name: str, reference: str) -> str:
        """``name``'s time over ``reference``'s, on best times and on medians: how many
        times faster ``reference`` is."""
        return (
            f"{self.best(name) / self.best(reference):.2f}x, "
            f"{self.median(name) / self.median(reference):.2f}x"
        )


def taking_turns(
    contenders: Mapping[str, Callable[[], float | Figures]],
    rounds: int,
    required: Collection[str] = (),
) -> Runs:
    """Run each contender once a round, in the given order in even rounds and reversed in odd
    ones. A contender returns its seconds, or its figures with "seconds" among them. One
    that raises RuntimeError is reported and left out, unless it is ``required``."""
    result = Runs({name: [] for name in contenders})
    names = list(contenders)
    for number in range(rounds):
        for name in names if number % 2 == 0 else names[::-1]:
            if name not in result.runs:
                continue
            load = os.getloadavg()[0]
            try:
                figures = contenders[name]()
            except RuntimeError as error:
                if name in required:
                    raise
                print(f"{name}: left out, it failed: {error}")
                del result.runs[name]
                continue
            if not isinstance(figures, dict):
                figures = {"seconds": figures}
            result.runs[name].append({**figures, "load": load})
    return result


def in_fresh_process(name: str, command: list[str], env: Mapping[str, str]) -> Figures:
    """Run ``command`` in a process of its own (its output dropped): its wall and CPU
    seconds and its peak RSS in MiB; a SystemExit naming it ``name`` if it fails."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{name} failed")
    cpu = usage.ru_utime + usage.ru_stime
    return {"seconds": wall, "cpu": cpu, "peak": usage.ru_maxrss / 1024}


def timed(work: Callable[[], object]) -> Callable[[], float]:
    """A contender running ``work`` in this process: its seconds."""

    def run() -> float:
        start = time.perf_counter()
        work()
        return time.perf_counter() - start

    return run
