"""DuckDB's FLOAT (REAL) values as people read them: 2.3, not 2.299999952316284.

DuckDB hands a 4-byte float to Python widened to a double, whose text shows the float's
binary error (``SELECT 2.3::FLOAT``: 2.299999952316284). A query's FLOAT values, in its
columns and nested in its lists, arrays, structs and maps, become the double of the float's
shortest text that reads back to the same float, as DuckDB's own CLI prints it and as
PostgreSQL's and MySQL's text protocols deliver theirs: every output format (table, CSV,
JSON) and a notebook's DataFrame (still of floats) show ``2.3``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

Convert = Callable[[Any], Any]

_FLOAT32 = struct.Struct("f")
_NESTED = ("list", "array", "struct", "map")


def shortest(value: float) -> float:
    """The float32 ``value`` (widened) as the double of its shortest text that reads back to
    the same float32; NaN and infinities as they are."""
    for digits in range(1, 10):  # nine significant digits tell every float32 apart
        text = f"{value:.{digits}g}"
        try:
            if _FLOAT32.unpack(_FLOAT32.pack(float(text)))[0] == value:
                return float(text)
        except OverflowError:  # rounded up past the largest float32
            continue
    return value


def shown_rows(types: Sequence[Any], rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``rows`` of a query whose columns have the DuckDB ``types``, FLOAT values shortened."""
    converters = [_converter(column_type) for column_type in types]
    if not any(converters):
        return rows
    return [tuple(map(_apply, converters, row)) for row in rows]


def _apply(convert: Convert | None, value: Any) -> Any:
    return value if convert is None or value is None else convert(value)


def _converter(column_type: Any) -> Convert | None:
    """How to show the values of a DuckDB type; None if it holds no FLOAT."""
    kind = column_type.id
    if kind == "float":
        return shortest
    if kind not in _NESTED:
        return None
    parts = {name: _converter(part) for name, part in column_type.children if name != "size"}
    if not any(parts.values()):
        return None
    if kind == "struct":
        return lambda value: {name: _apply(parts[name], v) for name, v in value.items()}
    if kind == "map":
        key, item = parts["key"], parts["value"]
        return lambda value: {_apply(key, k): _apply(item, v) for k, v in value.items()}
    child = parts["child"]  # a list's (Python list) or an array's (tuple)
    return lambda value: type(value)(_apply(child, v) for v in value)
