"""Imports made while statements run side by side, in worker threads.

Python imports a module once, and a thread importing a module that another thread is
importing waits for it. Two shortcuts break that promise:

- ``sys.modules`` holds a module from the moment its import starts: a module found there may
  be half made (``partially initialized module 'numpy.ma' has no attribute ...``).
  :func:`loaded` asks whether a module is loaded without that risk.
- Two threads importing packages that import each other (TensorFlow, scikit-learn, SciPy,
  XGBoost and pandas all do) can each wait for a module the other is making; Python breaks
  such a cycle by handing one of them a half-made module. :func:`load` imports one module at
  a time across the process, so no such cycle forms.

So everything sqlml imports by name at run time (a statement kind's handler, a model family's
trainer, a library, a datasource's driver) goes through :func:`load`, and a registry that
imports its built-in entries on first use fills itself holding :data:`LOCK` (it is never seen
half filled). Neither is used at a module's top level: a thread importing that module would
hold the module's own lock while waiting for this one.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

LOCK = threading.RLock()  # re-entrant: a module being loaded may load others
_slow: list[str] = []  # the slow libraries being imported now, outermost first


@contextmanager
def slow(library: str) -> Iterator[None]:
    """The body imports ``library`` (named for people: ``TensorFlow``), which takes seconds
    and cannot be interrupted: :func:`importing` names it meanwhile."""
    _slow.append(library)
    try:
        yield
    finally:
        _slow.remove(library)


def importing() -> str | None:
    """The slow library some thread is importing now, if any (a front end says why a
    cancelled statement has not stopped yet)."""
    return _slow[0] if _slow else None


def load(name: str) -> ModuleType:
    """Import the module ``name`` (if no thread has) and return it, while no other thread
    imports through this function."""
    with LOCK:
        return importlib.import_module(name)


def loaded(name: str) -> ModuleType | None:
    """The module ``name`` if its import has begun, in any thread, once that import is done;
    None if nothing imported it (it is not imported for the asking)."""
    if name not in sys.modules:
        return None
    return importlib.import_module(name)  # waits for a thread still importing it
