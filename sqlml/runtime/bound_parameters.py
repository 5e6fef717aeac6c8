"""Named placeholders in standard SQL (``:name``), bound as the database driver's parameters.

A placeholder is a ``:`` directly followed by a name, where the ``:`` does not directly
follow a word, a number or a closing bracket (``a[1:n]`` is a slice, ``reg:squarederror`` a
word, ``x::int`` a cast). Placeholders are found with sqlglot's tokenizer for the dialect, so
strings, quoted names and comments are never searched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

if TYPE_CHECKING:
    from sqlml.datasources import Datasource

_NAMES = {TokenType.VAR, TokenType.IDENTIFIER}
_ADJACENT_ENDS = {
    TokenType.VAR,
    TokenType.IDENTIFIER,
    TokenType.NUMBER,
    TokenType.R_BRACKET,
    TokenType.R_PAREN,
}


@dataclass(frozen=True)
class Placeholder:
    """``:name`` at ``start`` up to (not including) ``end`` in the text."""

    name: str
    start: int
    end: int


def placeholders(text: str, dialect: str) -> list[Placeholder]:
    """The placeholders of ``text``, in order; none when the tokenizer cannot read it (the
    parser then reports what is wrong)."""
    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(text)
    except SqlglotError:
        return []
    found = []
    for before, colon, name in zip([None, *tokens], tokens, tokens[1:], strict=False):
        if colon.token_type != TokenType.COLON or name.token_type not in _NAMES:
            continue
        if name.start != colon.end + 1 or text[name.start] in '"`[':
            continue
        after_word = before is not None and before.token_type in _ADJACENT_ENDS
        if after_word and before.end + 1 == colon.start:
            continue
        found.append(Placeholder(name.text, colon.start, name.end + 1))
    return found


def bound(text: str, params: Mapping[str, Any], datasource: Datasource) -> tuple[str, list[Any]]:
    """``text`` with each placeholder of ``params`` replaced by the driver's marker, and the
    values in their order: the arguments of ``datasource.execute``."""
    if not params:
        return text, []
    found = [p for p in placeholders(text, datasource.dialect) if p.name in params]
    marker = datasource.param
    parts, values, last = [], [], 0
    for placeholder in found:
        parts += [text[last : placeholder.start], marker]
        values.append(params[placeholder.name])
        last = placeholder.end
    parts.append(text[last:])
    if marker == "%s":  # pyformat drivers read every other % as a format sign
        parts = [part if part == marker else part.replace("%", "%%") for part in parts]
    return "".join(parts), values
