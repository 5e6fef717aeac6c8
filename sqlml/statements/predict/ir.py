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
    # The model zoo image its model was trained from, when a TO TRAIN of the same program
    # names one: the step's image on Argo. Left out of the JSON when None.
    image: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        if data["image"] is None:
            del data["image"]
        return data
