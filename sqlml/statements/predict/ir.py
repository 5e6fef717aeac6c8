"""The IR of TO PREDICT."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class PredictStatement(Statement):
    """Predict the rows of ``select`` with ``model`` into ``table``.``column``."""

    kind: ClassVar[str] = "predict"
    select: str
    table: list[str]
    result_column: str
    model: str
    attributes: dict[str, Any]
