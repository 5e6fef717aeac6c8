"""What one standard SQL statement does to the tables a program sees, found with sqlglot, so
that ``sqlml check`` can replay it without changing anything (:mod:`sqlml.checking`).

A statement is a query, a change of rows only (INSERT, UPDATE, DELETE, ...), a change of the
schema (CREATE, ALTER or DROP of a table, a view or a schema), a statement that changes
neither (DESCRIBE, EXPLAIN, ANALYZE, GRANT, CREATE INDEX...; text that starts no statement
of any database, which cannot run), or not understood (None): SET, USE, COPY, CREATE
FUNCTION, a statement sqlglot cannot parse... whose effects are unknown.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from sqlml.semantics.sql_check import STATEMENT_WORDS, parse_sql, shorten

QUERY = "query"
ROWS = "rows"  # changes rows only
CREATE = "create"
CREATE_AS = "create as"  # CREATE TABLE ... AS <query>
ALTER = "alter"
DROP = "drop"
NOTHING = "nothing"  # changes neither tables nor rows
WRITES = "writes"  # writes tables in a way not replayed (SELECT ... INTO, a materialized view)

_KINDS = {"TABLE": "table", "VIEW": "view", "SCHEMA": "schema", "DATABASE": "schema"}
# Statements that change neither tables nor rows: sqlglot's classes of them (by name: not
# every version of sqlglot has all of them), and the first words of those it reads as a
# Command.
_UNCHANGING = {"Describe", "Show", "Summarize", "Analyze", "Comment", "Grant", "Revoke"}
_UNCHANGING_COMMANDS = {"EXPLAIN", "VACUUM"}
_QUERY_STARTS = (TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.FROM)


@dataclass(frozen=True)
class SchemaChange:
    """What a statement does: ``action`` (one of the names above) to the ``kind`` of object
    ("table", "view" or "schema") named ``names`` (name parts as written; for a rename, the
    old name, then the new one)."""

    action: str
    kind: str = ""
    names: tuple[tuple[str, ...], ...] = ()
    if_exists: bool = False  # IF EXISTS, or IF NOT EXISTS
    temporary: bool = False
    table_word: int | None = None  # CREATE TABLE: where the word TABLE starts in the text
    query: tuple[int, int] | None = None  # CREATE TABLE ... AS: where its query is in the text


@dataclass(frozen=True)
class _Token:
    type: TokenType
    start: int  # in the text as written
    depth: int  # of parentheses around it


@lru_cache(maxsize=64)
def schema_change(text: str, dialect: str) -> SchemaChange | None:
    """What ``text`` (one standard SQL statement in ``dialect``) does; None if not known."""
    if not _starts_a_statement(text):
        return SchemaChange(NOTHING)
    try:
        trees = parse_sql(text, dialect)
    except (SqlglotError, RecursionError):
        return None
    if len(trees) != 1 or trees[0] is None:
        return None
    tree = trees[0]
    if isinstance(tree, exp.Query):
        into = tree.args.get("into")
        if into is None:
            return SchemaChange(QUERY)
        return SchemaChange(WRITES, "table", _names(into.this))
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.TruncateTable)):
        return SchemaChange(ROWS)
    if type(tree).__name__ in _UNCHANGING or (
        isinstance(tree, exp.Command) and str(tree.this).upper() in _UNCHANGING_COMMANDS
    ):
        return SchemaChange(NOTHING)
    if isinstance(tree, (exp.Create, exp.Drop, exp.Alter)):
        return _ddl(tree, text, dialect)
    return None


def _ddl(tree: exp.Create | exp.Drop | exp.Alter, text: str, dialect: str) -> SchemaChange | None:
    word = str(tree.args.get("kind") or "").upper()
    if isinstance(tree, exp.Create) and word == "INDEX":
        return SchemaChange(NOTHING)
    kind = _KINDS.get(word)
    if kind is None or (isinstance(tree, exp.Alter) and kind == "schema"):
        return None
    exists = bool(tree.args.get("exists"))
    if isinstance(tree, exp.Drop):
        return SchemaChange(DROP, kind, _names(*(tree.args.get("tables") or [tree.this])), exists)
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if not isinstance(target, exp.Table):
        return None
    if isinstance(tree, exp.Alter):
        renames = [a.this for a in tree.args.get("actions") or () if isinstance(a, exp.AlterRename)]
        return SchemaChange(ALTER, kind, _names(target, *renames))
    properties = {type(p).__name__ for p in getattr(tree.args.get("properties"), "expressions", ())}
    if "MaterializedProperty" in properties:  # replayed, it would compute its rows
        return SchemaChange(WRITES, kind, _names(target))
    temporary = "TemporaryProperty" in properties
    change = SchemaChange(CREATE, kind, _names(target), exists, temporary)
    if kind != "table":
        return change
    tokens = _tokens(text, dialect)
    table_word = next((t.start for t in tokens if t.type == TokenType.TABLE), None)
    change = dataclasses.replace(change, table_word=table_word)
    if tree.expression is None:
        return change
    query = _query(tokens, text)
    if query is None:
        return SchemaChange(WRITES, "table", change.names)
    return dataclasses.replace(change, action=CREATE_AS, query=query)


def _starts_a_statement(text: str) -> bool:
    """Whether ``text`` starts with a word some database's statements start with (or with a
    parenthesis: a query)."""
    word = re.match(r"\(|[A-Za-z_]+", text)
    return word is not None and (word.group() == "(" or word.group().upper() in STATEMENT_WORDS)


def _names(*tables: exp.Expression | None) -> tuple[tuple[str, ...], ...]:
    return tuple(
        tuple(part.name for part in table.parts) for table in tables if isinstance(table, exp.Table)
    )


def _tokens(text: str, dialect: str) -> list[_Token]:
    """The tokens of ``text``, where each starts in it and its depth in parentheses."""
    short = shorten(text)
    tokens, depth = [], 0
    for token in sqlglot.tokenize(short.text, read=dialect):
        depth -= token.token_type == TokenType.R_PAREN
        tokens.append(_Token(token.token_type, short.source_offset(token.start), depth))
        depth += token.token_type == TokenType.L_PAREN
    return tokens


def _query(tokens: list[_Token], text: str) -> tuple[int, int] | None:
    """Where the query of ``CREATE TABLE ... [AS] <query> [WITH [NO] DATA]`` is in ``text``:
    after the first AS outside parentheses, or from its first word (MySQL's AS is optional),
    up to PostgreSQL's WITH [NO] DATA."""
    outside = [(i, t) for i, t in enumerate(tokens) if t.depth == 0]
    starts = (i for i, t in outside if t.type == TokenType.ALIAS or _starts_query(tokens, i))
    found = next(starts, None)
    if found is not None:
        found += tokens[found].type == TokenType.ALIAS
    if found is None or found >= len(tokens):
        return None
    end = len(text)
    last = [t.type for _, t in outside[-3:]]
    if last[-1:] == [TokenType.VAR] and text[outside[-1][1].start :].strip().upper() == "DATA":
        with_at = -3 if last[-2:-1] == [TokenType.VAR] else -2  # WITH NO DATA, or WITH DATA
        if outside[with_at][1].type == TokenType.WITH:
            end = outside[with_at][1].start
    return tokens[found].start, end


def _starts_query(tokens: list[_Token], index: int) -> bool:
    """Whether a query starts at ``tokens[index]`` (a WITH before a parenthesis gives a
    table's storage parameters, in PostgreSQL)."""
    if tokens[index].type not in _QUERY_STARTS:
        return False
    following = tokens[index + 1].type if index + 1 < len(tokens) else None
    return not (tokens[index].type == TokenType.WITH and following == TokenType.L_PAREN)
