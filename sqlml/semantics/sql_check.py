"""Check standard SQL with sqlglot in the datasource's dialect.

The SELECT of an extended statement must be a query sqlglot can parse; so must a plain
query. Other statements go to the database unchecked: sqlglot does not know every
dialect's statements (MySQL's LOAD DATA, for one), and a false alarm would stop a valid
program. Errors point into the program text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError

from sqlml.errors import CheckError
from sqlml.grammar import ast

# sqlglot's name for each datasource URL scheme.
DIALECTS = {"duckdb": "duckdb", "mysql": "mysql", "sqlite": "sqlite", "postgresql": "postgres"}

_CLAUSES = frozenset({"Where", "Having", "Group", "Order", "Limit", "From", "Join", "Qualify"})
QUERY_WORDS = frozenset({"select", "with", "values", "from", "table"})
T = TypeVar("T")


def is_query(sql: str) -> bool:
    match = re.match(r"[\s(]*([A-Za-z]+)", sql)
    return bool(match) and match.group(1).lower() in QUERY_WORDS


def check_query(sql: str, pos: ast.Position, dialect: str, clause: str | None) -> exp.Query:
    """Parse ``sql`` (starting at ``pos`` in the program) as one query in ``dialect``.

    ``clause`` names the extended clause the query feeds (``TO TRAIN``), for messages.
    """
    what = f"the SELECT before {clause}" if clause else "this query"
    expressions = _parsed(lambda: sqlglot.parse(sql, read=dialect), pos, what)
    query = expressions[0] if len(expressions) == 1 else None
    if not isinstance(query, exp.Query):
        raise CheckError(
            f"{what} must be a single SELECT",
            line=pos.line,
            column=pos.column,
            hint="write the data to use as SELECT ... FROM ...",
        )
    return query


def check_condition(sql: str, pos: ast.Position, dialect: str) -> exp.Expression:
    """Parse ``sql`` (starting at ``pos`` in the program) as one SQL condition in ``dialect``."""
    return _parsed(
        lambda: sqlglot.parse_one(sql, read=dialect, into=exp.Condition), pos, "this condition"
    )


def _parsed(parse: Callable[[], T], pos: ast.Position, what: str) -> T:
    """``parse()``'s result; sqlglot's failures as CheckErrors at ``pos`` about ``what``."""
    try:
        return parse()
    except SqlglotParseError as error:
        raise _located(error, pos) from None
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


def _located(error: SqlglotParseError, pos: ast.Position) -> CheckError:
    first = error.errors[0] if error.errors else {}
    line = first.get("line") or 1
    end_column = first.get("col") or 1
    highlight = first.get("highlight") or ""
    column = max(1, end_column - len(highlight) + 1)
    if line == 1:
        column += pos.column - 1
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
        f"SQL syntax error{near}: {description}",
        line=pos.line + line - 1,
        column=column,
        hint="check the SQL against your database's documentation",
    )
