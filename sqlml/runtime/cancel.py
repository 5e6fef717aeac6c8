"""Cooperative cancellation of a running statement: timeouts and Ctrl-C.

Whoever runs a statement gives it a :class:`Token` (:func:`scope`); a timer or a signal
handler cancels the token from another thread. The long loops check it (:func:`check`):
XGBoost between boosting rounds, Keras between batches, scoring and writing between
batches; a model save and a table swap check it just before they commit. A cancelled
statement raises :class:`Cancelled` at the next check and commits nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from sqlml.errors import SqlmlError


class Cancelled(SqlmlError):
    """The statement was cancelled (a timeout, Ctrl-C) before it committed anything."""


class Token:
    """Set once, from any thread, with the reason."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason = ""

    def cancel(self, reason: str) -> None:
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


_current: ContextVar[Token | None] = ContextVar("sqlml_cancel_token", default=None)


@contextmanager
def scope(token: Token) -> Iterator[Token]:
    """Statements run in the body (in this thread) stop when ``token`` is cancelled."""
    reset = _current.set(token)
    try:
        yield token
    finally:
        _current.reset(reset)


def current() -> Token | None:
    """The token of the statement running in this thread, if any."""
    return _current.get()


def check() -> None:
    """Raise :class:`Cancelled` if the running statement was cancelled."""
    token = _current.get()
    if token is not None and token.cancelled:
        raise Cancelled(
            f"the statement was cancelled ({token.reason}); nothing it did was committed",
            hint="run it again (sqlml run --resume RUN runs the cancelled steps again)",
        )
