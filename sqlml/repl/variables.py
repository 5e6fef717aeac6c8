"""Python variables in a program's text, written ``:name``, bound safely.

In standard SQL statements a placeholder stays in the text and its value goes with the
statement (``SqlStatement.params``): the database driver binds it as a parameter. In a
TO TRAIN/PREDICT/EVALUATE/EXPLAIN statement the runtime reads the SELECT itself, so there a
value becomes a literal written by sqlglot for the dialect; in a WITH clause, an attribute
literal of its type. Neither path pastes a value's text: quotes are escaped (or, where the
grammar cannot escape them, refused).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from sqlglot import exp

from sqlml import ir
from sqlml.errors import CheckError, SqlmlError
from sqlml.grammar import parse
from sqlml.runtime.bound_parameters import Placeholder, placeholders
from sqlml.semantics import analyze
from sqlml.statements import KINDS

_SCALARS = (str, int, float, bool, type(None))
# The nodes of <select> TO <clause> statements.
_WITH_SELECT = tuple(k.syntax for k in KINDS.values() if k.grammar and k.grammar.clauses)


def bind(text: str, namespace: Mapping[str, Any], dialect: str) -> list[ir.Statement]:
    """Parse and check ``text`` with its ``:name`` placeholders bound to ``namespace``."""
    found = placeholders(text, dialect)
    values = {p.name: _value(p, namespace, text) for p in found}
    text = _with_literals(text, found, values, dialect)
    # sqlglot checks the standard SQL with numbers in the placeholders' places (DuckDB's
    # dialect reads "SELECT :x" as an alias); the statements keep the placeholders.
    statements = analyze(parse(_stand_in(text, placeholders(text, dialect))), dialect)
    starts = [0, *(i + 1 for i, char in enumerate(text) if char == "\n")]
    bound = []
    for statement in statements:
        if isinstance(statement, ir.SqlStatement):
            start = starts[statement.line - 1] + statement.column - 1
            original = text[start : start + len(statement.text)]
            params = {p.name: values[p.name] for p in placeholders(original, dialect)}
            statement = dataclasses.replace(statement, text=original, params=params)
        bound.append(statement)
    return bound


def _stand_in(text: str, found: list[Placeholder]) -> str:
    """``text`` with each placeholder written as a number of its width, ending where it ends."""
    characters = list(text)
    for p in found:
        characters[p.start : p.end] = "0".rjust(p.end - p.start)
    return "".join(characters)


def _value(placeholder: Placeholder, namespace: Mapping[str, Any], text: str) -> Any:
    """The variable's value as a plain Python value (NumPy scalars become theirs)."""
    if placeholder.name not in namespace:
        raise _error(
            f":{placeholder.name} names no Python variable",
            placeholder,
            text,
            f"assign it first, e.g. {placeholder.name} = 5, or quote the text if it is no variable",
        )
    value = namespace[placeholder.name]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "shape", None) == ():
        value = value.item()  # a NumPy scalar
    if isinstance(value, float) and not math.isfinite(value):
        raise _error(f":{placeholder.name} is {value}, not a number SQL takes", placeholder, text)
    return value


def _with_literals(
    text: str, found: list[Placeholder], values: dict[str, Any], dialect: str
) -> str:
    """``text`` with the placeholders of ML statements replaced by literals."""
    if not found:
        return text
    spans = _ml_spans(text, found)
    parts, last = [], 0
    for placeholder in found:
        span = next((s for s in spans if s[0] <= placeholder.start < s[2]), None)
        if span is None:  # standard SQL: bound by the driver
            _check_scalar(placeholder, values[placeholder.name], text)
            continue
        value = values[placeholder.name]
        if placeholder.start < span[1]:
            _check_scalar(placeholder, value, text)
            literal = exp.convert(value).sql(dialect=dialect)
        else:
            literal = _attribute_literal(placeholder, value, text)
        parts += [text[last : placeholder.start], literal]
        last = placeholder.end
    parts.append(text[last:])
    return "".join(parts)


def _ml_spans(text: str, found: list[Placeholder]) -> list[tuple[int, int, int]]:
    """(start, end of the SELECT, end) of each ML statement with a SELECT in ``text``."""
    program = parse(_stand_in(text, found))
    return [
        (s.pos.offset, s.pos.offset + len(s.select), s.pos.offset + len(s.text))
        for s in program.statements
        if isinstance(s, _WITH_SELECT)
    ]


def _check_scalar(placeholder: Placeholder, value: Any, text: str) -> None:
    if not isinstance(value, _SCALARS):
        raise _error(
            f":{placeholder.name} is a {type(value).__name__}; SQL takes a str, int, float, "
            "bool or None",
            placeholder,
            text,
            f"convert it, e.g. str({placeholder.name}) or float({placeholder.name})",
        )


def _attribute_literal(placeholder: Placeholder, value: Any, text: str) -> str:
    """A WITH clause literal: a number, TRUE/FALSE, a quoted string or a list of them."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if "\\" in value:
            raise _error(
                f":{placeholder.name} holds a backslash, which a WITH string cannot hold",
                placeholder,
                text,
            )
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_attribute_literal(placeholder, v, text) for v in value) + "]"
    raise _error(
        f":{placeholder.name} is a {type(value).__name__}; a WITH value is a number, a string, "
        "a boolean or a list of them",
        placeholder,
        text,
    )


def _error(
    message: str, placeholder: Placeholder, text: str, hint: str | None = None
) -> SqlmlError:
    before = text[: placeholder.start]
    line = before.count("\n") + 1
    return CheckError(message, line=line, column=len(before) - before.rfind("\n"), hint=hint)
