"""sqlml's own files on this machine: the input cache, step logs and the shell's history.

No result depends on them, so one that cannot be created, written or read (a full disk, a
file-size limit, a read-only or missing home folder) is skipped with a single warning line
per kind on standard error, and the work goes on.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

_warned: set[str] = set()
_lock = threading.Lock()


def warn_once(kind: str, message: str) -> None:
    """Print ``sqlml: warning: MESSAGE`` on standard error, the first time only per ``kind``
    ("cache", "logs", "history") in this process."""
    with _lock:
        if kind in _warned:
            return
        _warned.add(kind)
    print(f"sqlml: warning: {message}", file=sys.stderr, flush=True)


def reason(error: OSError) -> str:
    """An OSError in a few words: "No space left on device", "Permission denied"..."""
    return error.strerror or str(error)


def home() -> Path:
    """The user's home folder. Without one (no ``$HOME``, a user id the system does not know,
    as in some containers), a path under ``/dev/null``: nothing can be created there, so
    sqlml's files are skipped with a warning instead of landing in the working folder."""
    try:
        return Path.home()
    except RuntimeError:
        return Path(os.devnull) / "home"


def cache_folder() -> Path:
    """sqlml's cache folder: ``$SQLML_CACHE_DIR``, else ``~/.cache/sqlml``."""
    return Path(os.environ.get("SQLML_CACHE_DIR") or home() / ".cache" / "sqlml")


def default_run_dir() -> Path:
    """Where local runs keep their records and logs: ``$SQLML_RUN_DIR``, else ``runs`` in
    sqlml's cache folder (``$SQLML_CACHE_DIR``, else ``~/.cache/sqlml``)."""
    if os.environ.get("SQLML_RUN_DIR"):
        return Path(os.environ["SQLML_RUN_DIR"])
    return cache_folder() / "runs"
