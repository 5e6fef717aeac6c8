"""``sqlml check --datasource``: a program checked against the database, statement by
statement, as its earlier statements leave the tables (:mod:`.program_tables`) and the
models (:mod:`.program_models`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from sqlml import ir
from sqlml.checking.leaks import leaks
from sqlml.checking.positions import Lines, attribute_at, missing_column, name_at, placed_at
from sqlml.checking.program_models import ProgramModels
from sqlml.checking.program_tables import ProgramTables
from sqlml.datasources import Columns, Datasource
from sqlml.errors import CheckError, SqlmlError
from sqlml.grammar import ast
from sqlml.plan import dependencies
from sqlml.plan.dag import StatementIO
from sqlml.runtime.features_expand import check_columns
from sqlml.runtime.in_memory import statement_columns
from sqlml.runtime.rows import spelled
from sqlml.semantics.schema_changes import QUERY, schema_change
from sqlml.statements import kind_of
from sqlml.statements.train.ir import TrainStatement

Lowered = tuple[ir.Statement, ast.Statement]  # a statement's IR, and its parsed form


class DatabaseCheck:
    """Programs checked against a database one after the other, each as those before leave
    its tables and models (a context manager: nothing the check replays lasts)."""

    def __init__(self, datasource: Datasource, dialect: str) -> None:
        self.dialect = dialect
        self.models = ProgramModels(datasource)
        self.tables = ProgramTables(datasource, dialect)

    def __enter__(self) -> DatabaseCheck:
        self.tables.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.tables.__exit__(*exc)

    def check(self, lowered: Sequence[Lowered], text: str) -> list[SqlmlError]:
        """The errors and warnings of the ``lowered`` statements of the program ``text``."""
        graph = dependencies([statement for statement, _ in lowered], self.dialect)
        tables, models, lines = self.tables, self.models, Lines(text)
        found: list[SqlmlError] = []
        for statement, node in lowered:
            io = graph.io[statement.id]
            if getattr(statement, "models", None) and kind_of(statement).effects.standard_sql:
                text = models.with_models(statement.text, self.dialect)  # for the database
                statement = dataclasses.replace(statement, text=text)
            try:
                models.check(statement, node)
                if tables.certain(io):
                    _check_targets(statement, node, tables)
                    _check_reads(statement, node, tables, io, lines, found)
            except SqlmlError as error:
                found.append(error.at(statement.line, statement.column))
            found += models.warnings
            models.warnings.clear()
            try:
                tables.follow(statement, io)
            except SqlmlError as error:
                found.append(error.at(statement.line, statement.column))
            models.follow(statement)
        return found


def _check_targets(statement: ir.Statement, node: ast.Statement, tables: ProgramTables) -> None:
    """A :class:`CheckError` if ``statement`` would write a table it may not replace; one
    that the check does not know (an earlier extended statement writes it) is let be."""
    effects = kind_of(statement).effects
    replace = effects.may_replace(statement)
    for table in effects.values(statement, effects.writes_tables):
        if tables.known(".".join(table)):
            with placed_at(name_at(node, table)):
                tables.ask(tables.datasource.check_target, table, replace)


def _check_reads(
    statement: ir.Statement,
    node: ast.Statement,
    tables: ProgramTables,
    io: StatementIO,
    lines: Lines,
    warnings: list[SqlmlError],
) -> None:
    """A query's tables and columns, a LABEL and feature columns checked against the
    result of the SELECT (no row read); the warnings about a training's features added to
    ``warnings``."""
    if kind_of(statement).effects.standard_sql:
        change = schema_change(statement.text, tables.dialect)
        if change is not None and change.action == QUERY:
            tables.describe(statement.text)
        return
    for source, select in _selects(statement):
        with placed_at(attribute_at(node, source)):
            stored = tables.describe(select)
        if stored is None:
            continue
        columns = spelled(stored, _named(statement))
        _check_columns(statement, node, columns, source)
        if isinstance(statement, TrainStatement) and source == "the SELECT":
            untouched = tables.untouched(io)
            warnings += leaks(statement, node, columns, list(stored), tables, untouched, lines)


def _selects(statement: ir.Statement) -> list[tuple[str, str]]:
    """What an extended statement reads: its SELECT, and TO TRAIN's validation.select."""
    select = getattr(statement, "select", None)
    if select is None:
        return []
    validation = getattr(statement, "attributes", {}).get("validation.select")
    named = [("the SELECT", select)]
    return [*named, ("validation.select", validation)] if validation else named


def _named(statement: ir.Statement) -> list[str]:
    """The columns ``statement`` names, as it writes them: SQL's names are matched in any
    case, as the run matches them (:func:`~sqlml.runtime.rows.spelled`)."""
    if isinstance(statement, TrainStatement):
        return statement_columns(statement)
    label = getattr(statement, "label", None)
    return [label] if label else []


def _check_columns(
    statement: ir.Statement, node: ast.Statement, columns: Columns, source: str
) -> None:
    """The LABEL column and the feature columns are in ``columns``; each error at the name
    that is not."""
    label = getattr(statement, "label", None)
    if label and label not in columns:
        with placed_at(getattr(node, "label", None)):
            raise CheckError(
                f"column {label} is not in the result of {source}",
                hint=f"{source} returns: {', '.join(columns)}",
            )
    if isinstance(statement, TrainStatement):
        try:
            check_columns(columns, statement.features, source)
        except SqlmlError as error:
            with placed_at(missing_column(node, columns, error.message)):
                raise
