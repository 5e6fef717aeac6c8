"""The shell's engine: one open connection, statements run as ``sqlml -e`` runs them.

Each entry is parsed and checked as a program of its own (so errors point at its lines),
then runs as a workflow on the default backend, on the session's connection
(:meth:`sqlml.backends.Backend.run_statements`, as the notebook runs a cell): a
hyperparameter search gets its trials, the run is recorded, and each statement prints as
``sqlml -e`` prints it. The connection is used from one worker thread alone, so that Ctrl-C
can cancel the running statements and ask the database to stop them. That thread opens it
too: the shell has it opened there once its first prompt is drawn, and what comes later
queues behind the open.
"""

from __future__ import annotations

import copy
import re
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO, TypeVar

from sqlml import imports, ir
from sqlml.backends import DEFAULT, backend
from sqlml.backends.reports import StatementEnd
from sqlml.datasources import (
    Datasource,
    DatasourceURL,
    ResultSet,
    connect,
    parse_url,
    source_class,
)
from sqlml.datasources.base import returns_rows
from sqlml.errors import SqlmlError
from sqlml.interrupted import wait_cancelling
from sqlml.repl.catalog import Catalog
from sqlml.repl.expanded import render_expanded, too_wide
from sqlml.repl.shell_variables import substitute
from sqlml.runtime import cancel
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.output import render
from sqlml.runtime.progress import Sink
from sqlml.statements import kind_of

T = TypeVar("T")
SOURCE = "<input>"  # how an entry is named in error messages
# A standard SQL statement that destroys data: the shell asks before it runs one.
_DESTRUCTIVE = re.compile(
    r"(?:\s+|--[^\n]*|/\*.*?\*/)*(DROP|TRUNCATE)\b", re.DOTALL | re.IGNORECASE
)


class Cancelled(Exception):
    """The user stopped the running statement with Ctrl-C."""


class Session:
    """A connection to one datasource and what the shell shows of its results.

    ``show`` receives result tables and help (the shell pages them when they do not fit),
    ``say`` the messages: summaries, timings (default: ``show``), ``warn`` the errors
    (default: ``say``). The settings the backslash commands change: ``fmt`` (``\\format``),
    ``expanded`` (``\\x``: on, off or auto), ``timing``, ``output`` (``\\o``: the file
    results and summaries go to instead), ``confirming`` (``\\confirm``: whether ``ask``, if
    given, is asked before statements that drop or truncate), ``pending`` (text for the next
    prompt), ``variables`` (``\\set``: each ``:name`` of an entry is replaced by its value).
    ``sink`` shows the progress of long statements (None: none is shown).

    The URL is read at once (a malformed one raises here); the datasource is opened and its
    catalog read in the worker thread, and the constructor waits for that unless
    ``open_later``: then :meth:`open` starts it, and the first use of ``datasource`` waits.
    """

    def __init__(
        self,
        url: str | None,
        fmt: str,
        show: Callable[[str], None],
        say: Callable[[str], None] | None = None,
        warn: Callable[[str], None] | None = None,
        sink: Sink | None = None,
        open_later: bool = False,
    ) -> None:
        self.fmt, self.show, self.say = fmt, show, say or show
        self.sink = sink
        self.warn = warn or self.say
        self.timing = True
        self.expanded = "off"
        self.output: TextIO | None = None
        self.confirming = False
        self.ask: Callable[[str], bool] | None = None
        self.pending = ""
        self.last_entry = ""  # the last statements run, which \\e, \\g and \\watch run
        self.variables: dict[str, str] = {}  # \\set's, replacing :name in entries
        self._started = 0.0  # when the statement running now started
        self._interrupted = False  # whether Ctrl-C was pressed while statements run
        self.catalog = Catalog()
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="sqlml-statement")
        self._url = parse_url(url)
        source_class(self._url)  # an unknown scheme fails here too, not in the worker
        self._datasource: Datasource | None = None  # set once open
        self._opening: Future[Datasource] | None = None
        if not open_later:
            self.wait_open()

    def open(self) -> Future[Datasource]:
        """Start opening the datasource and reading its catalog in the worker thread (once:
        a second call returns the same future); the calls that follow queue behind it."""
        if self._opening is None:
            self._opening = self._worker.submit(self._open)
        return self._opening

    def _open(self) -> Datasource:
        datasource = connect(self._url, Path.cwd())
        try:
            self.catalog.refresh(datasource)
        except BaseException:
            datasource.close()
            raise
        self._datasource = datasource
        return datasource

    def wait_open(self) -> Datasource:
        """The open datasource: waits for the open under way (starting it if :meth:`open`
        was not called); raises the DatasourceError of an open that failed."""
        if self._datasource is not None:
            return self._datasource
        return self.open().result()

    @property
    def datasource(self) -> Datasource:
        """The open datasource (see :meth:`wait_open`)."""
        return self.wait_open()

    @property
    def url(self) -> DatasourceURL:
        """The datasource's URL, known before it is open; its text form hides the password."""
        return self._url

    @property
    def database(self) -> str:
        """The database's name, for the prompt: a server's database, a file's name without
        its extension, or ``memory``."""
        url = self.url
        if url.host:
            return url.path
        return "memory" if url.path == ":memory:" else Path(url.path).stem

    def connect(self, url: str) -> None:
        """Switch to the datasource at ``url``; the current one stays if it cannot be opened."""
        datasource = connect(url, Path.cwd())
        self._call(self._release)
        self._datasource, self._url = datasource, datasource.url
        self.refresh()

    def refresh(self) -> None:
        """Read the tables, columns and models again (for completion and ``\\d``)."""
        self._call(self.catalog.refresh, self.datasource)

    def query(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        """Run one statement of the shell's own (a count for ``\\d+``...) on the connection;
        its rows if it is a query."""
        return self._call(self.datasource.execute, sql, params)

    def close(self) -> None:
        self.set_output(None)
        self._call(self._release)
        self._worker.shutdown()

    def _release(self) -> None:
        """Close the datasource if it was opened (in the worker thread: after the open)."""
        if self._datasource is not None:
            self._datasource.close()

    def set_output(self, output: TextIO | None) -> None:
        """Send results and summaries to ``output`` (None: back to the screen)."""
        if self.output is not None:
            self.output.close()
        self.output = output

    def result(self, text: str, summary: bool = False) -> None:
        """Show a result table (a ``summary`` line is said: never paged), or write either to
        the ``\\o`` file."""
        if self.output is not None:
            self.output.write(text)
            self.output.flush()
        else:
            (self.say if summary else self.show)(text)

    def render(self, result: ResultSet) -> str:
        """``result`` in the session's format; a table as records when ``expanded`` says so."""
        text = render(result, self.fmt)
        if self.fmt != "table" or self.expanded == "off":
            return text
        if self.expanded == "on" or too_wide(text, shutil.get_terminal_size().columns):
            return render_expanded(result)
        return text

    def run(self, text: str, source: str = SOURCE, first_line: int = 1) -> bool:
        """Parse, check and run the statements in ``text`` (which starts at line
        ``first_line`` of ``source``); errors are shown, not raised. Whether none failed."""
        from sqlml.grammar import parse
        from sqlml.semantics import analyze

        self.last_entry = text
        dialect = self.datasource.dialect
        written, shifts = substitute(text, self.variables, dialect)

        def told(error: SqlmlError) -> str:  # at its place in the text as typed
            if shifts and error.line is not None:
                from sqlml.repl.variables import moved

                error = copy.copy(error)
                error.line, error.column = moved(
                    written, text, shifts, error.line, error.column or 1
                )
            return format_error(error, text, source, first_line)

        try:
            statements = analyze(parse(written), dialect)
        except SqlmlError as error:
            self.warn(told(error))
            return False
        destructive = [s.text.strip() for s in statements if _destroys(s)]
        if destructive and self.confirming and self.ask and not self.ask("\n".join(destructive)):
            self.say("not run\n")
            return True
        self._started = time.perf_counter()

        def done(end: StatementEnd) -> None:
            diagnostic = end.verdict.besides_cancellation  # a cancellation is said below
            if diagnostic is not None:
                self.warn(told(diagnostic))
            self._done(end.outcome)

        try:
            result = backend(DEFAULT).run_statements(
                statements,
                "repl",
                self._worker,
                datasource=self.datasource,
                on_done=done,
                sink=self.sink,
                on_cancel=self._cancelling,
            )
        finally:
            self._interrupted = False
        if isinstance(result.error, cancel.Cancelled):
            self.say("cancelled\n")
        if any(_changes_catalog(statement) for statement in statements):
            self.refresh()  # after the outcome is told: the prompt waits for it, not the user
        return result.error is None

    def _done(self, outcome: Outcome | None) -> None:
        """Show the outcome of a statement that succeeded and how long it took (called as
        each statement ends; None: it did not succeed)."""
        if outcome is not None:
            if outcome.summary:
                self.result(f"{outcome.summary}\n", summary=True)
            if outcome.result is not None:
                self.result(self.render(outcome.result))
            if self.timing:
                self.say(f"Time: {_duration(time.perf_counter() - self._started)}\n")
        self._started = time.perf_counter()

    def _cancelling(self) -> None:
        """Ctrl-C while statements run: said once, with what it waits for if a library that
        cannot be interrupted is loading."""
        if not self._interrupted:
            library = imports.importing()
            waits = f" (once {library} has loaded, which cannot be interrupted)" if library else ""
            self.say(f"cancelling...{waits}\n")
        self._interrupted = True

    def _call(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in the worker thread, which alone uses the connection; Ctrl-C
        interrupts the database and raises :class:`Cancelled` once the call has stopped."""
        interrupted = False

        def interrupt() -> None:  # never waits for an open under way: it cannot be stopped
            nonlocal interrupted
            interrupted = True
            if self._datasource is not None:
                self._datasource.interrupt()

        try:
            return wait_cancelling(self._worker.submit(function, *args), interrupt)
        except SqlmlError:
            if interrupted:
                raise Cancelled from None
            raise


def _changes_catalog(statement: ir.Statement) -> bool:
    """Whether ``statement`` may create, change or drop a table or a model."""
    if isinstance(statement, ir.SqlStatement):
        return not returns_rows(statement.text)
    return kind_of(statement).effects.writes


def _destroys(statement: ir.Statement) -> bool:
    """Whether ``statement`` drops a model, or is a DROP or TRUNCATE of standard SQL."""
    if isinstance(statement, ir.SqlStatement):
        return _DESTRUCTIVE.match(statement.text) is not None
    return statement.kind == "drop_model"


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.3f} s"


def format_error(error: SqlmlError, text: str, source: str = SOURCE, first_line: int = 1) -> str:
    """``error`` as sqlml reports it, its line counted from ``first_line`` of ``source``; an
    error that points at the mistake itself (a parse or check error, a database's that says
    where) also shows the line of ``text`` it is on, with a caret under the column (other
    errors point at their statement)."""
    shifted = copy.copy(error)
    if error.line is not None:
        shifted.line = error.line + first_line - 1
    message = shifted.render(source) + "\n"
    lines = text.splitlines()
    if not error.pinpointed or error.line is None or not 0 < error.line <= len(lines):
        return message
    number = str(shifted.line)
    caret = " " * (max(error.column or 1, 1) - 1) + "^"
    return f"{message}{number} | {lines[error.line - 1]}\n{' ' * len(number)} | {caret}\n"
