"""The IR of TO EVALUATE."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class EvaluateStatement(Statement):
    """Score ``model`` on the rows of ``select`` against ``label`` ("": none, for a model that
    learned without one); metrics into ``table``."""

    kind: ClassVar[str] = "evaluate"
    omitted_when_none: ClassVar[tuple[str, ...]] = ("version",)
    select: str
    model: str
    label: str
    table: list[str]
    attributes: dict[str, Any]
    version: int | str | None = None  # VERSION: a number or an alias; None: the newest
