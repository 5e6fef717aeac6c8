"""Run one IR statement against a datasource: the work behind every step."""

from __future__ import annotations

from sqlml import ir
from sqlml.errors import SqlmlError
from sqlml.runtime.datasource import Datasource
from sqlml.runtime.outcome import Outcome
from sqlml.statements import kind_of, resolve


def execute(statement: ir.Statement, datasource: Datasource) -> Outcome:
    """Run ``statement`` with the handler its kind declares; user errors come out as
    :class:`SqlmlError` with its location."""
    try:
        return resolve(kind_of(statement).handler)(statement, datasource)
    except SqlmlError as error:
        raise error.at(statement.line, statement.column) from None
