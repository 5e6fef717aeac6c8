"""Backends: where a program's workflow runs. Each is one package holding its code
generation, submission, status and logs, and a :class:`Backend` that registers it: ``local``
(this machine; a Python program) and ``argo`` (Argo Workflows on Kubernetes; a Workflow's
YAML). The front ends find them, and their options, in the registry, and ask them through
the interface: :mod:`.interface` (compile, run, status, logs, stop, running a compiled
program or a person's statements), :mod:`.runs` (their runs in ``sqlml ui``) and
:mod:`.reports` (how a run's statements ended, for the summary and JUnit). No module outside
a backend's package imports it (``tests/test_backend_boundaries.py``)."""

from sqlml.backends.interface import RUN_COMMANDS, Backend, Program
from sqlml.backends.registry import (
    DEFAULT,
    backend,
    backends,
    by_target,
    default,
    register,
    unregister,
)

# The columns of ``sqlml status``, whatever the backend.
STATUS_COLUMNS = ("step", "state", "started", "finished", "message")

__all__ = [
    "DEFAULT",
    "RUN_COMMANDS",
    "STATUS_COLUMNS",
    "Backend",
    "Program",
    "backend",
    "backends",
    "by_target",
    "default",
    "register",
    "unregister",
]
