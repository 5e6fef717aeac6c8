"""Python variables in a program's text: ``:name`` binds a value, ``{{name}}`` pastes a name.

``{{name}}`` stands for a table or column name held by the Python variable ``name``: a str
(``a.b`` names ``b`` in ``a``) or a list or tuple of them (written ``a, b``). Each name must be
an identifier (letters, digits and underscores, not starting with a digit); it is written
quoted in the datasource's dialect, anywhere in a statement (FROM, COLUMN, LABEL, INTO...).
Templates are replaced first; errors and statements keep the positions of the text as
written.

``:name`` binds a value. In standard SQL statements a placeholder stays in the text and its
value goes with the statement (``SqlStatement.params``): the database driver binds it as a
parameter. In a TO TRAIN/PREDICT/EVALUATE/EXPLAIN statement the runtime reads the SELECT
itself, so there a value becomes a literal written by sqlglot for the dialect; in a WITH
clause, an attribute literal of its type. Neither path pastes a value's text: quotes are
escaped (or, where the grammar cannot escape them, refused).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import reprlib
from collections.abc import Mapping
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from sqlml import ir
from sqlml.errors import CheckError, SqlmlError
from sqlml.grammar import parse
from sqlml.runtime.bound_parameters import Placeholder, placeholders
from sqlml.semantics import analyze
from sqlml.statements import KINDS

_SCALARS = (str, int, float, bool, type(None))


def bind(text: str, namespace: Mapping[str, Any], dialect: str) -> list[ir.Statement]:
    """Parse and check ``text`` with its ``{{name}}`` templates replaced by the names and its
    ``:name`` placeholders bound to the values of ``namespace``."""
    written, shifts = _pasted(text, namespace, dialect)
    if not shifts:
        return _bound(text, namespace, dialect)
    try:
        statements = _bound(written, namespace, dialect)
    except SqlmlError as error:
        if error.line is not None:
            error.line, error.column = moved(written, text, shifts, error.line, error.column or 1)
        raise
    placed = []
    for statement in statements:
        line, column = moved(written, text, shifts, statement.line, statement.column)
        placed.append(dataclasses.replace(statement, line=line, column=column))
    return placed


def _bound(text: str, namespace: Mapping[str, Any], dialect: str) -> list[ir.Statement]:
    """:func:`bind` of a text without templates."""
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
        if isinstance(s, _with_select())
    ]


def _with_select() -> tuple[type, ...]:
    """The nodes of ``<select> TO <clause>`` statements (their kinds' syntax, loaded now)."""
    return tuple(k.syntax for k in KINDS.values() if k.grammar and k.grammar.clauses)


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


# Where a template was pasted: (start, end) in the written text, (start, end) in the original.
Shift = tuple[int, int, int, int]


def templates(text: str, dialect: str) -> list[Placeholder]:
    """The ``{{name}}`` templates of ``text`` outside strings, quoted names and comments, in
    order; none when the tokenizer cannot read the text (the parser then reports it)."""
    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(text)
    except SqlglotError:
        return []
    found = []
    for index, (first, second) in enumerate(itertools.pairwise(tokens)):
        if not _brace(first, TokenType.L_BRACE, second):
            continue
        inside = tokens[index + 2 : index + 5]
        if not _encloses_a_name(text, inside):
            raise _error(
                "'{{' opens no template",
                Placeholder("", first.start, first.end),
                text,
                "write {{name}} for the table or column name held by the Python variable name",
            )
        found.append(Placeholder(inside[0].text, first.start, inside[-1].end + 1))
    return found


def _encloses_a_name(text: str, inside: list[Token]) -> bool:
    """Whether ``inside``, the tokens after ``{{``, are a Python name (unquoted) and ``}}``."""
    if len(inside) < 3:
        return False
    name, closing, again = inside
    return (
        name.text.isidentifier()
        and text[name.start : name.end + 1] == name.text
        and _brace(closing, TokenType.R_BRACE, again)
    )


def _brace(token: Token, kind: TokenType, following: Token) -> bool:
    """Whether ``token`` and ``following`` are two braces of ``kind`` side by side."""
    return token.token_type == kind == following.token_type and following.start == token.end + 1


def _pasted(text: str, namespace: Mapping[str, Any], dialect: str) -> tuple[str, list[Shift]]:
    """``text`` with its templates replaced by quoted names, and where each was pasted."""
    parts: list[str] = []
    shifts: list[Shift] = []
    last, length = 0, 0
    for template in templates(text, dialect):
        names = _names(template, namespace, text, dialect)
        parts += [text[last : template.start], names]
        start = length + template.start - last
        length = start + len(names)
        shifts.append((start, length, template.start, template.end))
        last = template.end
    parts.append(text[last:])
    return "".join(parts), shifts


def _names(template: Placeholder, namespace: Mapping[str, Any], text: str, dialect: str) -> str:
    """The quoted name(s) the template's variable holds."""
    written = "{{" + template.name + "}}"
    if template.name not in namespace:
        raise _error(
            f"{written} names no Python variable",
            template,
            text,
            f"assign it a table or column name first, e.g. {template.name} = 'iris'",
        )
    value = namespace[template.name]
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not names:
        raise _error(
            f"{written} is {reprlib.repr(value)}; a template takes a name (a str) or a list "
            "of names",
            template,
            text,
            f"to use a value rather than a name, write :{template.name} (a bound parameter)",
        )
    quoted = []
    for name in names:
        parts = name.split(".") if isinstance(name, str) else []
        if not parts or not all(part.isidentifier() for part in parts):
            raise _error(
                f"{written} {'is' if name is value else 'holds'} {name!r}, not a table or "
                "column name",
                template,
                text,
                "a name is letters, digits and underscores, not starting with a digit (a.b: "
                f"b in a); to use a value, write :{template.name} (a bound parameter)",
            )
        quoted.append(".".join(exp.to_identifier(p, quoted=True).sql(dialect) for p in parts))
    return ", ".join(quoted)


def moved(
    written: str, original: str, shifts: list[Shift], line: int, column: int
) -> tuple[int, int]:
    """The line and column in ``original`` of those in ``written``; in a pasted name, its
    template's."""
    offset = _offset(written, line, column)
    place = offset
    for start, end, original_start, original_end in shifts:
        if offset < start:
            break
        place = original_start if offset < end else original_end + offset - end
    before = original[:place]
    return before.count("\n") + 1, place - before.rfind("\n")


def _offset(text: str, line: int, column: int) -> int:
    """The offset in ``text`` of a (1-based) line and column."""
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + column - 1
