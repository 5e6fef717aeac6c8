"""Syntax highlighting: Pygments' SQL lexer with sqlml's keywords and estimator names."""

from __future__ import annotations

from pygments.lexer import inherit, words
from pygments.lexers.sql import SqlLexer
from pygments.token import Keyword, Name

from sqlml.repl.keywords import SQLML_KEYWORDS
from sqlml.semantics.estimators import ESTIMATORS


class SqlmlLexer(SqlLexer):
    """SQL with sqlml's extended clauses."""

    name = "sqlml"
    aliases = ["sqlml"]  # noqa: RUF012 (Pygments' class attributes)
    filenames: list[str] = []  # noqa: RUF012
    flags = SqlLexer.flags
    tokens = {  # noqa: RUF012
        "root": [
            (words(SQLML_KEYWORDS, prefix=r"(?<![\w$.])", suffix=r"(?![\w$.])"), Keyword),
            (words(sorted(ESTIMATORS, key=len, reverse=True), suffix=r"(?![\w$])"), Name.Class),
            (r"[a-z_][\w$]*(?:\.[a-z_][\w$]*)+(?=\s*=)", Name.Attribute),  # WITH model.x = 1
            inherit,
        ]
    }
