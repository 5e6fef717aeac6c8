"""The shell's engine: one open connection, statements run as ``sqlml -e`` runs them.

Each entry is parsed and checked as a program of its own (so errors point at its lines),
then its statements run one after another through :func:`sqlml.runtime.execute.execute`,
the function behind every workflow step, and print as ``sqlml -e`` prints them. They run
in a worker thread, each with a cancellation token of its own, so that Ctrl-C can cancel
the running one and ask the database to stop it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from sqlml import ir
from sqlml.errors import CheckError, ParseError, SqlmlError
from sqlml.repl.catalog import Catalog
from sqlml.runtime import cancel
from sqlml.runtime.datasource import DatasourceURL, connect
from sqlml.runtime.datasource.base import returns_rows
from sqlml.runtime.execute import execute
from sqlml.runtime.output import render
from sqlml.statements import kind_of

T = TypeVar("T")
SOURCE = "<input>"  # how an entry is named in error messages


class Cancelled(Exception):
    """The user stopped the running statement with Ctrl-C."""


class Session:
    """A connection to one datasource and what the shell shows of its results.

    ``show`` receives result tables and help (the shell pages them when they do not fit),
    ``say`` the messages: summaries, timings, errors (default: ``show``).
    """

    def __init__(
        self,
        url: str | None,
        fmt: str,
        show: Callable[[str], None],
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.fmt, self.show, self.say = fmt, show, say or show
        self.timing = True
        self.catalog = Catalog()
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="sqlml-statement")
        self.datasource = connect(url, Path.cwd())
        self.refresh()

    @property
    def url(self) -> DatasourceURL:
        """The datasource's URL; its text form hides the password."""
        return self.datasource.url

    def connect(self, url: str) -> None:
        """Switch to the datasource at ``url``; the current one stays if it cannot be opened."""
        datasource = connect(url, Path.cwd())
        self._call(self.datasource.close)
        self.datasource = datasource
        self.refresh()

    def refresh(self) -> None:
        """Read the tables, columns and models again (for completion and ``\\d``)."""
        self._call(self.catalog.refresh, self.datasource)

    def close(self) -> None:
        self._call(self.datasource.close)
        self._worker.shutdown()

    def run(self, text: str) -> None:
        """Parse, check and run the statements in ``text``; errors are shown, not raised."""
        from sqlml.grammar import parse
        from sqlml.semantics import analyze

        try:
            statements = analyze(parse(text), self.datasource.dialect)
        except SqlmlError as error:
            self.say(format_error(error, text))
            return
        changed = False
        try:
            for statement in statements:
                changed = changed or _changes_catalog(statement)
                started = time.perf_counter()
                token = cancel.Token()  # training and scoring stop at their next check
                outcome = self._call(
                    partial(execute, statement, self.datasource, token=token), token=token
                )
                if outcome.summary:
                    self.say(f"{outcome.summary}\n")
                if outcome.result is not None:
                    self.show(render(outcome.result, self.fmt))
                if self.timing:
                    self.say(f"Time: {_duration(time.perf_counter() - started)}\n")
        except Cancelled:
            self.say("cancelled\n")
        except SqlmlError as error:
            self.say(format_error(error, text))
        finally:
            if changed:
                self.refresh()

    def _call(self, function: Callable[..., T], *args: Any, token: cancel.Token | None = None) -> T:
        """``function(*args)`` in the worker thread; Ctrl-C cancels ``token`` (that of the
        statement ``function`` runs, if any: training stops between rounds or batches,
        nothing is committed) and interrupts the database, waits for the call to stop and
        raises :class:`Cancelled` (the result, if it still ended)."""
        future: Future[T] = self._worker.submit(function, *args)
        interrupted = False
        while True:
            try:
                result = future.result()
            except KeyboardInterrupt:
                if token is not None:
                    token.cancel("Ctrl-C")
                self.datasource.interrupt()
                if not interrupted:
                    self.say("cancelling...\n")
                interrupted = True
                continue
            except SqlmlError:
                if interrupted:
                    raise Cancelled from None
                raise
            return result


def _changes_catalog(statement: ir.Statement) -> bool:
    """Whether ``statement`` may create, change or drop a table or a model."""
    if isinstance(statement, ir.SqlStatement):
        return not returns_rows(statement.text)
    return kind_of(statement).effects.writes


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.3f} s"


def format_error(error: SqlmlError, text: str) -> str:
    """``error`` as sqlml reports it; a parse or check error also shows the line of ``text``
    it is on, with a caret under the column (other errors point at their statement)."""
    message = error.render(SOURCE) + "\n"
    lines = text.splitlines()
    pinpointed = isinstance(error, ParseError | CheckError)
    if not pinpointed or error.line is None or not 0 < error.line <= len(lines):
        return message
    number = str(error.line)
    caret = " " * (max(error.column or 1, 1) - 1) + "^"
    return f"{message}{number} | {lines[error.line - 1]}\n{' ' * len(number)} | {caret}\n"
