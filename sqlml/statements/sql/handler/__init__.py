"""Run a standard SQL statement, its ``:name`` placeholders bound as the driver's parameters
and each ``PREDICT`` call replaced by its model's compiled SQL or a call of a function of
sqlml's (:func:`with_models`). The statement is interrupted once its token is stopped (a
timeout, Ctrl-C), even when the cancel came just before it started."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlml import ir
from sqlml.errors import SqlmlError
from sqlml.grammar.ast import Position
from sqlml.runtime.cancel import interrupted_once_stopped
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome

MAX_NAME = 63  # characters of a column's name: PostgreSQL's limit (MySQL's is 64)

if TYPE_CHECKING:
    from sqlml.datasources.base import QueryFunction
    from sqlml.semantics.predict_calls import PredictCall


def run(statement: ir.SqlStatement, context: Context) -> Outcome:
    """The rows the statement returns, if any."""
    datasource = context.datasource
    sql, params, functions = statement.text, (), []
    if statement.models:
        sql, functions = with_models(statement, context)
    if statement.params:  # else sqlglot's tokenizer, which finds placeholders, stays unloaded
        from sqlml.runtime.bound_parameters import bound

        sql, params = bound(sql, statement.params, datasource)
    with (
        datasource.functions(functions),
        interrupted_once_stopped(context.token, datasource.interrupt),
    ):
        return Outcome(result=datasource.execute(sql, params))


def with_models(statement: ir.SqlStatement, context: Context) -> tuple[str, list[QueryFunction]]:
    """The statement's text with each ``PREDICT`` call replaced by its SQL in the
    datasource's dialect, and the functions of sqlml's that SQL calls
    (:class:`~.model_calls.ModelCalls`); a :class:`SqlmlError` at the call whose model is
    missing or cannot be used there."""
    from sqlml.semantics.predict_calls import (
        defines_lasting,
        position,
        predict_calls,
        replaced,
        unnamed_items,
    )
    from sqlml.statements.sql.handler.model_calls import ModelCalls

    text, datasource, dialect = statement.text, context.datasource, context.datasource.dialect
    pos = Position(statement.line, statement.column, 0)
    calls, lasting = ModelCalls(datasource), defines_lasting(text, dialect)
    found = predict_calls(text, dialect, pos)
    unnamed = unnamed_items(text, dialect, found)

    def sql(call: PredictCall) -> str:
        try:
            replacement = calls.sql(call, lasting, context)
        except SqlmlError as error:
            raise error.at(*position(text, call.start, pos)) from None
        if call in unnamed:  # the column is named after the call, not the SQL in its place
            name = " ".join(text[call.start : call.end].split())[:MAX_NAME]
            replacement += f" AS {datasource.quote([name])}"
        return replacement

    return replaced(text, found, sql), calls.functions
