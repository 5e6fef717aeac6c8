"""Run a standard SQL statement, its ``:name`` placeholders bound as the driver's parameters
and each ``PREDICT`` call replaced by its model's compiled SQL (:func:`with_models`). The
statement is interrupted once its token is stopped (a timeout, Ctrl-C), even when the cancel
came just before it started."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlml import ir
from sqlml.datasources import Datasource
from sqlml.errors import ModelError, SqlmlError
from sqlml.grammar.ast import Position
from sqlml.runtime.cancel import interrupted_once_stopped
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome

if TYPE_CHECKING:
    from sqlglot import exp

    from sqlml.models.interface import CompiledModel
    from sqlml.models.store import ModelStore
    from sqlml.semantics.predict_calls import PredictCall


def run(statement: ir.SqlStatement, context: Context) -> Outcome:
    """The rows the statement returns, if any."""
    datasource = context.datasource
    sql, params = statement.text, ()
    if statement.models:
        sql = with_models(statement, datasource)
    if statement.params:  # else sqlglot's tokenizer, which finds placeholders, stays unloaded
        from sqlml.runtime.bound_parameters import bound

        sql, params = bound(sql, statement.params, datasource)
    with interrupted_once_stopped(context.token, datasource.interrupt):
        return Outcome(result=datasource.execute(sql, params))


def with_models(statement: ir.SqlStatement, datasource: Datasource) -> str:
    """The statement's text with each ``PREDICT`` call replaced by its SQL
    (:func:`call_sql`) in the datasource's dialect; a :class:`SqlmlError` at the call whose
    model is missing or cannot be compiled."""
    from sqlml.models.store import ModelStore
    from sqlml.semantics.predict_calls import position, predict_calls, replaced

    text, dialect = statement.text, datasource.dialect
    pos = Position(statement.line, statement.column, 0)
    store, compiled = ModelStore(datasource), {}

    def sql(call: PredictCall) -> str:
        try:
            return f"({call_sql(call, store, compiled).sql(dialect=dialect)})"
        except SqlmlError as error:
            raise error.at(*position(text, call.start, pos)) from None

    return replaced(text, predict_calls(text, dialect, pos), sql)


def call_sql(
    call: PredictCall, store: ModelStore, compiled: dict[tuple[str, int | None], CompiledModel]
) -> exp.Expression:
    """``PREDICT(m)`` as ``m``'s prediction, ``PREDICT_PROBA(m, 'class')`` as the class's
    probability: the model compiled into SQL (:meth:`~sqlml.models.Family.to_sql`, kept in
    ``compiled`` by name and version), reading the features by name; a :class:`SqlmlError`
    if the model is missing, cannot be compiled or gives no such probability."""
    from sqlml.models import family

    key = (call.model, call.version)
    if key not in compiled:
        stored = store.load(call.model, call.version)
        compiled[key] = family(stored.metadata["family"]).to_sql(stored)
    model = compiled[key]
    if call.label is None:
        return model.value
    if call.label not in model.scores:
        raise ModelError(
            f"model {call.model} gives no probability of the class {call.label!r}",
            hint=f"its classes' probabilities: {', '.join(map(repr, model.scores))}"
            if model.scores
            else "its objective gives classes only: use PREDICT",
        )
    return model.scores[call.label]
