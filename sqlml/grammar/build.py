"""What the builders of statement nodes share: positions, unquoted names, and the values the
parser's shared rules (WITH, COLUMN, LABEL, USING, names and values) hand them."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlml.errors import ParseError
from sqlml.grammar import ast

if TYPE_CHECKING:
    from lark import Token


class Located(NamedTuple):
    """A value of the WITH clause, with its first token and the offset just past it (a TO
    EXPLAIN statement may end with its WITH clause)."""

    value: Any
    start: Token | None
    end: int


class Unsliced(NamedTuple):
    """A statement but its text, which the parser slices from the program: ``make(text)``."""

    make: Callable[..., ast.Statement]
    start: int
    end: int


def pos(token: Token) -> ast.Position:
    """Where ``token`` starts."""
    return ast.Position(token.line, token.column, token.start_pos)


def unquote(token: Token) -> str:
    """The text of a quoted name or string, quotes removed; other tokens as they are."""
    text = str(token)
    if token.type == "QUOTED_IDENT":
        return text[1:-1].replace('""', '"')
    if token.type in ("DQ_STRING", "DQ_ARGUMENT"):  # "" and, as in SQLFlow, \" stand for a quote
        return _DOUBLED_OR_ESCAPED.sub(_unescape, text[1:-1])
    if token.type == "BACKQUOTED_IDENT":
        return text[1:-1].replace("``", "`")
    if token.type == "STRING":
        return text[1:-1].replace("''", "'").replace("\\'", "'")
    return text


# A doubled double quote, or a backslash and the character it escapes.
_DOUBLED_OR_ESCAPED = re.compile(r'""|\\(.)', re.DOTALL)


def _unescape(match: re.Match[str]) -> str:
    """A quote for ``""`` and ``\\"``; any other escape kept as written."""
    return '"' if match.group(1) in (None, '"') else match.group()


def check_not_empty(part: Token) -> None:
    """A :class:`ParseError` if ``part`` is a quoted name (or LABEL string) with nothing inside."""
    if len(part) == 2 and part.type in ("QUOTED_IDENT", "BACKQUOTED_IDENT", "STRING"):
        raise ParseError(
            f"the name {part} is empty",
            line=part.line,
            column=part.column,
            hint="write the name between the quotes",
        )


def model_version(token: Token) -> int | str:
    """A model's version as written after VERSION: its number, or an alias's name."""
    if token.type != "SIGNED_NUMBER":
        check_not_empty(token)
        return unquote(token)
    if not re.fullmatch(r"[1-9][0-9]{0,9}", str(token)):
        raise ParseError(
            f"a model version is a positive whole number or an alias, got {token}",
            line=token.line,
            column=token.column,
            hint="for example: USING churn VERSION 3, or USING churn VERSION champion",
        )
    return int(token)


def plain(item: Any) -> Any:
    """A value without where it is."""
    return item.value if isinstance(item, Located) else item
