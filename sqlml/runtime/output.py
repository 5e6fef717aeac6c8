"""Show query results as aligned tables, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from sqlml.runtime.datasource import ResultSet

FORMATS = ("table", "csv", "json")


def render(result: ResultSet, fmt: str = "table") -> str:
    """``result`` in one of :data:`FORMATS`, ending with a newline."""
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows(result.rows)
        return buffer.getvalue()
    if fmt == "json":
        rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
        return json.dumps(rows, default=str) + "\n"
    return _table(result)


def _cell(value: Any) -> str:
    return "NULL" if value is None else str(value)


def _table(result: ResultSet) -> str:
    cells = [[_cell(value) for value in row] for row in result.rows]
    widths = [len(name) for name in result.columns]
    for row in cells:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row, strict=True)]
    numeric = [
        all(isinstance(row[i], int | float) or row[i] is None for row in result.rows)
        for i in range(len(result.columns))
    ]

    def line(values: list[str]) -> str:
        padded = (
            value.rjust(width) if right else value.ljust(width)
            for value, width, right in zip(values, widths, numeric, strict=True)
        )
        return " " + " | ".join(padded).rstrip()

    count = len(result.rows)
    lines = [
        line(result.columns),
        "-" + "-+-".join("-" * width for width in widths) + "-",
        *(line(row) for row in cells),
        f"({count} row{'s' if count != 1 else ''})",
    ]
    return "\n".join(lines) + "\n"
