"""The shell's variables (``\\set name value``) in the text of an entry, as psql's.

``:name`` is replaced by the variable's value as it is, ``:'name'`` by the value quoted as a
string literal, ``:"name"`` by the value quoted as a name, in the datasource's dialect. A
variable that is not set stays as written, and so does anything inside a string, a quoted
name, a comment or a dollar-quoted body, and a ``::`` cast.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# Where a value was put: (start, end) in the written text, (start, end) in the original.
Shift = tuple[int, int, int, int]

# What substitution skips or replaces, in the order it is tried at each position.
_TOKENS = re.compile(
    r"""(?P<skip>'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|--[^\n]*|/\*.*?(?:\*/|$)"""
    r"""|(?P<dollar>\$(?:[A-Za-z_]\w*)?\$).*?(?:(?P=dollar)|$)|::+|\w+)"""
    r"""|:(?P<name>[A-Za-z_]\w*)|:'(?P<literal>[A-Za-z_]\w*)'|:"(?P<identifier>[A-Za-z_]\w*)\"""",
    re.DOTALL,
)


def substitute(text: str, variables: Mapping[str, str], dialect: str) -> tuple[str, list[Shift]]:
    """``text`` with its variables replaced, and where each replacement was made (for
    :func:`sqlml.repl.variables.moved`, which finds a place of the text as written)."""
    if ":" not in text or not variables:
        return text, []
    parts: list[str] = []
    shifts: list[Shift] = []
    last, length = 0, 0
    for found in _TOKENS.finditer(text):
        name = found["name"] or found["literal"] or found["identifier"]
        if name is None or name not in variables:
            continue
        value = quoted(variables[name], dialect, found["literal"], found["identifier"])
        parts += [text[last : found.start()], value]
        start = length + found.start() - last
        length = start + len(value)
        shifts.append((start, length, found.start(), found.end()))
        last = found.end()
    parts.append(text[last:])
    return "".join(parts), shifts


def quoted(value: str, dialect: str, literal: str | None, identifier: str | None) -> str:
    """``value`` as it is, or as a string literal or a quoted name of ``dialect``."""
    if literal is None and identifier is None:
        return value
    from sqlglot import exp

    if literal is not None:
        return exp.Literal.string(value).sql(dialect=dialect)
    return exp.to_identifier(value, quoted=True).sql(dialect=dialect)


def in_arguments(text: str, variables: Mapping[str, str]) -> str:
    """A backslash command's arguments with their ``:name``, ``:'name'`` and ``:"name"``
    replaced (quoted in standard SQL's way), outside quotes."""
    return substitute(text, variables, "")[0]
