"""``sqlml check``: every error in a program, found without running it.

Without a datasource: the grammar, estimators, attributes, feature columns and SQL syntax.
With one: also that the tables and columns each SELECT reads exist, that the LABEL column
is selected, and that every model used exists or is trained earlier in the program.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from sqlml import ir
from sqlml.errors import CheckError, ModelError, SqlmlError
from sqlml.grammar import ast
from sqlml.grammar.recovery import parse_all
from sqlml.runtime.datasource import Columns, Datasource
from sqlml.semantics import analyze
from sqlml.statements import kind_of
from sqlml.statements.evaluate.ir import EvaluateStatement
from sqlml.statements.train.ir import TrainStatement


def check_program(
    text: str, dialect: str, datasource: Datasource | None = None
) -> list[SqlmlError]:
    """All errors in ``text``, in program order; empty when the program is fine."""
    program, errors = parse_all(text)
    statements: list[ir.Statement] = []
    nodes: list[ast.Statement] = []  # the parsed statement of each one in ``statements``
    for statement in program.statements:
        try:
            lowered = analyze(ast.Program((statement,)), dialect)
        except SqlmlError as error:
            errors.append(error)
            continue
        statements.extend(lowered)
        nodes.extend([statement] * len(lowered))
    if datasource is not None:
        errors.extend(_against_datasource(statements, nodes, dialect, datasource))
    return sorted(errors, key=lambda e: (e.line or 0, e.column or 0))


def _against_datasource(
    statements: Sequence[ir.Statement],
    nodes: Sequence[ast.Statement],
    dialect: str,
    datasource: Datasource,
) -> list[SqlmlError]:
    # What only a check against a database needs: a check of the text alone loads none of it.
    from sqlml.models.store import ModelStore
    from sqlml.plan import dependencies
    from sqlml.runtime.training import check_base_estimator, check_repeated
    from sqlml.semantics.metric_names import check_evaluated, stored_task, trained_task

    graph = dependencies(statements, dialect)
    # The estimator of each model that exists (None: its metadata is unreadable) or is
    # trained before the current statement, by its exact name.
    catalog = ModelStore(datasource).catalog()
    models = {
        name: None if isinstance(meta, ModelError) else meta["estimator"]
        for name, _, meta in catalog
    }
    tasks = {name: stored_task(meta) for name, _, meta in catalog}  # None: not known
    # The LABEL column of each model, stored or trained earlier ("": none; absent: not known).
    labels = {name: meta["label"] for name, _, meta in catalog if isinstance(meta, dict)}
    # The attributes of each model, stored or trained earlier (absent: not known).
    attributes = {
        name: meta["attributes"]
        for name, _, meta in catalog
        if isinstance(meta, dict) and isinstance(meta.get("attributes"), dict)
    }
    written: set[str] = set()  # tables the program writes before the current statement
    errors: list[SqlmlError] = []
    for statement, node in zip(statements, nodes, strict=True):
        io, effects = graph.io[statement.id], kind_of(statement).effects
        try:
            for model in effects.values(statement, effects.reads_models):
                with _at(_name_pos(node, model.split("."))):
                    _check_model(model, models, datasource)
            if isinstance(statement, TrainStatement) and statement.base_model:
                estimator = models[statement.base_model]
                if estimator is not None:
                    with _at(getattr(node, "using", None)):
                        check_base_estimator(statement, estimator)
                if statement.base_model in attributes:
                    check_repeated(statement, attributes[statement.base_model])
            if isinstance(statement, EvaluateStatement):
                check_evaluated(node, tasks.get(statement.model), labels.get(statement.model))
            replace = effects.may_replace(statement)
            for table in effects.values(statement, effects.writes_tables):
                if _table_key(table) not in map(_table_key, written):
                    with _at(_name_pos(node, table)):
                        datasource.check_target(table, replace)
            if not io.reads_tables & written:
                for source, select in _selects(statement):
                    with _at(_attribute(node, source)):
                        columns = datasource.read(f"SELECT * FROM ({select}\n) AS q LIMIT 0")
                        _check_columns(statement, node, columns, source)
        except SqlmlError as error:
            errors.append(error.at(statement.line, statement.column))
        written |= io.writes_tables
        for model in effects.values(statement, effects.writes_models):
            models[model] = getattr(statement, "estimator", None)
            attributes.pop(model, None)
            if isinstance(statement, TrainStatement) and not statement.base_model:
                attributes[model] = statement.attributes
            trains = isinstance(statement, TrainStatement)
            tasks[model] = (
                trained_task(statement.task, statement.label, statement.attributes)
                if trains
                else None
            )
            labels[model] = statement.label if trains else None
        for model in effects.values(statement, effects.drops_models):
            models.pop(model, None)
            attributes.pop(model, None)
    return errors


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


def _check_columns(
    statement: ir.Statement, node: ast.Statement, columns: Columns, source: str
) -> None:
    """The LABEL column and the feature columns are in ``columns``; each error at the name
    that is not."""
    label = getattr(statement, "label", None)
    if label and label not in columns:
        with _at(getattr(node, "label", None)):
            raise CheckError(
                f"column {label} is not in the result of {source}",
                hint=f"{source} returns: {', '.join(columns)}",
            )
    if isinstance(statement, TrainStatement):
        from sqlml.runtime.features_derive import check_columns

        try:
            check_columns(columns, statement.features, source)
        except SqlmlError as error:
            with _at(_missing_column(node, columns, error.message)):
                raise


@contextmanager
def _at(found: ast.Name | ast.Attribute | None) -> Iterator[None]:
    """Errors raised inside placed where ``found`` starts (unless placed already or None)."""
    try:
        yield
    except SqlmlError as error:
        if found is not None:
            error.at(found.pos.line, found.pos.column)
        raise


def _names(value: object) -> Iterator[ast.Name]:
    """The names in a parsed statement (or a part of one), in the order they are written."""
    if isinstance(value, ast.Name):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from _names(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            if field.name not in ("text", "pos"):
                yield from _names(getattr(value, field.name))


def _name_pos(node: ast.Statement, parts: Sequence[str]) -> ast.Name | None:
    """The first name of ``node`` that is ``parts`` or starts with them (a TO PREDICT's
    table.column starts with its table)."""
    return next((n for n in _names(node) if list(n.parts[: len(parts)]) == list(parts)), None)


def _attribute(node: ast.Statement, source: str) -> ast.Attribute | None:
    """The attribute a check reads (``validation.select``); None for the SELECT."""
    attributes = getattr(node, "attributes", ())
    return next((a for a in attributes if a.name.lower() == source), None)


def _missing_column(node: ast.Statement, columns: Columns, message: str) -> ast.Name | None:
    """The first name in the COLUMN clauses that is not in ``columns`` and that ``message``
    names."""
    for name in _names(getattr(node, "columns", ())):
        part = name.parts[-1]
        named = re.search(rf"(?<![\w|]){re.escape(part)}(?![\w|])", message)
        if part not in columns and named:
            return name
    return None
