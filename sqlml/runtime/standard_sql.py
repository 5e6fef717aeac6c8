"""Run a standard SQL statement, its ``:name`` placeholders bound as the driver's parameters."""

from __future__ import annotations

from sqlml import ir
from sqlml.runtime.bound_parameters import bound
from sqlml.runtime.context import Context
from sqlml.runtime.outcome import Outcome


def run(statement: ir.SqlStatement, context: Context) -> Outcome:
    """The rows the statement returns, if any."""
    datasource = context.datasource
    return Outcome(result=datasource.execute(*bound(statement.text, statement.params, datasource)))
