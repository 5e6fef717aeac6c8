"""The analysis of standard SQL: a query checked, other statements kept as written (the
database checks them).

A statement that the database's own parser reads whole (DuckDB's: a query of one SELECT, or
one statement of another kind) is taken as it is; anything else is checked by sqlglot, whose
errors say where the fault is (:mod:`sqlml.semantics.database_parser`). Its ``PREDICT`` calls
(:mod:`sqlml.semantics.predict_calls`) are checked as written and read as ``NULL`` by the rest
of the check; the IR names their models."""

from __future__ import annotations

from sqlml.errors import CheckError
from sqlml.grammar.ast import Position
from sqlml.semantics.database_parser import statement_type
from sqlml.semantics.lowering import common
from sqlml.semantics.predict_calls import neutral, predict_calls
from sqlml.statements.sql import syntax
from sqlml.statements.sql.ir import SqlStatement


def lower(statement: syntax.SqlNode, prefix: str, dialect: str) -> SqlStatement:
    if statement.text.startswith("\\"):
        raise _shell_command(statement)
    calls = predict_calls(statement.text, dialect, statement.pos)
    _check(neutral(statement.text, calls), statement.pos, dialect)
    first_word = statement.text.split(None, 1)[0]
    models = list(dict.fromkeys(call.model for call in calls))
    return SqlStatement(**common(statement, prefix, first_word), models=models)


def _check(text: str, pos: Position, dialect: str) -> None:
    """``text`` (its ``PREDICT`` calls stood in for) checked."""
    read = statement_type(text, dialect)
    if read == "SELECT":  # a query (SHOW and DESCRIBE are too) the database reads whole
        return
    from sqlml.semantics.sql_check import check_query, check_statement_word, is_query

    if is_query(text):
        check_query(text, pos, dialect, None)
    elif read is None:
        check_statement_word(text, pos, dialect)


def _shell_command(statement: syntax.SqlNode) -> CheckError:
    """A backslash command (``\\d``, ``\\!``...) where statements are expected: only the
    interactive shell runs them, never a program, the editor or a notebook."""
    command = statement.text.split(None, 1)[0]
    return CheckError(
        f"{command} is a command of sqlml's interactive shell, not a statement: it runs only "
        "at the prompt of sqlml repl",
        line=statement.pos.line,
        column=statement.pos.column,
        hint="type it in sqlml repl, or write the SQL it stands for",
    )
