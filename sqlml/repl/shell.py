"""``sqlml repl``: the interactive shell, on prompt_toolkit; a script piped on stdin runs
without prompts."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterable

from prompt_toolkit import PromptSession
from prompt_toolkit.filters import Condition
from prompt_toolkit.lexers import PygmentsLexer

from sqlml import __version__
from sqlml.repl.completion import SqlmlCompleter
from sqlml.repl.history import open_history
from sqlml.repl.lexer import SqlmlLexer
from sqlml.repl.meta_commands import Quit, run_entry
from sqlml.repl.pager import page
from sqlml.repl.session import Cancelled, Session
from sqlml.repl.statements import entries, is_complete
from sqlml.runtime import progress

SCRIPT = "<stdin>"  # how a piped script is named in error messages


def run_shell(url: str | None, fmt: str = "table") -> int:
    """The shell on a terminal; else run the script on stdin. The exit status."""
    if not sys.stdin.isatty():
        session = Session(url, fmt, page, say=_say, warn=_warn, sink=progress.terminal(sys.stderr))
        session.timing = False
        try:
            return run_script(sys.stdin, session)
        finally:
            session.close()
    return _interactive(url, fmt)


def run_script(lines: Iterable[str], session: Session, source: str = SCRIPT) -> int:
    """Run the entries of ``lines`` up to the first that fails (then 1) or ``\\q`` (then 0)."""
    try:
        for first, entry in entries(lines):
            if not run_entry(entry, session, source, first):
                return 1
    except Quit:
        pass
    return 0


def _interactive(url: str | None, fmt: str) -> int:
    """Read statements and commands until ``\\q``, ``exit`` or Ctrl-D; the exit status."""
    session = Session(url, fmt, page, say=_say, sink=progress.terminal(sys.stderr))
    session.confirming, session.ask = True, _ask
    prompt: PromptSession[str] = PromptSession(
        lambda: f"sqlml [{session.database}]> ",
        # Enter runs a complete entry; while Ctrl-R searches, the entry is still the main buffer.
        multiline=Condition(lambda: not is_complete(prompt.default_buffer.text)),
        prompt_continuation=lambda width, _line, _wrap: "...> ".rjust(width),
        lexer=PygmentsLexer(SqlmlLexer),
        completer=SqlmlCompleter(session.catalog),  # fuzzy itself, prefix matches first
        history=open_history(),
        complete_while_typing=True,  # as pgcli; nothing is preselected: Enter runs as typed
        complete_in_thread=True,  # a catalog of thousands of columns never holds up typing
        enable_open_in_editor=True,
    )
    print(f"sqlml {__version__} on {session.url}. Statements end with ';'; \\? for help.")
    try:
        while True:
            try:
                text = prompt.prompt(default=session.pending)
            except KeyboardInterrupt:  # Ctrl-C at the prompt: a fresh line
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
            except Exception:  # a bug in sqlml: show it, and keep the session
                print("internal error (please report it):", file=sys.stderr)
                traceback.print_exc()
    finally:
        session.close()
    return 0


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
    """An error of a piped script: on stderr."""
    sys.stderr.write(text)
    sys.stderr.flush()
