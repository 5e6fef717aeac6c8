"""Check standard SQL with sqlglot in the datasource's dialect.

The SELECT of an extended statement must be a query sqlglot can parse, and one that only
reads; so must a plain query (which may change data). Other statements go to the database
unchecked: sqlglot does not know every dialect's statements (MySQL's LOAD DATA, for one),
and a false alarm would stop a valid program. Errors point into the program text.

sqlglot builds a Python object per token: a statement with a list of a million literals
(``WHERE id IN (0, 1, ...)``) would take gigabytes. What the analysis needs (the syntax,
the tables read and written) does not depend on how many literals a list holds, so
:func:`parse_sql` gives sqlglot the text with every long list of literals cut to its first
and last items, and maps error positions back. The database always gets the text as written.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from sqlml.errors import CheckError
from sqlml.grammar import ast
from sqlml.semantics.predict_calls import position, predict_calls, without_calls

_CLAUSES = frozenset({"Where", "Having", "Group", "Order", "Limit", "From", "Join", "Qualify"})
QUERY_WORDS = frozenset({"select", "with", "values", "from", "table"})
T = TypeVar("T")

# A list item that is a literal: a number or a string without backslashes (which dialects
# read differently: an escape in MySQL, a plain character in PostgreSQL, so every dialect
# reads such a string alike), or a row of them: (1, 'a').
_LITERAL = r"(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|'(?:[^'\\]|'')*+')"
_ITEM = rf"(?:{_LITERAL}|\(\s*{_LITERAL}(?:\s*,\s*{_LITERAL})*+\s*\))"
# A run: an item, then items with a comma on both sides (never the list's last item); or a
# string, quoted name or comment, skipped whole so that no run starts inside one. The
# quantifiers are possessive: a run of a million items keeps no backtracking state.
_RUN_OR_SKIPPED = re.compile(
    rf"(?<![\w$.])(?P<first>{_ITEM})(?:\s*,\s*{_ITEM}(?=\s*,))++"
    r"""|'(?:[^'\\]|\\.|'')*+'?|"(?:[^"]|"")*+"?|`(?:[^`]|``)*+`?|--[^\n]*|/\*.*?(?:\*/|\Z)""",
    re.DOTALL,
)
MIN_CUT = 256  # runs of fewer characters are left as they are
# What an extended statement's SELECT (or validation.select) may not hold anywhere: a
# statement that changes data or the schema, such as PostgreSQL's and DuckDB's
# WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d.
_CHANGES = (
    exp.DML,  # UPDATE, DELETE, MERGE, COPY
    exp.DDL,  # INSERT, CREATE
    exp.Drop,
    exp.Alter,
    exp.TruncateTable,
    exp.Into,  # SELECT ... INTO creates a table
    exp.Command,  # a statement sqlglot does not parse further
)


@dataclass(frozen=True)
class ShortSql:
    """SQL with its long runs of literals cut short, and where its pieces were in the SQL."""

    text: str
    cuts: tuple[tuple[int, int], ...]  # (offset in text, offset in the SQL) after each cut

    def source_offset(self, offset: int) -> int:
        """Where the character at ``offset`` of :attr:`text` is in the SQL as written."""
        index = bisect.bisect_right(self.cuts, (offset, float("inf"))) - 1
        if index < 0:
            return offset
        short, source = self.cuts[index]
        return source + offset - short


def shorten(sql: str) -> ShortSql:
    """``sql`` with each long list of literals (or rows of literals) cut to its first and
    last items: ``IN (1, 2, ..., 900)`` becomes ``IN (1, 900)``. Only whole items between two
    commas go, so the text reads as the same statement with a shorter list."""
    pieces: list[str] = []
    cuts: list[tuple[int, int]] = []
    start = length = 0
    for match in _RUN_OR_SKIPPED.finditer(sql):
        if match.group("first") is None or match.end() - match.end("first") < MIN_CUT:
            continue
        piece = sql[start : match.end("first")]
        pieces.append(piece)
        length += len(piece)
        start = match.end()
        cuts.append((length, start))
    if not cuts:
        return ShortSql(sql, ())
    pieces.append(sql[start:])
    return ShortSql("".join(pieces), tuple(cuts))


@lru_cache(maxsize=16)  # a statement is read by the check, the DAG and each step's fingerprint
def parse_sql(sql: str, dialect: str) -> tuple[exp.Expression | None, ...]:
    """sqlglot's trees of the statements in ``sql``, long literal lists cut short (see
    :func:`shorten`); shared between callers, who must not change them. Raises sqlglot's
    errors, positioned in the shortened text, and RecursionError. A ``PREDICT`` call reads as
    ``NULL`` (:mod:`.predict_calls`)."""
    return tuple(sqlglot.parse(shorten(without_calls(sql, dialect)).text, read=dialect))


def is_query(sql: str) -> bool:
    match = re.match(r"[\s(]*([A-Za-z]+)", sql)
    return bool(match) and match.group(1).lower() in QUERY_WORDS


def check_query(
    sql: str, pos: ast.Position, dialect: str, clause: str | None, read_only: bool = False
) -> exp.Query:
    """Parse ``sql`` (starting at ``pos`` in the program) as one query in ``dialect``.

    ``clause`` names the extended clause the query feeds (``TO TRAIN``), for messages. A
    ``read_only`` query may not change data anywhere (a DELETE in a WITH, for one). The
    query returned is shared: do not change it.
    """
    what = f"the SELECT before {clause}" if clause else "this query"
    calls = predict_calls(sql, dialect, pos) if clause else []
    if calls:
        line, column = position(sql, calls[0].start, pos)
        raise CheckError(
            f"PREDICT is for standard SQL, not {what}",
            line=line,
            column=column,
            hint="score the rows in a view or a CREATE TABLE ... AS first, and select from it",
        )
    word = _statement_keyword(sql, dialect)
    if clause and word is not None and word.lower() not in QUERY_WORDS:
        raise CheckError(  # DROP TABLE TO PREDICT ...: sqlglot would stumble later
            f"{what} must be a single SELECT, not {word}",
            line=pos.line,
            column=pos.column,
            hint=f"write the data to use as SELECT ... FROM ... before {clause}",
        )
    expressions = _parsed(lambda: parse_sql(sql, dialect), sql, pos, what)
    query = expressions[0] if len(expressions) == 1 else None
    if not isinstance(query, exp.Query):
        raise CheckError(
            f"{what} must be a single SELECT",
            line=pos.line,
            column=pos.column,
            hint="write the data to use as SELECT ... FROM ...",
        )
    change = query.find(*_CHANGES) if read_only else None
    if change is not None:
        word = _statement_word(change)
        article = "an" if word[0] in "AEIOU" else "a"
        raise CheckError(
            f"{what} may only read data, but it holds {article} {word}",
            line=pos.line,
            column=pos.column,
            hint=f"run the {word} as a statement of its own before this one",
        )
    return query


def check_statement_word(sql: str, pos: ast.Position, dialect: str) -> None:
    """A :class:`CheckError` if the statement starts with a misspelled statement keyword
    (``SELEC 1``): a word that is no keyword of ``dialect``, that sqlglot cannot read as a
    statement, and that is close to a statement keyword. Other words go to the database."""
    match = re.match(r"[A-Za-z_]+", sql)
    if match is None or _statement_keyword(sql, dialect) is not None:
        return
    close = difflib.get_close_matches(match.group().upper(), STATEMENT_WORDS, n=1, cutoff=0.8)
    if not close or _is_statement(sql, dialect):
        return
    raise CheckError(
        f"unknown statement keyword {match.group()}",
        line=pos.line,
        column=pos.column,
        hint=f"did you mean {close[0]}?",
    )


# The words statements start with, to tell a misspelled one (SELEC) from a statement of the
# database that sqlglot does not know.
STATEMENT_WORDS = (
    "SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "WITH", "VALUES",
    "TABLE", "MERGE", "TRUNCATE", "REPLACE", "EXPLAIN", "DESCRIBE", "SHOW", "GRANT", "REVOKE",
    "SET", "USE", "BEGIN", "COMMIT", "ROLLBACK", "COPY", "ANALYZE", "VACUUM", "CALL", "PRAGMA",
    "ATTACH", "DETACH", "INSTALL", "LOAD", "EXPORT", "IMPORT", "CHECKPOINT", "RENAME",
    "COMMENT", "SUMMARIZE", "FROM", "START", "RESET", "PREPARE", "EXECUTE", "DEALLOCATE",
    "LOCK", "UNLOCK", "FLUSH", "OPTIMIZE", "REINDEX", "CLUSTER", "DISCARD", "LISTEN", "NOTIFY",
    # Statements of some database whose word is close to one above: never "misspelled".
    "UNLISTEN", "UNINSTALL", "RESTART", "RELEASE", "SAVEPOINT", "ABORT", "END", "DECLARE",
    "FETCH", "CLOSE", "MOVE", "REFRESH", "REASSIGN", "SECURITY", "HANDLER", "REPAIR",
    "CHECKSUM", "KILL", "PURGE", "SHUTDOWN", "HELP", "DO", "XA", "UNPIVOT", "PIVOT", "DESC",
)  # fmt: skip


def _statement_keyword(sql: str, dialect: str) -> str | None:
    """The first word of ``sql``, upper-cased, if it is a statement word or a keyword of
    ``dialect``'s tokenizer."""
    match = re.match(r"[A-Za-z_]+", sql)
    if match is None:
        return None
    word = match.group().upper()
    if word in STATEMENT_WORDS:
        return word
    try:
        tokens = sqlglot.tokenize(word, read=dialect)
    except TokenError:
        return None
    keyword = bool(tokens) and tokens[0].token_type not in (TokenType.VAR, TokenType.IDENTIFIER)
    return word if keyword else None


def _is_statement(sql: str, dialect: str) -> bool:
    """Whether sqlglot reads ``sql`` as a statement (not as a bare expression or alias)."""
    try:
        expressions = parse_sql(sql, dialect)
    except (SqlglotParseError, TokenError, RecursionError):
        return False
    return bool(expressions) and not isinstance(
        expressions[0], (exp.Column, exp.Alias, exp.Identifier, exp.Literal, exp.Command)
    )


def _statement_word(node: exp.Expression) -> str:
    """How a statement that changes data is named in a message: DELETE, SELECT ... INTO."""
    if isinstance(node, exp.Into):
        return "SELECT ... INTO"
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    return {"TruncateTable": "TRUNCATE"}.get(type(node).__name__, type(node).__name__.upper())


# sqlglot's tokens as its messages show them: <Token token_type: TokenType.VAR, text: x, ...>.
_TOKEN = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+, col: \d+[^>]*>")


# sqlml's statements of their own (SHOW TRAIN, DESCRIBE MODEL...) where sqlglot stumbles on
# their second word: the first one, right before it.
_OWN_WORDS = ("TRAIN", "MODEL", "MODELS")
_OWN_STATEMENT = re.compile(r"(?<![\w$])(SHOW|DESCRIBE|DESC|DROP)\s+\Z", re.IGNORECASE)


def _plain(description: str) -> str:
    """sqlglot's description of a syntax error without its internals: a token as its text
    (the end of the statement for sqlglot's end marker), no class names."""

    def token(match: re.Match[str]) -> str:
        return "the end of the statement" if match[1] == "SENTINEL" else repr(match[2])

    text = re.sub(r"<class '(?:\w+\.)*(\w+)'>", r"\1", _TOKEN.sub(token, description))
    return text.replace("Invalid expression / Unexpected token", "Unexpected word or symbol")


def check_condition(sql: str, pos: ast.Position, dialect: str) -> exp.Expression:
    """Parse ``sql`` (starting at ``pos`` in the program) as one SQL condition in ``dialect``."""
    return _parsed(
        lambda: sqlglot.parse_one(sql, read=dialect, into=exp.Condition), sql, pos, "this condition"
    )


def _parsed(parse: Callable[[], T], sql: str, pos: ast.Position, what: str) -> T:
    """``parse()``'s result; sqlglot's failures as CheckErrors about ``what`` in ``sql``
    (which starts at ``pos``)."""
    try:
        return parse()
    except SqlglotParseError as error:
        raise _located(error, sql, pos) from None
    except TokenError as error:
        raise CheckError(
            f"{what} cannot be read: {error}", line=pos.line, column=pos.column
        ) from None
    except RecursionError:  # sqlglot's parser recurses about 20 calls deep per parenthesis
        raise CheckError(
            f"{what} is nested too deeply to be checked",
            line=pos.line,
            column=pos.column,
            hint="use fewer nested parentheses or subqueries, e.g. name the inner parts with WITH",
        ) from None


def _located(error: SqlglotParseError, sql: str, pos: ast.Position) -> CheckError:
    """sqlglot's error as a CheckError where it is in the program: sqlglot's line and column
    are in the text :func:`parse_sql` shortened."""
    first = error.errors[0] if error.errors else {}
    highlight = first.get("highlight") or ""
    short = shorten(sql)
    lines = [0, *(match.end() for match in re.finditer("\n", short.text))]
    line = min(max(first.get("line") or 1, 1), len(lines))
    column = max(1, (first.get("col") or 1) - len(highlight) + 1)
    offset = min(short.source_offset(lines[line - 1] + column - 1), len(sql))
    own = _OWN_STATEMENT.search(sql, 0, offset) if highlight.upper() in _OWN_WORDS else None
    if own is not None:  # SELECT ... SHOW TRAIN m: the SHOW TRAIN after the SELECT
        offset = own.start()
    line = sql.count("\n", 0, offset) + 1
    column = offset - sql.rfind("\n", 0, offset)
    if line == 1:
        column += pos.column - 1
    if own is not None:
        return CheckError(
            f"{own[1].upper()} {highlight.upper()} is a statement of its own",
            line=pos.line + line - 1,
            column=column,
            hint=f"end the statement before {own[1].upper()} with ';'",
        )
    description = str(first.get("description") or error)
    required = re.match(
        r"Required keyword: '(\w+)' missing for <class '[\w.]*\.(\w+)'>", description
    )
    if required:
        name = required.group(2)
        description = (
            f"the {name.upper()} clause is incomplete"
            if name in _CLAUSES
            else "an expression is incomplete"
        )
    near = f" near {highlight!r}" if highlight else ""
    return CheckError(
        f"SQL syntax error{near}: {_plain(description)}",
        line=pos.line + line - 1,
        column=column,
        hint="check the SQL against your database's documentation",
    )
