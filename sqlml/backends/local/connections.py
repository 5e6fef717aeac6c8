"""The datasource connections of a run's workers: one per worker thread, opened on first use,
or the run's own connection for a datasource that takes one at a time."""

from __future__ import annotations

import threading
from pathlib import Path

from sqlml.datasources import Datasource, connect, parse_url, source_class


def one_at_a_time(url: str | None) -> bool:
    """Whether the datasource at ``url`` takes one connection at a time: an in-memory database
    (each connection would see a database of its own) or one writer at a time (SQLite)."""
    parsed = parse_url(url)
    return source_class(parsed).single_writer or parsed.path == ":memory:"


class Connections:
    """Each worker thread's connection to the datasource at ``url``, or ``shared`` for all
    (given for a datasource that takes one connection at a time)."""

    def __init__(self, url: str | None, base_dir: Path, shared: Datasource | None) -> None:
        self._url, self._base_dir, self._shared = url, base_dir, shared
        self._local = threading.local()
        self._opened: list[Datasource] = []
        self._lock = threading.Lock()

    def get(self) -> Datasource:
        """This thread's connection."""
        if self._shared is not None:
            return self._shared
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = connect(self._url, self._base_dir)
            self._local.connection = connection
            with self._lock:
                self._opened.append(connection)
        return connection

    def interrupt(self) -> None:
        """Stop the statements running on the connections, from a thread of its own (this may
        be called from a signal handler)."""
        with self._lock:
            connections = [self._shared] if self._shared is not None else list(self._opened)

        def interrupt() -> None:
            for connection in connections:
                connection.interrupt()

        threading.Thread(target=interrupt, daemon=True).start()

    def close(self) -> None:
        """Close the connections the workers opened (not the shared one)."""
        for connection in self._opened:
            connection.close()
