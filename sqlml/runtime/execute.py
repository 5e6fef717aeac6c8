"""Run one IR statement against a datasource: the work behind every step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlml import ir
from sqlml.errors import SqlmlError
from sqlml.runtime.datasource import Datasource, ResultSet


@dataclass(frozen=True)
class Outcome:
    """What a statement produced: rows to show and/or a one-line summary."""

    result: ResultSet | None = None
    summary: str | None = None


def execute(statement: ir.Statement, datasource: Datasource) -> Outcome:
    """Run ``statement``; user errors come out as :class:`SqlmlError` with its location."""
    try:
        return _runner(statement.kind)(statement, datasource)
    except SqlmlError as error:
        raise error.at(statement.line, statement.column) from None


def _runner(kind: str) -> Callable[[Any, Datasource], Outcome]:
    from sqlml.runtime import assertion, inference, model_admin, search, training
    from sqlml.runtime.bound_parameters import bound

    return {
        "sql": lambda statement, ds: Outcome(
            result=ds.execute(*bound(statement.text, statement.params, ds))
        ),
        "train": training.train,
        "trial": search.run_trial,
        "search": search.finish,
        "predict": inference.predict,
        "evaluate": inference.evaluate,
        "explain": inference.explain,
        "assert": assertion.check,
        "show_train": model_admin.show_train,
        "show_models": model_admin.show_models,
        "describe_model": model_admin.describe_model,
        "drop_model": model_admin.drop_model,
    }[kind]
