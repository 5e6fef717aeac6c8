"""Warnings about features that may give the label away, found by ``sqlml check
--datasource`` in a TO TRAIN.

COLUMN does not limit the features, as in SQLFlow: the selected columns it leaves out are
features too (the run warns about them in the same words). And a key tells rows apart
rather than describing them: where rows are stored in the order of their labels, as iris's
ids are, a model learns the labels from it. A feature looks like a key by its name (``id``,
``customer_id``, ``customerId``, ``key``...) or, where the SELECT reads tables whose rows
the program has not changed, by its values: integers all different and packed as row
numbers are (within twice as many numbers as rows), asked of the database in one aggregate
query over the SELECT's first rows. (A SQL table has no order: whether values rise with
the rows' order is not asked.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from sqlml.checking.positions import Lines, names
from sqlml.checking.program_tables import ProgramTables
from sqlml.datasources import Columns
from sqlml.errors import DatasourceError, SqlmlError, SqlmlWarning
from sqlml.grammar import ast
from sqlml.ir import FeatureColumn
from sqlml.runtime.features_derive import (
    left_out,
    left_out_warning,
    not_features,
    with_the_rest,
)
from sqlml.runtime.features_expand import expand, sources
from sqlml.semantics.projection import Projection, projection
from sqlml.statements.train.ir import TrainStatement

SAMPLE_ROWS = 10_000  # the SELECT's first rows whose values are looked at
MIN_ROWS = 20  # fewer rows tell too little
_KEY_NAMES = {"id", "key", "uuid", "guid", "rowid", "row_id", "pk", "idx", "index"}
_KEY_SUFFIXES = ("_id", "_key", "_uuid", "_pk")
_CAMEL_ID = re.compile(r"[a-z0-9](?:Id|ID)")  # customerId, PassengerID: at the name's end
_BY_NAME = "(by its name): a key tells rows apart, and may give their labels away"
_INTEGER = re.compile(r"u?(?:tiny|small|medium|big|huge)?int(?:eger)?\d*\b", re.IGNORECASE)


def leaks(
    statement: TrainStatement,
    node: ast.Statement,
    columns: Columns,
    stored: list[str],
    tables: ProgramTables,
    values_known: bool,
    lines: Lines,
) -> list[SqlmlError]:
    """The warnings about the features of ``statement``, whose SELECT returns ``columns``
    (named as the statement writes them, :func:`~sqlml.runtime.rows.spelled`; ``stored``:
    as the database does), each at the column in COLUMN, or in the SELECT. Their values are
    asked of the database, through ``tables``, only if ``values_known``."""
    if statement.base_model:  # its features are the base model's
        return []
    place = _Places(node, projection(statement.select, tables.dialect), lines)
    label, group = statement.label, statement.attributes.get("train.group_column")
    excluded = not_features(statement.attributes)
    try:
        rest = left_out(columns, statement.features, label, group, excluded)
        listed = _sources(expand(columns, statement.features, (label, group, *excluded)))
        every = with_the_rest(statement.features)
        features = _sources(expand(columns, every, (label, group, *excluded)))
    except SqlmlError:  # the run says what is wrong with COLUMN
        return []
    warnings: list[SqlmlError] = []
    for where, together in place.grouped(rest):
        warnings.append(_warning(*left_out_warning(together), where))
    keys = {name: _BY_NAME for name in features if _key_name(name)}
    if values_known:
        stored_as = dict(zip(columns, stored, strict=True))
        numbering = _numbering(statement.select, stored_as, features, tables)
        keys.update({name: why for name, why in numbering.items() if name not in keys})
    for name, why in keys.items():
        warnings.append(_key_warning(name, why, name in listed, place.at(name)))
    return warnings


def _sources(features: list[FeatureColumn]) -> list[str]:
    """The columns ``features`` read, each once, in order."""
    return list(dict.fromkeys(name for feature in features for name in sources(feature)))


def _key_name(name: str) -> bool:
    """Whether ``name`` is a key's: ``id``, ``key``, ``*_id``, ``*Id``..."""
    folded = name.casefold()
    return folded in _KEY_NAMES or folded.endswith(_KEY_SUFFIXES) or _camel_id(name)


def _camel_id(name: str) -> bool:
    return any(m.end() == len(name) for m in _CAMEL_ID.finditer(name))


class _Places:
    """Where a statement writes each column: in COLUMN, or else in the SELECT (by its name,
    or its ``*``), or else the statement's start."""

    def __init__(self, node: ast.Statement, selected: Projection, lines: Lines) -> None:
        self.node, self.selected, self.lines = node, selected, lines

    def at(self, column: str) -> ast.Position:
        for name in names(getattr(self.node, "columns", ())):
            if name.parts[-1].casefold() == column.casefold():
                return name.pos
        offset = self.selected.named.get(column.casefold(), self.selected.star)
        if offset is None:
            return self.node.pos
        return self.lines.position(self.node.pos.offset + offset)

    def grouped(self, columns: list[str]) -> Iterator[tuple[ast.Position, list[str]]]:
        """``columns`` by where they are written (those of one ``*`` together)."""
        found: dict[ast.Position, list[str]] = {}
        for column in columns:
            found.setdefault(self.at(column), []).append(column)
        yield from found.items()


def _warning(message: str, hint: str, where: ast.Position) -> SqlmlWarning:
    return SqlmlWarning(message, line=where.line, column=where.column, hint=hint)


def _key_warning(name: str, why: str, in_column: bool, where: ast.Position) -> SqlmlWarning:
    also = " and out of COLUMN" if in_column else ""
    return _warning(
        f"feature {name} looks like a key {why}",
        f"leave {name} out of the SELECT{also} unless it measures something the model should "
        "learn from",
        where,
    )


def _numbering(
    select: str, stored: dict[str, str], features: list[str], tables: ProgramTables
) -> dict[str, str]:
    """Why each integer feature whose values number the rows looks like a key, found in
    one aggregate query over the SELECT's first :data:`SAMPLE_ROWS` rows: all different and
    within twice as many numbers as rows (values of a measure rarely are), whatever order
    the rows come in (``stored``: each column's name in the database). Nothing where the
    database cannot tell."""
    datasource = tables.datasource
    try:
        types = tables.ask(datasource.result_types, select)
    except DatasourceError:
        return {}
    integers = [n for n in features if _INTEGER.match(types.get(stored[n], ""))]
    if not integers:
        return {}
    measured = ", ".join(
        f"COUNT({q}), COUNT(DISTINCT {q}), MIN({q}), MAX({q})"
        for q in (datasource.quote([stored[n]]) for n in integers)
    )
    first = f"SELECT * FROM ({select}\n) AS q LIMIT {SAMPLE_ROWS}"
    sql = f"SELECT COUNT(*), {measured} FROM ({first}) AS r"
    try:
        found = tables.ask(datasource.execute, sql)
    except DatasourceError:
        return {}
    rows, *measures = found.rows[0] if found and found.rows else (0,)
    why = {}
    for index, name in enumerate(integers):
        filled, distinct, low, high = measures[4 * index : 4 * index + 4]
        if rows < MIN_ROWS or not filled == distinct == rows or int(high) - int(low) >= 2 * rows:
            continue
        spread = (
            f"are {low} to {high}, each once"
            if int(high) - int(low) + 1 == rows
            else f"are all different, between {low} and {high}"
        )
        why[name] = f"(by its values): its {rows:,} values read {spread}, as row numbers are"
    return why
