"""The analysis of ``ASSERT <condition> [MESSAGE '...'] [WARN]``: the condition checked by
sqlglot, the query that evaluates it, and the scalar subqueries whose values a failure
reports."""

from __future__ import annotations

import re

from sqlglot import exp

from sqlml.errors import CheckError
from sqlml.semantics.lowering import slug
from sqlml.semantics.sql_check import QUERY_WORDS, check_condition
from sqlml.statements.assertion import syntax
from sqlml.statements.assertion.ir import AssertStatement

MAX_OBSERVED = 5  # scalar subqueries whose values a failure reports
_MESSAGE_WORD = re.compile(r"(?<![\w$])MESSAGE(?![\w$])", re.IGNORECASE)
_QUERY = re.compile(rf"\s*(?:{'|'.join(QUERY_WORDS)})(?![\w$])", re.IGNORECASE)


def lower(statement: syntax.AssertNode, prefix: str, dialect: str) -> AssertStatement:
    """The IR of an ASSERT whose condition is SQL in sqlglot's ``dialect``."""
    condition, pos = statement.condition, statement.condition_pos
    try:
        tree = check_condition(condition, pos, dialect)
    except CheckError as error:
        if _QUERY.match(condition):
            raise CheckError(
                "ASSERT takes a condition, not a query",
                line=pos.line,
                column=pos.column,
                hint="put the query in parentheses and compare its value: "
                "ASSERT (SELECT count(*) FROM t) > 0",
            ) from None
        if _MESSAGE_WORD.search(condition):
            error.hint = "MESSAGE takes a text in single quotes: MESSAGE 'what went wrong'"
        elif statement.warn:
            error.hint = (
                "a final WARN makes the assertion a warning; a column named warn that ends "
                'the condition is written "warn"'
            )
        raise
    # The condition is kept as written (newlines end any trailing -- comment); NOT tells a
    # false condition from a NULL one.
    holds = f"(\n{condition}\n)"
    return AssertStatement(
        id=f"{prefix}-assert-{slug(statement.condition)}",
        text=statement.text,
        line=statement.pos.line,
        column=statement.pos.column,
        condition=condition,
        message=statement.message,
        select=f"SELECT CASE WHEN {holds} THEN 1 WHEN NOT {holds} THEN 0 END AS holds",
        observed=[[_label(query, dialect), query.sql(dialect)] for query in _scalars(tree)],
        warn=statement.warn,
    )


def _scalars(tree: exp.Expression) -> list[exp.Subquery]:
    """The outermost subqueries used as values (not those of IN, ANY, ALL or EXISTS)."""
    found = []
    for node in tree.find_all(exp.Subquery, bfs=True):
        inside = node.find_ancestor(exp.Subquery, exp.In, exp.Any, exp.All, exp.Exists)
        if inside is None and isinstance(node.this, exp.Select):
            found.append(node)
    return found[:MAX_OBSERVED]


def _label(query: exp.Subquery, dialect: str) -> str:
    """``accuracy`` for ``(SELECT accuracy FROM eval)``, else the subquery's SQL."""
    selected = query.this.expressions
    if len(selected) == 1 and isinstance(selected[0], exp.Column | exp.Alias):
        return selected[0].alias_or_name
    return query.sql(dialect)
