"""The shell's persistent history: a file under the user's data folder.

A history that cannot be read or written (a read-only or missing home folder, a full disk)
is kept for the session only, with one warning.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.history import FileHistory

from sqlml.datasources.url import redacted
from sqlml.local_files import home, reason, warn_once

_URL = re.compile(r"\S+://\S+")  # as in \c mysql://user:password@host/db


def history_file() -> Path:
    """``$SQLML_HISTORY``, else ``$XDG_DATA_HOME/sqlml/history`` (``~/.local/share/sqlml``)."""
    if os.environ.get("SQLML_HISTORY"):
        return Path(os.environ["SQLML_HISTORY"])
    data = os.environ.get("XDG_DATA_HOME") or home() / ".local" / "share"
    return Path(data) / "sqlml" / "history"


class RedactedHistory(FileHistory):
    """A :class:`FileHistory` that stores URLs' passwords as ``***``, and that goes on without
    its file when the file cannot be read or written."""

    def load_history_strings(self) -> Iterable[str]:
        try:
            return super().load_history_strings()
        except OSError as error:
            _warn(self.filename, error)
            return []

    def store_string(self, string: str) -> None:
        try:
            super().store_string(_URL.sub(lambda url: redacted(url.group()), string))
        except OSError as error:
            _warn(self.filename, error)


def open_history() -> RedactedHistory:
    path = history_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        _warn(path, error)
    return RedactedHistory(str(path))


def _warn(path: object, error: OSError) -> None:
    warn_once("history", f"the shell's history is not kept: {path} ({reason(error)})")
