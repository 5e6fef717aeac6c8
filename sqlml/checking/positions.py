"""Where in a program a check's finding belongs: at a name of a parsed statement, or at an
offset of the program's text."""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from sqlml.errors import SqlmlError
from sqlml.grammar import ast


@contextmanager
def placed_at(found: ast.Name | ast.Attribute | ast.Position | None) -> Iterator[None]:
    """Errors raised inside placed where ``found`` starts (unless placed already or None)."""
    try:
        yield
    except SqlmlError as error:
        if found is not None:
            where = found if isinstance(found, ast.Position) else found.pos
            error.at(where.line, where.column)
        raise


def names(value: object) -> Iterator[ast.Name]:
    """The names in a parsed statement (or a part of one), in the order they are written."""
    if isinstance(value, ast.Name):
        yield value
    elif isinstance(value, tuple):
        for item in value:
            yield from names(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            if field.name not in ("text", "pos"):
                yield from names(getattr(value, field.name))


def name_at(node: ast.Statement, parts: Sequence[str]) -> ast.Name | None:
    """The first name of ``node`` that is ``parts`` or starts with them (a TO PREDICT's
    table.column starts with its table)."""
    return next((n for n in names(node) if list(n.parts[: len(parts)]) == list(parts)), None)


def attribute_at(node: ast.Statement, source: str) -> ast.Attribute | None:
    """The attribute a check reads (``validation.select``); None for the SELECT."""
    attributes = getattr(node, "attributes", ())
    return next((a for a in attributes if a.name.lower() == source), None)


def missing_column(node: ast.Statement, columns: Iterable[str], message: str) -> ast.Name | None:
    """The first name in the COLUMN clauses that is not in ``columns`` and that ``message``
    names."""
    present = set(columns)
    for name in names(getattr(node, "columns", ())):
        part = name.parts[-1]
        named = re.search(rf"(?<![\w|]){re.escape(part)}(?![\w|])", message)
        if part not in present and named:
            return name
    return None


class Lines:
    """The program's text, to tell the line and column of an offset in it."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]

    def position(self, offset: int) -> ast.Position:
        line = bisect.bisect_right(self.starts, offset)
        return ast.Position(line, offset - self.starts[line - 1] + 1, offset)
