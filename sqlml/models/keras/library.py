"""TensorFlow and Keras, imported on first use, and quiet unless ``SQLML_VERBOSE`` is set.

TensorFlow's start-up logs (oneDNN, CUDA drivers, ``cuInit``), its retracing warnings and
AutoGraph's notes are no failures, yet show as errors (red boxes in a notebook). Its C++
libraries log during the import, before any setting of theirs applies, so the import runs
with the process's standard error captured: its log lines are dropped, anything else (another
step's output) is written back. ``TF_CPP_MIN_LOG_LEVEL`` keeps a value the user set.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from types import ModuleType

from sqlml import imports
from sqlml.errors import ModelError

VERBOSE_ENV = "SQLML_VERBOSE"

# A log line of TensorFlow's C++ libraries (absl's format), or absl's note before it.
_LOG_LINE = re.compile(
    rb"^(?:[IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] |WARNING: All log messages before absl::)"
)
_modules: tuple[ModuleType, ModuleType] | None = None


def verbose() -> bool:
    """Whether the user asked for TensorFlow's logs (``SQLML_VERBOSE=1``)."""
    return os.environ.get(VERBOSE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def keras() -> ModuleType:
    """The ``keras`` module (TensorFlow's backend); a :class:`ModelError` if not installed."""
    return _imported()[0]


def loaded() -> bool:
    """Whether TensorFlow and Keras are imported (the first import takes seconds)."""
    return _modules is not None


def tensorflow() -> ModuleType:
    """The ``tensorflow`` module; a :class:`ModelError` if not installed."""
    return _imported()[1]


def _imported() -> tuple[ModuleType, ModuleType]:
    global _modules
    if _modules is None:
        with imports.LOCK, imports.slow("TensorFlow"):  # no other import meanwhile
            if _modules is None:
                _modules = _import_loud() if verbose() else _import_quiet()
    return _modules


def _import_loud() -> tuple[ModuleType, ModuleType]:
    try:
        import keras
        import tensorflow
    except ImportError:
        raise ModelError(
            "Keras models need TensorFlow, which is not installed",
            hint="pip install 'sqlml[tensorflow]'",
        ) from None
    return keras, tensorflow


def _import_quiet() -> tuple[ModuleType, ModuleType]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # C++ errors too: cuInit's on CPUs
    with _stderr_without_logs():
        keras, tensorflow = _import_loud()
        tensorflow.config.list_physical_devices()  # the drivers' probes, logged once, here
    logging.getLogger("tensorflow").setLevel(logging.ERROR)  # retracing warnings
    tensorflow.autograph.set_verbosity(0, alsologtostdout=False)
    return keras, tensorflow


@contextlib.contextmanager
def _stderr_without_logs() -> Iterator[None]:
    """File descriptor 2 captured; on leaving, what was written goes back to it without
    TensorFlow's log lines (all of it when an exception leaves: it may explain why)."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no standard error to keep clean
        yield
        return
    with tempfile.TemporaryFile() as file:
        os.dup2(file.fileno(), 2)
        failed = True
        try:
            yield
            failed = False
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            file.seek(0)
            kept = [line for line in file if failed or not _LOG_LINE.match(line)]
            if kept:
                os.write(2, b"".join(kept))
