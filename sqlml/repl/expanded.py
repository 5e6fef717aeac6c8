"""Expanded display (``\\x``): each row as a record of ``column | value`` lines, as psql's."""

from __future__ import annotations

from sqlml.datasources import ResultSet

MODES = ("on", "off", "auto")


def render_expanded(result: ResultSet) -> str:
    """``result`` one record per row, each headed ``-[ RECORD n ]``; ``(0 rows)`` if empty."""
    if not result.rows:
        return "(0 rows)\n"
    width = max(len(name) for name in result.columns)
    lines = []
    for number, row in enumerate(result.rows, start=1):
        lines.append(f"-[ RECORD {number} ]".ljust(width + 1, "-") + "+" + "-" * 8)
        lines += [
            f"{name.ljust(width)} | {'NULL' if value is None else value}"
            for name, value in zip(result.columns, row, strict=True)
        ]
    return "\n".join(lines) + "\n"


def too_wide(text: str, columns: int) -> bool:
    """Whether a line of ``text`` is longer than the terminal's ``columns``."""
    return any(len(line) > columns for line in text.splitlines())
