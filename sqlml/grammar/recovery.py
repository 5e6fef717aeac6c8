"""Parse a whole program even when some statements are malformed, to report every error."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from sqlml.errors import ParseError
from sqlml.grammar import ast
from sqlml.grammar.plain import BLANK as _BLANK
from sqlml.grammar.plain import plain_program

# What a statement's text holds, skipped whole in SQL and in the extended clauses alike: strings
# and back-quoted names (a backslash escapes the next character in a string; an unclosed one runs
# to the end, so the scan stays linear, and names the group that says so), comments, and ";". The
# loops are possessive: a string of megabytes keeps no backtracking state.
_COMMON = (
    r"'(?:[^'\\]|\\.|'')*+(?:'|(?P<string>\\?\Z))|`(?:[^`]|``)*+(?:`|(?P<backquoted>\Z))"
    r"|--[^\n]*|/\*.*?(?:\*/|(?P<comment>\Z))|;"
)
_UNCLOSED = frozenset({"string", "name", "backquoted", "comment"})
# Statements whose SQL runs to their end, a "TO <clause>" in them being SQL's (the grammar's
# SQL_COMMAND, and ASSERT's condition).
_SQL_TO_THE_END = re.compile(_BLANK + r"(?:ALTER|RENAME|GRANT|SET|COPY|ASSERT)(?![\w$])", re.I)
# Double-quoted text in the extended clauses: SQLFlow's reading (a backslash escapes the next
# character), and SQL's (a quoted name: "" for a quote); see _double_quoted_end.
_SQLFLOW_QUOTED = re.compile(r'"(?:[^"\\]|\\.|"")*+"', re.DOTALL)
_SQL_QUOTED = re.compile(r'"(?:[^"]|"")*+"')
# Parsing stops after this many errors: a file of garbage need not be parsed once per line.
MAX_ERRORS = 100


class _Scanners(NamedTuple):
    """The patterns that find the tokens of a statement's SQL and of its extended clause."""

    sql: re.Pattern[str]  # also finds "TO <clause>" (the group "clause")
    extended: re.Pattern[str]  # also finds the sections' words (the group "section") and '"'
    name_then_next: re.Pattern[str]  # a quoted name followed by what may follow a name


@cache
def _scanners() -> _Scanners:
    """The scanners of the declared statement kinds' clauses and section words."""
    from sqlml.grammar.parser import fragments  # Lark and the kinds' rules: not for plain SQL

    parts = fragments()
    clauses = "|".join(clause for part in parts for clause in part.clauses)
    sections = "|".join(sorted({word for part in parts for word in part.sections}))
    section = rf"(?<![\w$])(?:{sections})(?![\w$])"
    return _Scanners(
        sql=re.compile(
            rf'{_COMMON}|"(?:[^"]|"")*+(?:"|(?P<name>\Z))'
            rf"|(?P<clause>(?<![\w$])TO\s+(?:{clauses})\b)",
            re.DOTALL | re.IGNORECASE,
        ),
        extended=re.compile(rf'{_COMMON}|(?P<section>{section})|"', re.DOTALL | re.IGNORECASE),
        name_then_next=re.compile(
            rf'"(?:[^"]|"")*+"(?={_BLANK}(?:[,)\].;]|\Z|{section}))', re.IGNORECASE
        ),
    )


def statement_ends(text: str) -> tuple[list[int], bool]:
    """The offsets of the ``;`` that end statements in ``text`` (those outside strings, quoted
    names and comments), and whether ``text`` ends inside a string, quoted name or comment.

    Double quotes are read as the parser reads them: SQL's quoting up to a statement's
    ``TO <clause>``, SQLFlow's after it (see :func:`_double_quoted_end`).
    """
    scanners = _scanners()
    ends: list[int] = []
    scanner, sql_only, in_with, at = scanners.sql, bool(_SQL_TO_THE_END.match(text)), False, 0
    while (match := scanner.search(text, at)) is not None:
        if match.lastgroup in _UNCLOSED:  # unclosed: it runs to the end of the text
            return ends, True
        at, token = match.end(), match.group()
        if token == ";":
            ends.append(match.start())
            scanner, sql_only, in_with = scanners.sql, bool(_SQL_TO_THE_END.match(text, at)), False
        elif match.lastgroup == "clause":
            scanner = scanners.sql if sql_only else scanners.extended
        elif match.lastgroup == "section":
            in_with = token.upper() == "WITH"
        elif token == '"':
            end = _double_quoted_end(text, match.start(), in_with, scanners.name_then_next)
            if end is None:
                return ends, True
            at = end
    return ends, False


def _double_quoted_end(text: str, start: int, value: bool, name: re.Pattern[str]) -> int | None:
    """Where the double-quoted text at ``start`` of an extended clause ends (None: never).

    In a WITH section (``value``) it is a string, read as SQLFlow reads it: a backslash escapes
    the next character. Elsewhere it is a quoted name, in SQL's quoting, where closed and
    followed by what may follow a name; else a string of a feature column's arguments in
    SQLFlow's reading, as the parser's DQ_ARGUMENT (``"\""``); else a quoted name closed anyhow.
    """
    readings = (_SQLFLOW_QUOTED, _SQL_QUOTED) if value else (name, _SQLFLOW_QUOTED, _SQL_QUOTED)
    for reading in readings:
        found = reading.match(text, start)
        if found is not None:
            return found.end()
    return None


def parse_all(text: str) -> tuple[ast.Program, list[ParseError]]:
    """The statements that parse, and one error for each statement that does not.

    A malformed statement is skipped, and parsing goes on after its ``;``, with everything
    before blanked out (newlines kept, so positions stay right). After :data:`MAX_ERRORS`
    errors the rest of the program is left unparsed, and a last error says so.
    """
    plain = plain_program(text)
    if plain is not None:
        return plain, []
    ends = [end + 1 for end in statement_ends(text)[0]]
    lines = [0] + [m.end() for m in re.finditer("\n", text)]
    blank = "\n".join(" " * len(line) for line in text.split("\n"))
    errors: list[ParseError] = []
    statements = _parse_region(_Text(text, blank, ends, lines), 0, len(text), errors)
    if len(errors) >= MAX_ERRORS:
        last = errors[-1]
        errors.append(
            ParseError(
                f"stopped after {MAX_ERRORS} errors: the rest of the program is not checked",
                line=last.line,
                column=last.column,
                hint="fix these errors and check again",
            )
        )
    return ast.Program(tuple(statements)), errors


@dataclass(frozen=True)
class _Text:
    """A program, its blanked copy, where its statements end and where its lines start."""

    text: str
    blank: str  # the text with every character but newlines turned into a space
    ends: list[int]  # offsets just past each top-level ";"
    lines: list[int]

    def only(self, start: int, stop: int) -> str:
        """The text with everything outside ``[start, stop)`` blanked."""
        return self.blank[:start] + self.text[start:stop] + self.blank[stop:]


def _parse_region(
    program: _Text, start: int, stop: int, errors: list[ParseError]
) -> list[ast.Statement]:
    """The statements of the program's ``[start, stop)`` that parse; errors go to ``errors``."""
    from sqlml.grammar.parser import parse

    ends, lines = program.ends, program.lines
    parsed: list[ast.Statement] = []
    while start < stop and len(errors) < MAX_ERRORS:
        try:
            return parsed + list(parse(program.only(start, stop)).statements)
        except ParseError as error:
            line = min(error.line or 1, len(lines))
            offset = min(lines[line - 1] + (error.column or 1) - 1, stop)
            # The bad statement: from the end of the one before to its own ";" (or the end).
            first = bisect.bisect_left(ends, offset + 1)
            bad_start = max(ends[first - 1] if first else 0, start)
            bad_end = ends[first] if first < len(ends) and ends[first] <= stop else stop
            if bad_start > start:
                parsed += _parse_region(program, start, bad_start, errors)
            errors.append(error)
            start = max(bad_end, start + 1)
    return parsed
