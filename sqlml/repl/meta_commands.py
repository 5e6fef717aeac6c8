"""The shell's backslash commands: ``\\d``, ``\\models``, ``\\c URL``, ``\\timing``, ``\\?``..."""

from __future__ import annotations

from collections.abc import Callable

from sqlml.errors import SqlmlError
from sqlml.repl.session import Session
from sqlml.runtime.datasource import ResultSet
from sqlml.runtime.output import render

# name -> (arguments, what it does), as \? lists them.
COMMANDS = {
    "\\d": ("[TABLE]", "list the tables, or describe TABLE's columns"),
    "\\models": ("", "list the stored models (SHOW MODELS)"),
    "\\c": ("URL", "connect to another datasource (also \\connect)"),
    "\\connect": ("URL", "connect to another datasource"),
    "\\timing": ("[on|off]", "show how long each statement takes (toggle)"),
    "\\?": ("", "this help"),
    "\\q": ("", "quit (also Ctrl-D)"),
}


class Quit(Exception):
    """``\\q``: leave the shell."""


def run_meta_command(line: str, session: Session) -> None:
    """Do what the backslash command ``line`` says; raises :class:`Quit` on ``\\q``."""
    name, _, argument = line.strip().partition(" ")
    argument = argument.strip()
    handler = _HANDLERS.get(name)
    if handler is None:
        session.say(f"unknown command {name}: type \\? for the list of commands\n")
        return
    try:
        handler(session, argument)
    except SqlmlError as error:
        session.say(error.render(name) + "\n")


def _describe(session: Session, table: str) -> None:
    session.refresh()
    tables = session.catalog.tables
    if not table:
        rows = [(name, len(columns)) for name, columns in sorted(tables.items())]
        session.show(render(ResultSet(["table", "columns"], rows), session.fmt))
        return
    found = tables.get(table) or next(
        (columns for name, columns in tables.items() if name.lower() == table.lower()), None
    )
    if found is None:
        raise SqlmlError(f"no table {table}", hint="\\d lists the tables")
    session.show(render(ResultSet(["column", "type"], found), session.fmt))


def _models(session: Session, _: str) -> None:
    session.run("SHOW MODELS;")


def _connect(session: Session, url: str) -> None:
    if not url:
        raise SqlmlError(
            f"connected to {session.url}; give a URL to connect elsewhere",
            hint="for example \\c duckdb:///other.duckdb",
        )
    session.connect(url)
    session.say(f"connected to {session.url}\n")  # the URL's text form hides the password


def _timing(session: Session, setting: str) -> None:
    if setting.lower() not in ("", "on", "off"):
        raise SqlmlError(f"\\timing takes on or off, not {setting}")
    session.timing = setting.lower() == "on" if setting else not session.timing
    session.say(f"timing is {'on' if session.timing else 'off'}\n")


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


_HANDLERS: dict[str, Callable[[Session, str], None]] = {
    "\\d": _describe,
    "\\models": _models,
    "\\c": _connect,
    "\\connect": _connect,
    "\\timing": _timing,
    "\\?": _help,
    "\\q": _quit,
}
