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

A library may import, at its own import, optional packages that sqlml never uses through it
(XGBoost's compat module imports scikit-learn, and through it pandas, for XGBoost's
scikit-learn API): :func:`load` can hide them from that module alone while it imports, in
sqlml's own processes (:func:`hide_unused`).

So everything sqlml imports by name at run time (a statement kind's handler, a model family's
trainer, a library, a datasource's driver) goes through :func:`load`, and a registry that
imports its built-in entries on first use fills itself holding :data:`LOCK` (it is never seen
half filled). Neither is used at a module's top level: a thread importing that module would
hold the module's own lock while waiting for this one.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import FrameType, ModuleType

LOCK = threading.RLock()  # re-entrant: a module being loaded may load others
_slow: list[str] = []  # the slow libraries being imported now, outermost first
_hiding = False  # whether load hides what it is asked to: set by hide_unused


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


def hide_unused() -> None:
    """Let :func:`load` hide packages: called by sqlml's own programs (the ``sqlml`` command,
    a step's process), whose libraries no user's code shares. Elsewhere (a notebook's
    kernel, with the magic) libraries load whole: the user may use, say, XGBoost's
    scikit-learn API next, which would stay without scikit-learn."""
    global _hiding
    _hiding = True


def load(name: str, hiding: Mapping[str, tuple[str, ...]] | None = None) -> ModuleType:
    """Import the module ``name`` (if no thread has) and return it, while no other thread
    imports through this function.

    ``hiding`` maps a module to packages it sees as absent (``ModuleNotFoundError``) while
    this import runs, once :func:`hide_unused` allowed it: only the imports that module itself
    makes, in this thread, and only of packages not imported yet. Once done, they import as
    usual again (the module keeps what it concluded: it must work without them)."""
    with LOCK:
        if not (hiding and _hiding):
            return importlib.import_module(name)
        finder = _Hiding(hiding)
        # New lists, not the list changed in place: a thread finding a module goes through
        # the list it read, which a removal would shift under it.
        sys.meta_path = [finder, *sys.meta_path]
        try:
            return importlib.import_module(name)
        finally:
            sys.meta_path = [known for known in sys.meta_path if known is not finder]


class _Hiding(importlib.abc.MetaPathFinder):
    """Says that the packages :func:`load` hides from a module do not exist, when that
    module imports them."""

    def __init__(self, hiding: Mapping[str, tuple[str, ...]]) -> None:
        self._hiding = hiding

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        hidden = self._hiding.get(_importer(sys._getframe(1)) or "", ())
        package = fullname.partition(".")[0]
        if package in hidden and package not in sys.modules:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


def _importer(frame: FrameType | None) -> str | None:
    """The module whose code is importing, seen from a frame of Python's import system."""
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not module.lstrip("_").startswith(("frozen_importlib", "importlib")):
            return module
        frame = frame.f_back
    return None


def loaded(name: str) -> ModuleType | None:
    """The module ``name`` if its import has begun, in any thread, once that import is done;
    None if nothing imported it (it is not imported for the asking)."""
    if name not in sys.modules:
        return None
    return importlib.import_module(name)  # waits for a thread still importing it
