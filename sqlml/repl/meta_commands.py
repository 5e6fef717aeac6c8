"""The shell's commands: backslash commands as psql's (``\\d``, ``\\x``, ``\\i FILE``, ``\\o
FILE``, ``\\e``, ``\\c URL``, ``\\set``, ``\\watch``, ``\\!``, ``\\?``...), the bare words ``exit``,
``quit`` and ``help``, and the dispatch of an entry to them or to the statements' session."""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sqlml.datasources import ResultSet
from sqlml.errors import SqlmlError
from sqlml.repl.expanded import MODES
from sqlml.repl.session import Session
from sqlml.repl.shell_variables import in_arguments
from sqlml.repl.statements import (
    RUN_TYPED,
    bare_command,
    command_after_statements,
    entries,
    is_complete,
    is_meta_command,
)
from sqlml.runtime.output import FORMATS

# name -> (arguments, what it does), as \\? lists them.
COMMANDS = {
    "\\d": ("[NAME]", "list the tables, or describe NAME's columns (also schema.table)"),
    "\\d+": ("[NAME]", "as \\d, with the number of rows"),
    "\\dt": ("[PATTERN]", "list the tables (whose names match PATTERN: * and ?)"),
    "\\dt+": ("[PATTERN]", "as \\dt, with the number of rows"),
    "\\dn": ("[PATTERN]", "list the schemas and their number of tables"),
    "\\l": ("", "list the databases"),
    "\\models": ("", "list the stored models (SHOW MODELS)"),
    "\\c": ("URL", "connect to another datasource (also \\connect)"),
    "\\connect": ("URL", "connect to another datasource"),
    "\\conninfo": ("", "what the shell is connected to"),
    "\\i": ("FILE", "run the statements and commands of FILE"),
    "\\o": ("[FILE]", "send results to FILE; \\o alone: back to the screen"),
    "\\g": ("", "run the statements being typed, else the last entry again"),
    "\\watch": ("[SECONDS]", "run the last entry every SECONDS (2) until Ctrl-C"),
    "\\e": ("[FILE]", "edit the last entry (or FILE) in $EDITOR, then run it"),
    "\\copy": ("TABLE|(QUERY) TO|FROM FILE [CSV] [HEADER]", "copy rows to or from a CSV file"),
    "\\set": ("[NAME [VALUE]]", "set a variable, :NAME in entries (alone: list them)"),
    "\\unset": ("NAME", "unset a variable"),
    "\\echo": ("[TEXT]", "print TEXT"),
    "\\x": ("[on|off|auto]", "expanded display: one record per row (toggle)"),
    "\\format": ("[table|csv|json]", "how results are shown"),
    "\\pset": ("[format|expanded [VALUE]]", "psql's way to set \\format and \\x"),
    "\\timing": ("[on|off]", "show how long each statement takes (toggle)"),
    "\\confirm": ("[on|off]", "ask before DROP and TRUNCATE statements (toggle)"),
    "\\s": ("[FILE]", "show the history, or save it to FILE"),
    "\\!": ("[COMMAND]", "run COMMAND in a shell (alone: a shell until it exits)"),
    "\\h": ("[WORD]", "the forms of sqlml's statements (those with WORD)"),
    "\\?": ("", "this help (also help)"),
    "\\q": ("", "quit (also exit, quit, Ctrl-D)"),
}
# Commands whose argument is a file of this machine (completed as one).
FILE_COMMANDS = ("\\i", "\\o", "\\e", "\\s")
# A word of a command's arguments, its quoted parts, and arguments made of such words.
_WORD = re.compile(r"(?:'(?:[^']|'')*'|[^\s'])+")
_QUOTED = re.compile(r"'(?:[^']|'')*'")
_WORDS = re.compile(r"\s*(?:(?:'(?:[^']|'')*'|[^\s'])+\s*)*")
WATCH_EVERY = 2.0  # seconds between two runs of \\watch, unless it says


class Quit(Exception):
    """``\\q``: leave the shell."""


def run_entry(text: str, session: Session, source: str = "<input>", first_line: int = 1) -> bool:
    """Run an entry: a backslash or bare word command, or statements (from ``first_line`` of
    ``source``). A backslash command on the last line of unfinished statements runs as psql
    runs it: ``\\g`` and ``\\watch`` run them, another command runs and leaves them for the next
    prompt. Whether it succeeded; raises :class:`Quit` on ``\\q``."""
    command = bare_command(text)
    if command:
        return run_meta_command(command, session)
    if is_meta_command(text):
        return run_meta_command(text, session)
    typed = command_after_statements(text)
    if typed is not None:
        statements, command = typed
        if command.split()[0] in RUN_TYPED:
            session.last_entry = statements
        else:
            session.pending = statements.rstrip("\n")
        return run_meta_command(command, session)
    return not text.strip() or session.run(text, source, first_line)


def run_meta_command(line: str, session: Session) -> bool:
    """Do what the backslash command ``line`` says (its ``:name`` variables replaced); whether
    it succeeded. Raises :class:`Quit` on ``\\q``."""
    name, _, argument = line.strip().partition(" ")
    argument = in_arguments(argument.strip(), session.variables)
    handler = _HANDLERS.get(name)
    if handler is None:
        session.warn(f"unknown command {name}: type \\? for the list of commands\n")
        return False
    try:
        return handler(session, argument) is not False
    except SqlmlError as error:
        session.warn(error.render(name) + "\n")
        return False


def _describe(session: Session, table: str, rows: bool = False) -> None:
    if not table:
        _list_tables(session, "", rows)
        return
    session.refresh()
    found = session.catalog.find(table)
    if found is None:
        raise SqlmlError(f"no table {table}", hint="\\d lists the tables, \\dn the schemas")
    name, columns = found
    session.result(session.render(ResultSet(["column", "type"], columns)))
    if rows:
        session.result(f"rows: {_count(session, name)}\n")


def _list_tables(session: Session, pattern: str, rows: bool = False) -> None:
    session.refresh()
    catalog = session.catalog
    listed = [
        (name, len(columns))
        for name, columns in catalog.tables.items()
        if not pattern
        or any(fnmatch.fnmatchcase(n.lower(), pattern.lower()) for n in catalog.names(name))
    ]
    if rows:
        counted = [(name, columns, _count(session, name)) for name, columns in listed]
        session.result(session.render(ResultSet(["table", "columns", "rows"], counted)))
    else:
        session.result(session.render(ResultSet(["table", "columns"], listed)))


def _count(session: Session, table: str) -> int:
    """The number of rows of ``table``, as the catalog names it."""
    quoted = session.datasource.quote(session.catalog.parts(table))
    found = session.query(f"SELECT count(*) FROM {quoted}")
    return int(found.rows[0][0]) if found else 0


def _schemas(session: Session, pattern: str) -> None:
    session.refresh()
    catalog = session.catalog
    rows = [
        (schema, len(tables), "yes" if schema in catalog.search_path else "")
        for schema, tables in catalog.schemas.items()
        if not pattern or fnmatch.fnmatchcase(schema.lower(), pattern.lower())
    ]
    session.result(session.render(ResultSet(["schema", "tables", "on search path"], rows)))


def _databases(session: Session, _: str) -> None:
    sql = session.datasource.databases_sql
    found = session.query(sql) if sql else ResultSet(["database"], [(session.database,)])
    session.result(session.render(found or ResultSet(["database"], [])))


def _conninfo(session: Session, _: str) -> None:
    datasource = session.datasource
    version = session.query(datasource.version_sql) if datasource.version_sql else None
    said = f" ({version.rows[0][0]})" if version and version.rows else ""
    path = ", ".join(session.catalog.search_path)
    session.say(f"connected to {session.url}{said}; schemas searched: {path or 'none'}\n")


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


def _again(session: Session, argument: str) -> bool:
    """\\g: the statements typed before it, else the last entry, run (again)."""
    if argument:
        raise SqlmlError("\\g takes no FILE here", hint="send results to a file with \\o FILE")
    if not session.last_entry.strip():
        raise SqlmlError("nothing to run: no statement was typed yet")
    return session.run(session.last_entry)


def _watch(session: Session, argument: str) -> bool:
    """\\watch: the last entry run every SECONDS, each time headed by the time, until Ctrl-C
    (while it waits or runs) or a run that fails."""
    try:
        every = float(argument) if argument else WATCH_EVERY
    except ValueError:
        every = -1.0
    if not every > 0:
        raise SqlmlError(f"\\watch takes a number of seconds, not {argument}")
    entry = session.last_entry
    if not entry.strip():
        raise SqlmlError("nothing to watch: run a statement first, or type it before \\watch")
    pause = threading.Event()  # never set: Ctrl-C ends the wait
    try:
        while True:
            session.result(f"{time.strftime('%a %d %b %Y %H:%M:%S')} (every {every:g}s)\n\n")
            if not session.run(entry):
                return False
            pause.wait(every)
    except KeyboardInterrupt:
        session.say("\n")
        return True


def _copy(session: Session, argument: str) -> None:
    from sqlml.repl.csv_copy import copy_rows

    session.say(copy_rows(session, argument) + "\n")


def _set(session: Session, argument: str) -> None:
    if not argument:
        quoted = {name: value.replace("'", "''") for name, value in session.variables.items()}
        listed = "".join(f"{name} = '{value}'\n" for name, value in quoted.items())
        session.say(listed)
        return
    name, _, value = argument.partition(" ")
    if not name.isidentifier():
        raise SqlmlError(f"\\set: {name} is no variable name", hint="for example \\set lim 10")
    session.variables[name] = "".join(_words(value.strip()))


def _words(text: str) -> list[str]:
    """The words of ``text`` as psql reads a command's: blanks between them, and each part
    in single quotes taken as it is ('it''s day' is one word, it's day)."""
    if _WORDS.fullmatch(text) is None:
        raise SqlmlError(f"cannot read {text}: a quote is not closed")
    return [
        _QUOTED.sub(lambda quoted: quoted.group()[1:-1].replace("''", "'"), word)
        for word in _WORD.findall(text)
    ]


def _unset(session: Session, name: str) -> None:
    if not name:
        raise SqlmlError("\\unset needs a NAME")
    session.variables.pop(name, None)


def _echo(session: Session, text: str) -> None:
    session.result(" ".join(_words(text)) + "\n")


def _pset(session: Session, argument: str) -> None:
    option, _, value = argument.partition(" ")
    if not option:
        session.say(f"format {session.fmt}\nexpanded {session.expanded}\n")
    elif option == "format":
        _format(session, {"aligned": "table"}.get(value.strip(), value.strip()))
    elif option in ("expanded", "x"):
        _expanded(session, value.strip())
    else:
        raise SqlmlError(
            f"\\pset {option} is not supported: \\pset sets format (table, csv, json) and "
            "expanded (on, off, auto)"
        )


def _history(session: Session, file: str) -> None:
    from sqlml.repl.history import open_history

    entries = list(reversed(list(open_history().load_history_strings())))
    text = "".join(entry.rstrip("\n") + "\n" for entry in entries)
    if not file:
        session.show(text)
        return
    try:
        Path(file).expanduser().write_text(text, encoding="utf-8")
    except OSError as error:
        raise SqlmlError(f"cannot write {file}: {error}") from None
    session.say(f"history written to {file}\n")


def _shell(session: Session, command: str) -> None:
    """\\!: ``command`` in the user's shell (``$SHELL``, else sh), or that shell until it
    exits; its output goes to the terminal as it comes."""
    program = os.environ.get("SHELL") or "/bin/sh"
    try:
        subprocess.run([program, "-c", command] if command else [program], check=False)
    except OSError as error:
        raise SqlmlError(f"cannot start the shell {program}: {error}") from None


def _syntax(session: Session, word: str) -> None:
    from sqlml.repl.synopsis import synopses

    forms = [form for form in synopses() if word.upper() in form.upper()]
    if not forms:
        raise SqlmlError(f"no statement of sqlml's has {word}", hint="\\h alone lists them all")
    session.show(
        "\n".join(forms)
        + "\nStandard SQL runs as the database runs it; docs/language.md has the whole syntax.\n"
    )


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
    "\\d+": lambda session, table: _describe(session, table, rows=True),
    "\\dt": _list_tables,
    "\\dt+": lambda session, pattern: _list_tables(session, pattern, rows=True),
    "\\dn": _schemas,
    "\\l": _databases,
    "\\models": _models,
    "\\c": _connect,
    "\\connect": _connect,
    "\\conninfo": _conninfo,
    "\\i": _include,
    "\\o": _output,
    "\\g": _again,
    "\\watch": _watch,
    "\\e": _edit,
    "\\copy": _copy,
    "\\set": _set,
    "\\unset": _unset,
    "\\echo": _echo,
    "\\x": _expanded,
    "\\format": _format,
    "\\pset": _pset,
    "\\timing": _switch("\\timing", "timing", "timing"),
    "\\confirm": _switch("\\confirm", "confirming", "confirmation"),
    "\\s": _history,
    "\\!": _shell,
    "\\h": _syntax,
    "\\?": _help,
    "\\q": _quit,
}
