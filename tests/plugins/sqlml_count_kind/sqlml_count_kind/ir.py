"""The IR of TO COUNT."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class CountStatement(Statement):
    """Count the rows of ``select`` holding each distinct value of ``counted``, into
    ``table`` (its name's parts)."""

    kind: ClassVar[str] = "count"
    select: str
    counted: str
    table: list[str]
