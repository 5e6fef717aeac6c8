"""Run a standard SQL statement, its ``:name`` placeholders bound as the driver's parameters
and each ``PREDICT`` call replaced by its model's compiled SQL or a call of a function of
sqlml's (:func:`with_models`). The statement is interrupted once its token is stopped (a
timeout, Ctrl-C), even when the cancel came just before it started."""

from __future__ import annotations

import dataclasses
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlml import ir
from sqlml.errors import DatasourceError, SqlmlError
from sqlml.grammar.ast import Position
from sqlml.runtime.cancel import interrupted_once_stopped
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome

MAX_NAME = 63  # characters of a column's name: PostgreSQL's limit (MySQL's is 64)
# psql's command tags of statements that change rows, by their first word.
_TAGS = {"INSERT": "INSERT 0 {}", "UPDATE": "UPDATE {}", "DELETE": "DELETE {}"}

if TYPE_CHECKING:
    from sqlml.datasources.base import QueryFunction
    from sqlml.semantics.predict_calls import PredictCall, SelectItem
    from sqlml.statements.sql.handler.model_calls import ModelCalls, NotCompiled
    from sqlml.statements.sql.handler.scored_here import ScoredHere


def run(statement: ir.SqlStatement, context: Context) -> Outcome:
    """The rows the statement returns, if any."""
    datasource = context.datasource
    sql, params, rewritten = statement.text, (), Rewritten(statement.text)
    if statement.models:
        rewritten = with_models(statement, context)
        sql = rewritten.text
    if statement.params:  # else sqlglot's tokenizer, which finds placeholders, stays unloaded
        from sqlml.runtime.bound_parameters import bound

        sql, params = bound(sql, statement.params, datasource)
    try:
        with (
            datasource.functions(rewritten.functions),
            datasource.scoring_compiled_models() if rewritten.compiled_sql else nullcontext(),
            interrupted_once_stopped(context.token, datasource.interrupt),
        ):
            result = datasource.execute(sql, params)
    except DatasourceError as error:
        raise pinpointed(error, statement, sql) from None
    if rewritten.scored_here and result is not None:
        from sqlml.statements.sql.handler.scored_here import scored

        result = scored(result, rewritten.scored_here)
    if result is None:
        return Outcome(summary=command_tag(statement.text, datasource.changed_rows))
    return Outcome(result=result)


def command_tag(text: str, changed: int | None) -> str | None:
    """What psql says of a statement that changes rows: ``INSERT 0 3``, ``UPDATE 2``,
    ``DELETE 1``; None for another statement, or where the database does not tell."""
    word = text.split(None, 1)[0].upper() if text.strip() else ""
    if changed is None or word not in _TAGS:
        return None
    return _TAGS[word].format(changed)


def pinpointed(error: DatasourceError, statement: ir.Statement, sql: str) -> DatasourceError:
    """``error`` at the line and column of the program where the database says ``sql``, the
    statement's text as it ran, went wrong: where that part of ``sql`` is still the text as
    written (not a model's SQL or a bound parameter put in its place). Returns it."""
    offset, text = error.offset, statement.text
    if offset is None or error.line is not None or offset >= _same_up_to(sql, text):
        return error
    error.message = error.unplaced or error.message  # the place is drawn from the program's
    return error.pinpoint(text, statement.line, statement.column, offset)


def _same_up_to(one: str, other: str) -> int:
    """How many characters ``one`` and ``other`` have the same from their start."""
    pairs = zip(one, other, strict=False)
    return next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(one), len(other)))


@dataclass
class Rewritten:
    """A statement's text as it runs, its ``PREDICT`` calls replaced: the functions of
    sqlml's it calls, and the items of its SELECT list that sqlml scores itself."""

    text: str
    functions: list[QueryFunction] = field(default_factory=list)
    scored_here: list[ScoredHere] = field(default_factory=list)
    compiled_sql: bool = False  # whether it holds a model compiled into SQL


def with_models(statement: ir.SqlStatement, context: Context) -> Rewritten:
    """The statement with each ``PREDICT`` call replaced by its SQL in the datasource's
    dialect (:class:`~.model_calls.ModelCalls`), or, as a whole item of the outermost SELECT
    list of a model that does not compile on a database that cannot call sqlml, by the
    columns sqlml scores once the rows arrive (:mod:`.scored_here`, with a warning); a
    :class:`SqlmlError` at the call whose model is missing or cannot be used there."""
    from sqlml.semantics.predict_calls import (
        defines_lasting,
        position,
        predict_calls,
        replaced,
        select_items,
    )
    from sqlml.statements.sql.handler.model_calls import ModelCalls, NotCompiled
    from sqlml.statements.sql.handler.scored_here import elsewhere, scores_here

    text, datasource, dialect = statement.text, context.datasource, context.datasource.dialect
    pos = Position(statement.line, statement.column, 0)
    calls, lasting = ModelCalls(datasource), defines_lasting(text, dialect)
    found = predict_calls(text, dialect, pos)
    items = select_items(text, dialect, found)
    rewritten, spans, replacements = Rewritten(text), [], {}
    for call in found:
        item, end, where = items.get(call), call.end, position(text, call.start, pos)
        try:
            replacement = calls.sql(call, lasting, context)
        except NotCompiled as error:
            if not scores_here(item, datasource):
                raise elsewhere(error, datasource, lasting).at(*where) from None
            replacement = _scored_here(call, item, where, error, calls, rewritten, context)
            end = item.end
        except SqlmlError as error:
            raise error.at(*where) from None
        else:
            if item and item.name is None:  # named after the call, not the SQL in its place
                replacement += f" AS {datasource.quote([_column_name(text, call)])}"
        spans.append(dataclasses.replace(call, end=end))
        replacements[call.start] = replacement
    rewritten.text = replaced(text, spans, lambda call: replacements[call.start])
    rewritten.functions = calls.functions
    rewritten.compiled_sql = calls.compiled_sql
    return rewritten


def _scored_here(
    call: PredictCall,
    item: SelectItem,
    where: tuple[int, int],
    error: NotCompiled,
    calls: ModelCalls,
    rewritten: Rewritten,
    context: Context,
) -> str:
    """The SELECT items standing for ``call``, which sqlml scores itself (said on standard
    error, with why the database cannot)."""
    from sqlml.models.estimator import warn
    from sqlml.statements.sql.handler.scored_here import item_sql, notice

    text, datasource = rewritten.text, context.datasource
    written = item.written or datasource.quote([_column_name(text, call)])
    function, columns = calls.function(call, context)
    sql, scored = item_sql(len(rewritten.scored_here), written, function, columns, datasource)
    rewritten.scored_here.append(scored)
    message, hint = notice(error.message)
    warn(*where, message, hint)
    return sql


def _column_name(text: str, call: PredictCall) -> str:
    """The name of a column that is a call with none given: the call as written."""
    return " ".join(text[call.start : call.end].split())[:MAX_NAME]
