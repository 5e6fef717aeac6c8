"""The shell's commands: backslash commands (``\\d``, ``\\x``, ``\\i FILE``, ``\\o FILE``, ``\\e``,
``\\c URL``, ``\\?``...), the bare words ``exit``, ``quit`` and ``help``, and the dispatch of an
entry to them or to the statements' session."""

from __future__ import annotations

import fnmatch
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from sqlml.datasources import ResultSet
from sqlml.errors import SqlmlError
from sqlml.repl.expanded import MODES
from sqlml.repl.session import Session
from sqlml.repl.statements import bare_command, entries, is_complete, is_meta_command
from sqlml.runtime.output import FORMATS

# name -> (arguments, what it does), as \? lists them.
COMMANDS = {
    "\\d": ("[TABLE]", "list the tables, or describe TABLE's columns"),
    "\\dt": ("[PATTERN]", "list the tables (whose names match PATTERN: * and ?)"),
    "\\models": ("", "list the stored models (SHOW MODELS)"),
    "\\c": ("URL", "connect to another datasource (also \\connect)"),
    "\\connect": ("URL", "connect to another datasource"),
    "\\i": ("FILE", "run the statements and commands of FILE"),
    "\\o": ("[FILE]", "send results to FILE; \\o alone: back to the screen"),
    "\\e": ("[FILE]", "edit the last entry (or FILE) in $EDITOR, then run it"),
    "\\x": ("[on|off|auto]", "expanded display: one record per row (toggle)"),
    "\\format": ("[table|csv|json]", "how results are shown"),
    "\\timing": ("[on|off]", "show how long each statement takes (toggle)"),
    "\\confirm": ("[on|off]", "ask before DROP and TRUNCATE statements (toggle)"),
    "\\?": ("", "this help (also help)"),
    "\\q": ("", "quit (also exit, quit, Ctrl-D)"),
}


class Quit(Exception):
    """``\\q``: leave the shell."""


def run_entry(text: str, session: Session, source: str = "<input>", first_line: int = 1) -> bool:
    """Run an entry: a backslash or bare word command, or statements (from ``first_line`` of
    ``source``). Whether it succeeded; raises :class:`Quit` on ``\\q``."""
    command = bare_command(text)
    if command:
        return run_meta_command(command, session)
    if is_meta_command(text):
        return run_meta_command(text, session)
    return not text.strip() or session.run(text, source, first_line)


def run_meta_command(line: str, session: Session) -> bool:
    """Do what the backslash command ``line`` says; whether it succeeded. Raises
    :class:`Quit` on ``\\q``."""
    name, _, argument = line.strip().partition(" ")
    argument = argument.strip()
    handler = _HANDLERS.get(name)
    if handler is None:
        session.warn(f"unknown command {name}: type \\? for the list of commands\n")
        return False
    try:
        return handler(session, argument) is not False
    except SqlmlError as error:
        session.warn(error.render(name) + "\n")
        return False


def _describe(session: Session, table: str) -> None:
    if not table:
        _list_tables(session, "")
        return
    session.refresh()
    tables = session.catalog.tables
    found = tables.get(table) or next(
        (columns for name, columns in tables.items() if name.lower() == table.lower()), None
    )
    if found is None:
        raise SqlmlError(f"no table {table}", hint="\\d lists the tables")
    session.result(session.render(ResultSet(["column", "type"], found)))


def _list_tables(session: Session, pattern: str) -> None:
    session.refresh()
    rows = [
        (name, len(columns))
        for name, columns in sorted(session.catalog.tables.items())
        if not pattern or fnmatch.fnmatchcase(name.lower(), pattern.lower())
    ]
    session.result(session.render(ResultSet(["table", "columns"], rows)))


def _models(session: Session, _: str) -> bool:
    return session.run("SHOW MODELS;")


def _connect(session: Session, url: str) -> None:
    if not url:
        raise SqlmlError(
            f"connected to {session.url}; give a URL to connect elsewhere",
            hint="for example \\c duckdb:///other.duckdb",
        )
    session.connect(url)
    session.say(f"connected to {session.url}\n")  # the URL's text form hides the password


def _include(session: Session, file: str) -> bool:
    """Run FILE's entries as if typed, up to the first that fails."""
    if not file:
        raise SqlmlError("\\i needs a FILE", hint="for example \\i train.sql")
    try:
        text = Path(file).expanduser().read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise SqlmlError(f"cannot read {file}: {error}") from None
    return all(
        run_entry(entry, session, file, first)
        for first, entry in entries(text.splitlines(keepends=True))
    )


def _output(session: Session, file: str) -> None:
    if not file:
        session.set_output(None)
        return
    try:
        output = Path(file).expanduser().open("w", encoding="utf-8")
    except OSError as error:
        raise SqlmlError(f"cannot write {file}: {error}") from None
    session.set_output(output)


def _edit(session: Session, file: str) -> bool:
    """Open FILE, or the last entry, in ``$VISUAL``/``$EDITOR`` (else vi); run what is saved
    when it is complete, else leave it at the next prompt (``session.pending``)."""
    if file:
        path = Path(file).expanduser()
        text = _edited(path)
    else:
        with tempfile.TemporaryDirectory(prefix="sqlml-") as folder:
            path = Path(folder) / "entry.sql"
            path.write_text(session.last_entry, encoding="utf-8")
            text = _edited(path)
    if not text.strip():
        return True
    if not is_complete(text):
        session.pending = text.rstrip("\n")
        return True
    session.say(text if text.endswith("\n") else text + "\n")
    return run_entry(text, session)


def _edited(path: Path) -> str:
    """The text of ``path`` after the user's editor has closed on it."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        done = subprocess.run([*shlex.split(editor), str(path)], check=False)
    except OSError as error:
        raise SqlmlError(
            f"cannot start the editor {editor}: {error}", hint="set $EDITOR to your editor"
        ) from None
    if done.returncode != 0:
        raise SqlmlError(f"the editor {editor} failed (exit status {done.returncode})")
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise SqlmlError(f"cannot read {path}: {error}") from None


def _expanded(session: Session, mode: str) -> None:
    if mode.lower() not in ("", *MODES):
        raise SqlmlError(f"\\x takes on, off or auto, not {mode}")
    session.expanded = mode.lower() or ("off" if session.expanded != "off" else "on")
    session.say(f"expanded display is {session.expanded}\n")


def _format(session: Session, fmt: str) -> None:
    if fmt and fmt.lower() not in FORMATS:
        raise SqlmlError(f"\\format takes {', '.join(FORMATS)}, not {fmt}")
    session.fmt = fmt.lower() or session.fmt
    session.say(f"output format is {session.fmt}\n")


def _switch(name: str, attribute: str, what: str) -> Callable[[Session, str], None]:
    """A handler setting a boolean setting of the session: on, off, or a toggle."""

    def handler(session: Session, setting: str) -> None:
        if setting.lower() not in ("", "on", "off"):
            raise SqlmlError(f"{name} takes on or off, not {setting}")
        value = setting.lower() == "on" if setting else not getattr(session, attribute)
        setattr(session, attribute, value)
        session.say(f"{what} is {'on' if value else 'off'}\n")

    return handler


def _help(session: Session, _: str) -> None:
    width = max(len(f"{name} {args}") for name, (args, _) in COMMANDS.items())
    lines = [f"  {f'{name} {args}'.ljust(width)}  {doc}" for name, (args, doc) in COMMANDS.items()]
    session.show(
        "Statements end with ';' (Enter on an unfinished one starts a new line).\n"
        + "\n".join(lines)
        + "\nTab completes; Ctrl-R searches the history; Ctrl-C cancels a running statement.\n"
    )


def _quit(session: Session, _: str) -> None:
    raise Quit


_HANDLERS: dict[str, Callable[[Session, str], bool | None]] = {
    "\\d": _describe,
    "\\dt": _list_tables,
    "\\models": _models,
    "\\c": _connect,
    "\\connect": _connect,
    "\\i": _include,
    "\\o": _output,
    "\\e": _edit,
    "\\x": _expanded,
    "\\format": _format,
    "\\timing": _switch("\\timing", "timing", "timing"),
    "\\confirm": _switch("\\confirm", "confirming", "confirmation"),
    "\\?": _help,
    "\\q": _quit,
}
