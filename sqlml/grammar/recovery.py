"""Parse a whole program even when some statements are malformed, to report every error."""

from __future__ import annotations

import re

from sqlml.errors import ParseError
from sqlml.grammar import ast
from sqlml.grammar.parser import parse

# Strings, quoted names and comments are skipped whole; what is left of a match is a ";".
_TOKENS = re.compile(
    r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`|--[^\n]*|/\*.*?\*/|;", re.DOTALL
)


def parse_all(text: str) -> tuple[ast.Program, list[ParseError]]:
    """The statements that parse, and one error for each statement that does not.

    A malformed statement is blanked out (newlines kept, so positions stay right) and the
    rest of the program is parsed again.
    """
    errors: list[ParseError] = []
    while True:
        try:
            return parse(text), errors
        except ParseError as error:
            errors.append(error)
            text = _blank_statement(text, _offset(text, error.line or 1, error.column or 1))


def _offset(text: str, line: int, column: int) -> int:
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return min(start + column - 1, len(text))


def _blank_statement(text: str, offset: int) -> str:
    """``text`` with the statement around ``offset`` (and its ``;``) turned into blanks."""
    semicolons = [m.start() for m in _TOKENS.finditer(text) if m.group() == ";"]
    start = max((s + 1 for s in semicolons if s < offset), default=0)
    end = min((s + 1 for s in semicolons if s >= offset), default=len(text))
    if end <= start:  # the error is at the very end: blank what is left
        start, end = start, len(text)
    blank = re.sub(r"[^\n]", " ", text[start:end])
    return text[:start] + blank + text[end:]
