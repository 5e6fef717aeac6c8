"""Parse a whole program even when some statements are malformed, to report every error."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from sqlml.errors import ParseError
from sqlml.grammar import ast
from sqlml.grammar.parser import parse

# Strings, quoted names and comments are skipped whole (an unclosed one runs to the end, so
# the scan stays linear, and names the group that says so); what is left of a match is a ";".
# The loops are possessive: a string of megabytes keeps no backtracking state.
_TOKENS = re.compile(
    r"'(?:[^'\\]|\\.|'')*+(?:'|(?P<string>\\?\Z))|\"(?:[^\"]|\"\")*+(?:\"|(?P<name>\Z))"
    r"|`(?:[^`]|``)*+(?:`|(?P<backquoted>\Z))|--[^\n]*|/\*.*?(?:\*/|(?P<comment>\Z))|;",
    re.DOTALL,
)
# Parsing stops after this many errors: a file of garbage need not be parsed once per line.
MAX_ERRORS = 100


def statement_ends(text: str) -> tuple[list[int], bool]:
    """The offsets of the ``;`` that end statements in ``text`` (those outside strings, quoted
    names and comments), and whether ``text`` ends inside a string, quoted name or comment."""
    ends: list[int] = []
    for match in _TOKENS.finditer(text):
        if match.lastgroup is not None:  # unclosed: it runs to the end of the text
            return ends, True
        if match.group() == ";":
            ends.append(match.start())
    return ends, False


def parse_all(text: str) -> tuple[ast.Program, list[ParseError]]:
    """The statements that parse, and one error for each statement that does not.

    A malformed statement is skipped, and parsing goes on after its ``;``, with everything
    before blanked out (newlines kept, so positions stay right). After :data:`MAX_ERRORS`
    errors the rest of the program is left unparsed, and a last error says so.
    """
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
