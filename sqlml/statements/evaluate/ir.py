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
    select: str
    model: str
    label: str
    table: list[str]
    attributes: dict[str, Any]
