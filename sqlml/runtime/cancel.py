"""Cooperative cancellation of a running statement: timeouts and Ctrl-C.

Whoever runs a statement gives it a :class:`Token` (``context.token``, passed down to the
code that checks it); a timer or a signal handler cancels the token from another thread.
The long loops check it (:meth:`Token.check`): XGBoost between boosting rounds, Keras
between batches, scoring and writing between batches; a model save and a table swap check
it just before they commit. A cancelled statement raises :class:`Cancelled` at the next
check and commits nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlml.errors import SqlmlError

INTERRUPT_AGAIN = (0.1, 2.0)  # seconds to the first check of the token, and at most between two


class Cancelled(SqlmlError):
    """The statement was cancelled (a timeout, Ctrl-C) before it committed anything."""


class Token:
    """Set once, from any thread, with the reason; also cancelled when its parent is (a
    step's token has the run's as parent)."""

    def __init__(self, parent: Token | None = None) -> None:
        self._event = threading.Event()
        self._reason = ""
        self.parent = parent

    def cancel(self, reason: str) -> None:
        if not self._event.is_set():
            self._reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        """Whether this token (not only its parent) was cancelled."""
        return self._event.is_set()

    @property
    def stopped(self) -> bool:
        """Whether this token or its parent was cancelled."""
        return self.cancelled or (self.parent is not None and self.parent.stopped)

    @property
    def reason(self) -> str:
        if self.cancelled or self.parent is None:
            return self._reason
        return self.parent.reason

    def check(self) -> None:
        """Raise :class:`Cancelled` if this token or its parent was cancelled."""
        if self.stopped:
            raise stopped_error(self)


def stopped_error(token: Token) -> Cancelled:
    """The error of a statement stopped by ``token``."""
    return Cancelled(
        f"the statement was cancelled ({token.reason}); nothing it did was committed",
        hint="run it again (sqlml run --resume RUN runs the cancelled steps again)",
    )


@contextmanager
def interrupted_once_stopped(token: Token, interrupt: Callable[[], None]) -> Iterator[None]:
    """The body runs one statement in the database: once ``token`` is stopped, ``interrupt``
    asks the database to stop it, again and again (less and less often) until the body ends.

    Whoever cancels interrupts the running statement at once, but an interrupt that comes
    before the database has started the statement is lost (DuckDB, SQLite: the statement then
    runs to its end); the interrupts that follow stop it."""
    done = threading.Event()

    def watch() -> None:
        pause, longest = INTERRUPT_AGAIN
        while not done.wait(pause):
            if token.stopped:
                interrupt()
                pause = min(2 * pause, longest)

    watcher = threading.Thread(target=watch, name="sqlml-interrupt", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()  # no interrupt meets the connection's next statement
