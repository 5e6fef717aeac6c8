"""Check a parsed program and lower it to IR statements, with each kind's analysis."""

from __future__ import annotations

import dataclasses

from sqlml import ir
from sqlml.grammar import ast
from sqlml.semantics.backquotes import double_quoted
from sqlml.statements import for_syntax, resolve
from sqlml.statements.sql.syntax import SqlNode

# The default datasource's dialect (sqlml.datasources.url.DEFAULT_DIALECT: the datasources
# sit above the semantics).
DEFAULT_DIALECT = "duckdb"


def analyze(program: ast.Program, dialect: str = DEFAULT_DIALECT) -> list[ir.Statement]:
    """Check every statement (SQL in sqlglot's ``dialect``) and return their IR, in order."""
    return [lower(statement, prefix, dialect) for statement, prefix in numbered(program)]


def numbered(program: ast.Program) -> list[tuple[ast.Statement, str]]:
    """Each statement of ``program`` with the prefix of its step id (``s01``: its place)."""
    width = len(str(len(program.statements)))
    return [
        (statement, f"s{index:0{width}d}") for index, statement in enumerate(program.statements, 1)
    ]


def lower(statement: ast.Statement, prefix: str, dialect: str) -> ir.Statement:
    """The IR of one checked statement.

    A kind's analysis (its declaration in :mod:`sqlml.statements` names it) takes the AST
    node, the prefix of its step id and sqlglot's dialect, and returns the IR.
    """
    return resolve(for_syntax(statement).analysis)(_requoted(statement, dialect), prefix, dialect)


def _requoted(statement: ast.Statement, dialect: str) -> ast.Statement:
    """``statement`` with its SQL (a standard statement's text, an extended one's SELECT and
    ``validation.select``) holding MySQL's backquoted names double-quoted where the dialect
    takes no backquotes (:mod:`.backquotes`)."""
    field = "text" if isinstance(statement, SqlNode) else "select"
    sql = getattr(statement, field, None)
    if isinstance(sql, str) and double_quoted(sql, dialect) != sql:
        statement = dataclasses.replace(statement, **{field: double_quoted(sql, dialect)})
    attributes = getattr(statement, "attributes", None)
    if isinstance(attributes, tuple) and any(_is_select(a) for a in attributes):
        requoted = tuple(
            dataclasses.replace(a, value=double_quoted(a.value, dialect)) if _is_select(a) else a
            for a in attributes
        )
        statement = dataclasses.replace(statement, attributes=requoted)
    return statement


def _is_select(attribute: object) -> bool:
    return (
        isinstance(attribute, ast.Attribute)
        and attribute.name == "validation.select"
        and isinstance(attribute.value, str)
    )
