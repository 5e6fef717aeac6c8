"""Run a standard SQL statement, its ``:name`` placeholders bound as the driver's parameters."""

from __future__ import annotations

from sqlml import ir
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome


def run(statement: ir.SqlStatement, context: Context) -> Outcome:
    """The rows the statement returns, if any."""
    datasource = context.datasource
    if not statement.params:  # as written: sqlglot's tokenizer, which finds placeholders, unloaded
        return Outcome(result=datasource.execute(statement.text))
    from sqlml.runtime.bound_parameters import bound

    return Outcome(result=datasource.execute(*bound(statement.text, statement.params, datasource)))
