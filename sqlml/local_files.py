"""sqlml's own files on this machine: the input cache, step logs, the shell's history and the
tracebacks of bugs met outside any step.

No result depends on them, so one that cannot be created, written or read (a full disk, a
file-size limit, a read-only or missing home folder) is skipped with a single warning line
per kind on standard error, and the work goes on.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from sqlml.errors import InternalError

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


def keep_traceback(details: str) -> Path | None:
    """Write ``details``, the traceback of a bug met outside any step's log, to a file of its
    own in the cache folder's ``errors``: its path (None, after a warning, when it cannot be
    written)."""
    folder = cache_folder() / "errors"
    path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as file:
            file.write(details)
    except OSError as error:
        warn_once("errors", f"a traceback is not kept: {path} cannot be written ({reason(error)})")
        return None
    return path


def internal_error(error: BaseException, where: str) -> InternalError:
    """``error``, a bug met ``where`` (outside any step's log), as the one paragraph a user
    sees: an :class:`InternalError` whose traceback is kept in a file its hint names."""
    internal = InternalError.of(error, where)
    path = keep_traceback(internal.details)
    return internal if path is None else internal.kept_in(path)
