"""``sqlml repl``: the interactive shell, on prompt_toolkit."""

from __future__ import annotations

import sys
import traceback

from prompt_toolkit import PromptSession
from prompt_toolkit.filters import Condition
from prompt_toolkit.lexers import PygmentsLexer

from sqlml import __version__
from sqlml.repl.completion import SqlmlCompleter
from sqlml.repl.history import open_history
from sqlml.repl.lexer import SqlmlLexer
from sqlml.repl.meta_commands import Quit, run_meta_command
from sqlml.repl.pager import page
from sqlml.repl.session import Cancelled, Session
from sqlml.repl.statements import is_complete, is_meta_command

PROMPT = "sqlml> "


def run_shell(url: str | None, fmt: str = "table") -> int:
    """Read statements and backslash commands until ``\\q`` or Ctrl-D; the exit status."""
    session = Session(url, fmt, page, say=_say)
    prompt: PromptSession[str] = PromptSession(
        PROMPT,
        # Enter runs a complete entry; while Ctrl-R searches, the entry is still the main buffer.
        multiline=Condition(lambda: not is_complete(prompt.default_buffer.text)),
        prompt_continuation=lambda width, _line, _wrap: "...> ".rjust(width),
        lexer=PygmentsLexer(SqlmlLexer),
        completer=SqlmlCompleter(session.catalog),
        history=open_history(),
        complete_while_typing=False,
    )
    print(f"sqlml {__version__} on {session.url}. Statements end with ';'; \\? for help.")
    try:
        while True:
            try:
                text = prompt.prompt()
            except KeyboardInterrupt:  # Ctrl-C at the prompt: a fresh line
                continue
            except EOFError:  # Ctrl-D
                break
            try:
                if is_meta_command(text):
                    run_meta_command(text, session)
                elif text.strip():
                    session.run(text)
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


def _say(text: str) -> None:
    """A message (a summary, a timing, an error): printed as it is, never paged."""
    sys.stdout.write(text)
    sys.stdout.flush()
