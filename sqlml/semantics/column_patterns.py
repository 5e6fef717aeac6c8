"""Column-name patterns in COLUMN: ``CATEGORY_ID("f10|f9|f4", 1000)`` names several columns.

As in SQLFlow, a feature column's field that is not a selected column but holds a regular
expression's special characters is a pattern: a case-insensitive regular expression that
must match a whole column name. ``*`` alone in COLUMN is every selected column but the label.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

STAR = "*"  # COLUMN *: every selected column but the label
_SPECIAL = re.compile(r"[|()\[\]{}*+?.^$\\]")


def is_pattern(name: str) -> bool:
    """Whether ``name`` is written as a pattern rather than a plain column name."""
    return name != STAR and bool(_SPECIAL.search(name))


def compile_pattern(name: str) -> re.Pattern[str]:
    """The regular expression of a pattern; :class:`re.error` if it is not one."""
    return re.compile(name, re.IGNORECASE)


def matching(name: str, columns: Iterable[str]) -> list[str]:
    """The columns a pattern matches, whole and ignoring case, in their order."""
    pattern = compile_pattern(name)
    return [column for column in columns if pattern.fullmatch(column)]
