"""The analysis of standard SQL: a query checked by sqlglot, other statements kept as
written (the database checks them)."""

from __future__ import annotations

from sqlml.semantics.lowering import common
from sqlml.semantics.sql_check import check_query, check_statement_word, is_query
from sqlml.statements.sql import syntax
from sqlml.statements.sql.ir import SqlStatement


def lower(statement: syntax.SqlStatement, prefix: str, dialect: str) -> SqlStatement:
    if is_query(statement.text):
        check_query(statement.text, statement.pos, dialect, None)
    else:
        check_statement_word(statement.text, statement.pos, dialect)
    first_word = statement.text.split(None, 1)[0]
    return SqlStatement(**common(statement, prefix, first_word))
