"""Expanded display (``\\x``): each row as a record of ``column | value`` lines, as psql's."""

from __future__ import annotations

from sqlml.datasources import ResultSet

MODES = ("on", "off", "auto")


def render_expanded(result: ResultSet) -> str:
    """``result`` one record per row, each headed by a rule ``-[ RECORD n ]`` as wide as the
    widest name and value (psql's); ``(0 rows)`` if empty."""
    if not result.rows:
        return "(0 rows)\n"
    shown = [["NULL" if value is None else str(value) for value in row] for row in result.rows]
    width = max(len(name) for name in result.columns)
    values = max((len(line) for row in shown for v in row for line in v.splitlines()), default=0)
    lines = []
    for number, row in enumerate(shown, start=1):
        lines.append(_rule(f"-[ RECORD {number} ]", width, values))
        lines += [
            f"{name.ljust(width)} | {value}"
            for name, value in zip(result.columns, row, strict=True)
        ]
    return "\n".join(lines) + "\n"


def _rule(title: str, width: int, values: int) -> str:
    """A record's first line: ``title``, then dashes to the end of the widest value, with a
    ``+`` where the names' column ends if the title leaves room for it."""
    if len(title) < width + 1:
        return title.ljust(width + 1, "-") + "+" + "-" * (values + 1)
    return title.ljust(width + 3 + values, "-")


def too_wide(text: str, columns: int) -> bool:
    """Whether a line of ``text`` is longer than the terminal's ``columns``."""
    return any(len(line) > columns for line in text.splitlines())
