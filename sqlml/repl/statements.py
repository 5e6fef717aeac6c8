"""Where statements end in the text typed at the shell's prompt or read from a script."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from sqlml.grammar.recovery import statement_ends

# What may follow the last ";" of a complete entry: blanks and comments.
_BLANK = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*", re.DOTALL)
# Words that are commands when an entry is nothing else (as in psql): the shell's name for them.
BARE_WORDS = {"exit": "\\q", "quit": "\\q", "help": "\\?"}
# Commands that run the statements typed before them in the entry (psql's query buffer).
RUN_TYPED = ("\\g", "\\watch")


def is_meta_command(text: str) -> bool:
    """Whether ``text`` is a backslash command such as ``\\d`` (one line, no ``;``)."""
    return text.lstrip().startswith("\\")


def bare_command(text: str) -> str | None:
    """The backslash command a bare ``exit``, ``quit`` or ``help`` (``;`` allowed) stands for."""
    return BARE_WORDS.get(text.strip().rstrip(";").rstrip().lower())


def command_after_statements(text: str) -> tuple[str, str] | None:
    """The statements (their lines) and the command of an entry whose last line is a backslash
    command typed after unfinished statements, as psql reads it; None for another entry."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) < 2 or not is_meta_command(lines[-1]):
        return None
    statements = "\n".join(lines[:-1]) + "\n"
    if not statements.strip() or statement_ends(statements)[1]:  # the line is in a string
        return None
    return statements, lines[-1].strip()


def is_complete(text: str) -> bool:
    """Whether Enter should run ``text``: it is empty, a backslash command (also on a line of
    its own after unfinished statements), a bare word command, or its statements end with a
    top-level ``;`` followed by nothing but blanks and comments."""
    if not text.strip() or is_meta_command(text) or bare_command(text):
        return True
    if command_after_statements(text) is not None:
        return True
    ends, unclosed = statement_ends(text)
    return bool(ends) and not unclosed and _BLANK.fullmatch(text, ends[-1] + 1) is not None


def current_statement(text: str) -> str:
    """The statement being typed at the end of ``text``: what follows its last ``;``."""
    ends, _ = statement_ends(text)
    return text[ends[-1] + 1 :] if ends else text


def entries(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """The entries of a script, as the shell would run them typed line by line: a backslash or
    bare word command on a line of its own, else statements up to a line where they are
    complete; with the number of the entry's first line. A command on a line of its own in
    unfinished statements is an entry of its own, and they go on after it, but ``\\g`` and
    ``\\watch``, which run them (psql's query buffer). Text left unfinished at the end is an
    entry too (its error, if any, says what is missing)."""
    buffer, first = "", 1
    for number, line in enumerate(lines, start=1):
        if not buffer.strip():
            buffer, first = "", number
        line = line if line.endswith("\n") else line + "\n"
        typed = command_after_statements(buffer + line)
        if typed is not None and typed[1].split()[0] not in RUN_TYPED:
            yield number, line
            continue
        buffer += line
        if buffer.strip() and is_complete(buffer):
            yield first, buffer
            buffer = ""
    if buffer.strip():
        yield first, buffer
