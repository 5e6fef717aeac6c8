"""``sqlml repl``: the interactive shell, on prompt_toolkit; a script piped on stdin runs
without prompts. The shell runs its startup file (``~/.sqlmlrc``) before the first prompt.

The first prompt comes before the datasource is open: once it is drawn, the session opens
it in its worker thread and the shell loads its lexer and completer in another. An entry
typed meanwhile waits for the open; an open that fails ends the shell with its error.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, wait
from contextlib import suppress
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.lexers import DynamicLexer, Lexer

from sqlml import __version__
from sqlml.datasources import Datasource
from sqlml.local_files import home, internal_error
from sqlml.repl.catalog import Catalog
from sqlml.repl.history import open_history
from sqlml.repl.meta_commands import Quit, run_entry
from sqlml.repl.pager import page
from sqlml.repl.session import Cancelled, Session
from sqlml.repl.statements import entries, is_complete
from sqlml.runtime import progress

SCRIPT = "<stdin>"  # how a piped script is named in error messages


def run_shell(url: str | None, fmt: str = "table", quiet: bool = False) -> int:
    """The shell on a terminal; else run the script on stdin: its results alone on stdout
    (see :class:`_Results`), its messages (summaries, the backslash commands' replies) and
    errors on stderr. ``quiet``: no messages (nor, on a terminal, the banner), results and
    errors only. The exit status."""
    if not sys.stdin.isatty():
        results = _Results()
        say = _silent if quiet else _warn
        session = Session(
            url, fmt, results.show, say=say, warn=_warn, sink=progress.terminal(sys.stderr)
        )
        results.format = lambda: session.fmt
        session.timing = False
        try:
            return run_script(sys.stdin, session)
        finally:
            session.close()
    return _interactive(url, fmt, quiet)


def run_script(lines: Iterable[str], session: Session, source: str = SCRIPT) -> int:
    """Run the entries of ``lines`` up to the first that fails (then 1) or ``\\q`` (then 0)."""
    try:
        for first, entry in entries(lines):
            if not run_entry(entry, session, source, first):
                return 1
    except Quit:
        pass
    return 0


def _interactive(url: str | None, fmt: str, quiet: bool = False) -> int:
    """Read statements and commands until ``\\q``, ``exit`` or Ctrl-D; the exit status."""
    say = _silent if quiet else _say
    sink = progress.terminal(sys.stderr)
    session = Session(url, fmt, page, say=say, warn=_say, sink=sink, open_later=True)
    session.confirming, session.ask = True, _ask
    helpers = _Helpers(session.catalog, lambda: in_prompt_loop(prompt.app.invalidate))
    prompt: PromptSession[str] = PromptSession(
        lambda: f"sqlml [{session.database}]> ",
        # Enter runs a complete entry; while Ctrl-R searches, the entry is still the main buffer.
        multiline=Condition(lambda: not is_complete(prompt.default_buffer.text)),
        prompt_continuation=lambda width, _line, _wrap: "...> ".rjust(width),
        lexer=DynamicLexer(lambda: helpers.lexer),
        completer=helpers,
        history=open_history(),
        complete_while_typing=True,  # as pgcli; nothing is preselected: Enter runs as typed
        complete_in_thread=True,  # a catalog of thousands of columns never holds up typing
        enable_open_in_editor=True,
    )

    opening: Future[Datasource] | None = None  # started once the first prompt is drawn

    def end_if_failed() -> None:  # in the prompt's event loop: a prompt that cannot work ends
        error = opening.exception() if opening is not None and opening.done() else None
        if error is not None and prompt.app.future and not prompt.app.future.done():
            prompt.app.exit(exception=error)

    def in_prompt_loop(function: Callable[[], None]) -> None:
        """Call ``function`` in the prompt's event loop, from another thread; nothing once
        the prompt has ended (the next one draws afresh, and pre_run sees to a failed open).
        prompt_toolkit's own ``invalidate`` from another thread may fail as the prompt ends."""
        loop = prompt.app.loop
        if loop is not None:
            with suppress(RuntimeError):  # its loop closed meanwhile
                loop.call_soon_threadsafe(function)

    def opened(done: Future[Datasource]) -> None:  # in the worker thread, as the open ends
        if done.exception() is not None:
            in_prompt_loop(end_if_failed)

    def start(_: object) -> None:  # once the first prompt is drawn: the GIL is free
        nonlocal opening
        prompt.app.after_render -= start
        opening = session.open()
        opening.add_done_callback(opened)
        helpers.load(opening)

    prompt.app.after_render += start
    if not quiet:
        print(f"sqlml {__version__} on {session.url}. Statements end with ';'; \\? for help.")
    try:
        _run_startup_file(session)
    except Quit:
        session.close()
        return 0
    try:
        while True:
            try:
                text = prompt.prompt(default=session.pending, pre_run=end_if_failed)
                session.wait_open()  # an entry typed at once waits; a failed open ends the shell
            except KeyboardInterrupt:  # Ctrl-C at the prompt (or while it waits): a fresh line
                continue
            except EOFError:  # Ctrl-D
                break
            finally:
                session.pending = ""
            try:
                run_entry(text, session)
            except Quit:
                break
            except (Cancelled, KeyboardInterrupt):
                print("cancelled")
            except Exception as error:  # a bug in sqlml: say so, and keep the session
                print(internal_error(error, "the shell").render("sqlml"), file=sys.stderr)
    finally:
        session.close()
    return 0


def startup_file() -> Path:
    """``$SQLMLRC``, else ``~/.sqlmlrc``: what the shell runs before its first prompt."""
    return Path(os.environ.get("SQLMLRC") or home() / ".sqlmlrc").expanduser()


def _run_startup_file(session: Session) -> None:
    """Run the startup file's entries, if it exists, as psql runs ``.psqlrc``: each one, an
    error said with the file's name and line (the others still run)."""
    path = startup_file()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as error:
        print(f"sqlml: cannot read {path}: {error}", file=sys.stderr)
        return
    for first, entry in entries(text.splitlines(keepends=True)):
        run_entry(entry, session, str(path), first)


class _Helpers(Completer):
    """The shell's lexer and completer (the grammar's keywords, every estimator), loaded in a
    thread of their own once the first prompt is drawn, so that it does not wait for them:
    text is plain until they are, and a completion asked before waits for them, and for the
    datasource's open, which reads the catalog (completions run in a thread)."""

    def __init__(self, catalog: Catalog, redraw: Callable[[], None]) -> None:
        self.lexer: Lexer | None = None
        self._completer: Completer | None = None
        self._catalog, self._redraw, self._loaded = catalog, redraw, threading.Event()
        self._opening: Future[Datasource] | None = None

    def load(self, opening: Future[Datasource]) -> None:
        """Load them; ``opening``: the datasource's open, which completions wait for."""
        self._opening = opening
        threading.Thread(target=self._load, daemon=True).start()

    def _load(self) -> None:
        from prompt_toolkit.lexers import PygmentsLexer

        from sqlml.repl.completion import SqlmlCompleter
        from sqlml.repl.lexer import SqlmlLexer

        try:
            self.lexer = PygmentsLexer(SqlmlLexer)
            self._completer = SqlmlCompleter(self._catalog)  # fuzzy, prefix matches first
        finally:  # a failure shows in the shell as a missing completion, never as a hang
            self._loaded.set()
        self._redraw()  # highlights what was typed meanwhile

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        self._loaded.wait()
        if self._opening is not None:
            wait([self._opening])  # the catalog's tables and columns; a failed open has none
        return self._completer.get_completions(document, event) if self._completer else ()


def _ask(statements: str) -> bool:
    """Whether the user answers yes to running ``statements``, which destroy data."""
    print(f"This drops or truncates for good:\n  {statements.replace(chr(10), chr(10) + '  ')}")
    try:
        return input("Run it? [y/N] ").strip().lower() in ("y", "yes")
    except (EOFError, KeyboardInterrupt):
        print()
        return False


def _say(text: str) -> None:
    """A message (a summary, a timing): printed as it is, never paged."""
    sys.stdout.write(text)
    sys.stdout.flush()


def _warn(text: str) -> None:
    """An error or a message of a piped script: on stderr."""
    sys.stderr.write(text)
    sys.stderr.flush()


def _silent(text: str) -> None:
    """A message left unsaid (``--quiet``)."""


class _Results:
    """Where a piped script's results go: stdout, each CSV table after the first after an
    empty line, as ``sqlml run`` writes them (a CSV reader splits the stream at the empty
    records); ``format`` gives the session's format at the time."""

    def __init__(self) -> None:
        self.format: Callable[[], str] = lambda: "table"
        self._shown = False

    def show(self, text: str) -> None:
        if self._shown and self.format() == "csv":
            sys.stdout.write("\n")
        sys.stdout.write(text)
        sys.stdout.flush()
        self._shown = True
