"""Ctrl-C while sqlml loads: one line and status 130, not a ``KeyboardInterrupt`` traceback.

Python turns SIGINT into ``KeyboardInterrupt`` from its start; one raised while sqlml's
modules load would print a traceback. The ``sqlml`` command and compiled workflow programs
load them in :func:`loading`, and say :data:`SAID` of a ``KeyboardInterrupt`` that reaches
them later (outside a run, which hears Ctrl-C itself); a front end waiting for a call in
another thread hears it with :func:`wait_cancelling`. This module imports nothing of sqlml's.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future

INTERRUPTED = 130  # as shells report SIGINT
SAID = "sqlml: interrupted\n"
T = TypeVar("T")


def _quit(signum: int, frame: FrameType | None) -> None:
    os.write(2, SAID.encode())
    os._exit(INTERRUPTED)


@contextmanager
def loading() -> Iterator[None]:
    """In the body (imports), SIGINT ends the process at once: one line, status 130. Only in
    the main thread, and only where SIGINT raises ``KeyboardInterrupt`` (not ignored)."""
    quiet = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if quiet:
        signal.signal(signal.SIGINT, _quit)
    try:
        yield
    finally:
        if quiet:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def wait_cancelling(
    future: Future[T], cancel: Callable[[], None], on_cancel: Callable[[], None] | None = None
) -> T:
    """``future``'s result; each Ctrl-C meanwhile calls ``cancel`` (then ``on_cancel``) and
    the wait goes on until the call has stopped."""
    while True:
        try:
            return future.result()
        except KeyboardInterrupt:
            cancel()
            if on_cancel is not None:
                on_cancel()
