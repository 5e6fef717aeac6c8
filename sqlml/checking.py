"""``sqlml check``: every error in a program, found without running it.

Without a datasource: the grammar, estimators, attributes, feature columns and SQL syntax.
With one: also that the tables and columns each SELECT reads exist, that the LABEL column
is selected, and that every model used exists or is trained earlier in the program.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlml import ir
from sqlml.errors import CheckError, ModelError, SqlmlError
from sqlml.grammar import ast
from sqlml.grammar.recovery import parse_all
from sqlml.models.store import ModelStore
from sqlml.plan import dependencies
from sqlml.runtime.datasource import Columns, Datasource
from sqlml.runtime.features_derive import check_columns
from sqlml.runtime.training import check_base_estimator
from sqlml.semantics import analyze
from sqlml.statements import Effects, kind_of
from sqlml.statements.train.ir import TrainStatement


def check_program(
    text: str, dialect: str, datasource: Datasource | None = None
) -> list[SqlmlError]:
    """All errors in ``text``, in program order; empty when the program is fine."""
    program, errors = parse_all(text)
    statements: list[ir.Statement] = []
    for statement in program.statements:
        try:
            statements.extend(analyze(ast.Program((statement,)), dialect))
        except SqlmlError as error:
            errors.append(error)
    if datasource is not None:
        errors.extend(_against_datasource(statements, dialect, datasource))
    return sorted(errors, key=lambda e: (e.line or 0, e.column or 0))


def _against_datasource(
    statements: Sequence[ir.Statement], dialect: str, datasource: Datasource
) -> list[SqlmlError]:
    graph = dependencies(statements, dialect)
    # The estimator of each model that exists (None: its metadata is unreadable) or is
    # trained before the current statement, by its exact name.
    models = {
        name: None if isinstance(meta, ModelError) else meta["estimator"]
        for name, _, meta in ModelStore(datasource).catalog()
    }
    written: set[str] = set()  # tables the program writes before the current statement
    errors: list[SqlmlError] = []
    for statement in statements:
        io, effects = graph.io[statement.id], kind_of(statement).effects
        try:
            for model in effects.values(statement, effects.reads_models):
                _check_model(model, models, datasource)
            if isinstance(statement, TrainStatement) and statement.base_model:
                estimator = models[statement.base_model]
                if estimator is not None:
                    check_base_estimator(statement, estimator)
            target = _target(statement, effects)
            if target is not None and _table_key(target[0]) not in map(_table_key, written):
                datasource.check_target(*target)
            if not io.reads_tables & written:
                for source, select in _selects(statement):
                    columns = datasource.read(f"SELECT * FROM ({select}\n) AS q LIMIT 0")
                    _check_columns(statement, columns, source)
        except SqlmlError as error:
            errors.append(error.at(statement.line, statement.column))
        written |= io.writes_tables
        for model in effects.values(statement, effects.writes_models):
            models[model] = getattr(statement, "estimator", None)
        for model in effects.values(statement, effects.drops_models):
            models.pop(model, None)
    return errors


def _target(statement: ir.Statement, effects: Effects) -> tuple[list[str], bool] | None:
    """The table a statement writes its output into, and whether it may replace a table
    sqlml did not write (``output.replace``); None if it writes none."""
    table = next(effects.values(statement, effects.writes_tables), None)
    return None if table is None else (table, effects.may_replace(statement))


def _table_key(table: Sequence[str] | str) -> str:
    """A table's name (parts, or dotted) as the dependency analysis compares them."""
    parts = table.split(".") if isinstance(table, str) else table
    return parts[-1].lower()


def _check_model(name: str, models: dict[str, str | None], datasource: Datasource) -> None:
    if name not in models:
        raise ModelError(
            f"model {name} does not exist in {datasource.url} and no earlier statement trains it",
            hint=f"train it first with ... TO TRAIN <estimator> ... INTO {name}",
        )


def _selects(statement: ir.Statement) -> list[tuple[str, str]]:
    """What an extended statement reads: its SELECT, and TO TRAIN's validation.select."""
    select = getattr(statement, "select", None)
    if select is None:
        return []
    validation = getattr(statement, "attributes", {}).get("validation.select")
    named = [("the SELECT", select)]
    return [*named, ("validation.select", validation)] if validation else named


def _check_columns(statement: ir.Statement, columns: Columns, source: str) -> None:
    label = getattr(statement, "label", None)
    if label and label not in columns:
        raise CheckError(
            f"column {label} is not in the result of {source}",
            hint=f"{source} returns: {', '.join(columns)}",
        )
    if isinstance(statement, TrainStatement):
        check_columns(columns, statement.features, source)
