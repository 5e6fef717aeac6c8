"""MySQL's backquoted names (`` `col` ``), which SQLFlow programs write, in the dialects that
quote names with double quotes only.

DuckDB's and PostgreSQL's SQL (as sqlglot reads them; PostgreSQL itself too) take no
backquotes (sqlglot's tokenizers for them quote names with double quotes only): their SQL gets
each backquoted name as a double-quoted one, the same name, of the same length, so positions in
the program stay right. Strings, quoted names and comments are left as they are; a backquoted
name holding a quote of either kind is left too (rewriting it would change the text's length),
and reads as the dialect reads it.
"""

from __future__ import annotations

import re

_PIECES = re.compile(
    r"""'(?:[^'\\]|\\.|'')*+'?|"(?:[^"]|"")*+"?|--[^\n]*|/\*.*?(?:\*/|\Z)"""
    r"""|\$(?P<tag>(?:[A-Za-z_]\w*)?)\$.*?(?:\$(?P=tag)\$|\Z)|`(?P<name>[^`"]*)`""",
    re.DOTALL,
)


def double_quoted(sql: str, dialect: str) -> str:
    """``sql`` with its backquoted names double-quoted where ``dialect`` needs it."""
    if "`" not in sql or _takes_backquotes(dialect):
        return sql
    return _PIECES.sub(_requoted, sql)


def _takes_backquotes(dialect: str) -> bool:
    """Whether sqlglot's ``dialect`` quotes names with backquotes (MySQL's, SQLite's)."""
    from sqlglot.dialects.dialect import Dialect

    return "`" in Dialect.get_or_raise(dialect).tokenizer_class.IDENTIFIERS


def _requoted(match: re.Match[str]) -> str:
    name = match.group("name")
    return match.group() if name is None else f'"{name}"'
