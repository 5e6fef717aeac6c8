"""The analysis of standard SQL: a query checked, other statements kept as written (the
database checks them).

A statement that the database's own parser reads whole (DuckDB's: a query of one SELECT, or
one statement of another kind) is taken as it is; anything else is checked by sqlglot, whose
errors say where the fault is (:mod:`sqlml.semantics.database_parser`)."""

from __future__ import annotations

from sqlml.semantics.database_parser import statement_type
from sqlml.semantics.lowering import common
from sqlml.statements.sql import syntax
from sqlml.statements.sql.ir import SqlStatement


def lower(statement: syntax.SqlNode, prefix: str, dialect: str) -> SqlStatement:
    _check(statement, dialect)
    first_word = statement.text.split(None, 1)[0]
    return SqlStatement(**common(statement, prefix, first_word))


def _check(statement: syntax.SqlNode, dialect: str) -> None:
    read = statement_type(statement.text, dialect)
    if read == "SELECT":  # a query (SHOW and DESCRIBE are too) the database reads whole
        return
    from sqlml.semantics.sql_check import check_query, check_statement_word, is_query

    if is_query(statement.text):
        check_query(statement.text, statement.pos, dialect, None)
    elif read is None:
        check_statement_word(statement.text, statement.pos, dialect)
