"""Standard SQL split into statements without building the grammar.

A program that holds none of the declared kinds' keywords (``StatementKind.keywords``: TO
TRAIN's TRAIN, SHOW MODELS's MODELS...) anywhere, strings and comments included, can only be
standard SQL: the grammar would read it as ``sql`` statements between semicolons. This module
splits it so with the grammar's own patterns for a statement's text (``SQL_TEXT`` and
``SQL_COMMAND`` of ``sqlml.lark``), which makes the same nodes the parser makes, without
loading Lark or the kinds' rules: a plain SELECT starts that much sooner.

Anything else -- a keyword, a character the parser refuses, a quote left open, a kind declared
without keywords -- is left to the parser (:func:`plain_program` returns None), so every
error keeps its message and position.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from sqlml.grammar import ast
from sqlml.plugins import KINDS

# Characters no statement may hold (the parser says why: sqlml.grammar.parser.check_characters):
# NUL, which ends a statement's text in the C libraries of the databases, and lone surrogates,
# which stand for bytes that are not UTF-8.
UNREADABLE = re.compile("[\x00\ud800-\udfff]")
# What the grammar skips between tokens: blank space and comments (its %ignore).
BLANK = r"(?:[\s\ufeff]|--[^\n]*|/\*(?:[^*]|\*+[^*/])*+\*+/)*+"
_SKIPPED = re.compile(BLANK)
# A terminal of sqlml.lark: its name, its pattern and the pattern's flags.
_TERMINAL = re.compile(r"^(?P<name>[A-Z_]+): /(?P<pattern>.*)/(?P<flags>[a-z]*)$", re.MULTILINE)
_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE}
_PLAIN_KIND = "sql"


def plain_program(text: str) -> ast.Program | None:
    """``text``'s statements if it is standard SQL only, as the parser would make them;
    None when the parser must read it."""
    keywords = _keywords()
    if keywords is None or keywords.search(text) or UNREADABLE.search(text):
        return None
    node = KINDS[_PLAIN_KIND].syntax
    patterns = _statement_text()
    statements = []
    at = _SKIPPED.match(text).end()
    while at < len(text):
        if text[at] != ";":
            found = next(filter(None, (pattern.match(text, at) for pattern in patterns)), None)
            if found is None:
                return None
            start, at = at, found.end()
            line, column = text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)
            where = ast.Position(line, column, start)
            statements.append(node(text=text[start:at].rstrip(), pos=where))
            at = _SKIPPED.match(text, at).end()
            if at < len(text) and text[at] != ";":
                return None  # what ends the text is no ';' (a quote left open): the parser says
        at = _SKIPPED.match(text, at + 1).end()
    return ast.Program(tuple(statements))


def _keywords() -> re.Pattern[str] | None:
    """A pattern finding any declared kind's keyword as a word; None when a kind with rules
    declares none (a program is then never taken for plain SQL)."""
    words: set[str] = set()
    for kind in KINDS.values():
        if kind.name == _PLAIN_KIND or kind.declared("grammar") is None:
            continue
        if not kind.keywords:
            return None
        words.update(kind.keywords)
    return _word_pattern(frozenset(words))


@cache
def _word_pattern(words: frozenset[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(word) for word in sorted(words))
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)


@cache
def _statement_text() -> tuple[re.Pattern[str], ...]:
    """The grammar's patterns of a statement's text (a command's, ALTER and the like, and any
    other's). No ``TO <clause>`` can end a statement here (a program holding a clause's word
    is the parser's), so that part of them never matches."""
    grammar = Path(__file__).with_name("sqlml.lark").read_text(encoding="utf-8")
    terminals = {found["name"]: found for found in _TERMINAL.finditer(grammar)}
    return tuple(
        re.compile(
            terminals[name]["pattern"].replace("<CLAUSES>", "(?!)"),
            sum(_FLAGS[flag] for flag in terminals[name]["flags"]),
        )
        for name in ("SQL_COMMAND", "SQL_TEXT")
    )
