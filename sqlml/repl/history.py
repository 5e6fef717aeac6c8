"""The shell's persistent history: a file under the user's data folder."""

from __future__ import annotations

import os
import re
from pathlib import Path

from prompt_toolkit.history import FileHistory

from sqlml.runtime.datasource.url import redacted

_URL = re.compile(r"\S+://\S+")  # as in \c mysql://user:password@host/db


def history_file() -> Path:
    """``$SQLML_HISTORY``, else ``$XDG_DATA_HOME/sqlml/history`` (``~/.local/share/sqlml``)."""
    if os.environ.get("SQLML_HISTORY"):
        return Path(os.environ["SQLML_HISTORY"])
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "sqlml" / "history"


class RedactedHistory(FileHistory):
    """A :class:`FileHistory` that stores URLs' passwords as ``***``."""

    def store_string(self, string: str) -> None:
        super().store_string(_URL.sub(lambda url: redacted(url.group()), string))


def open_history() -> RedactedHistory:
    path = history_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    return RedactedHistory(str(path))
