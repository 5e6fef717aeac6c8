"""Run a standard SQL statement, its ``:name`` placeholders bound as the driver's parameters.
The statement is interrupted once its token is stopped (a timeout, Ctrl-C), even when the
cancel came just before it started."""

from __future__ import annotations

from sqlml import ir
from sqlml.runtime.cancel import interrupted_once_stopped
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome


def run(statement: ir.SqlStatement, context: Context) -> Outcome:
    """The rows the statement returns, if any."""
    datasource = context.datasource
    sql, params = statement.text, ()
    if statement.params:  # else sqlglot's tokenizer, which finds placeholders, stays unloaded
        from sqlml.runtime.bound_parameters import bound

        sql, params = bound(statement.text, statement.params, datasource)
    with interrupted_once_stopped(context.token, datasource.interrupt):
        return Outcome(result=datasource.execute(sql, params))
