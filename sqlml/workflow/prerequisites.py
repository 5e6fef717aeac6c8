"""Prerequisites: data to fetch, packages to install or a script to run around a step.

A prerequisite is defined once in a workflow and named by any number of steps. Before a step
runs, the start commands of its prerequisites run in order; after it ends (success or not),
their exit commands run in reverse order. Commands are ``/bin/sh`` command lines, run in the
step's working directory (locally) or its container (Kubernetes).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Prerequisite:
    """Shell commands run on a step's start (``start``) and on its exit (``exit``)."""

    name: str
    start: tuple[str, ...]
    exit: tuple[str, ...] = ()
    kind: str = "script"  # "data", "packages" or "script": for people reading the workflow


def fetch_data(name: str, url: str, path: str, keep: bool = False) -> Prerequisite:
    """Download ``url`` to ``path`` before the step (with Python: no other tool needed);
    the file is removed afterwards unless ``keep``."""
    fetch = "import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])"
    start = f"python -c {shlex.quote(fetch)} {shlex.quote(url)} {shlex.quote(path)}"
    exit_ = () if keep else (f"rm -f {shlex.quote(path)}",)
    return Prerequisite(name, (start,), exit_, "data")


def packages(name: str, requirements: Sequence[str]) -> Prerequisite:
    """Install Python packages (pip requirement strings) before the step."""
    quoted = " ".join(shlex.quote(requirement) for requirement in requirements)
    return Prerequisite(name, (f"python -m pip install --quiet {quoted}",), (), "packages")


def script(name: str, start: Sequence[str], exit: Sequence[str] = ()) -> Prerequisite:
    """Any commands: ``start`` before the step, ``exit`` after it."""
    return Prerequisite(name, tuple(start), tuple(exit), "script")


def start_commands(prerequisites: Sequence[Prerequisite]) -> list[str]:
    """The start commands of ``prerequisites``, in order."""
    return [command for prerequisite in prerequisites for command in prerequisite.start]


def exit_commands(prerequisites: Sequence[Prerequisite]) -> list[str]:
    """The exit commands of ``prerequisites``, in reverse order."""
    return [command for prerequisite in prerequisites for command in prerequisite.exit][::-1]
