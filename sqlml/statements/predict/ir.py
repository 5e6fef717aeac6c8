"""The IR of TO PREDICT."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class PredictStatement(Statement):
    """Predict the rows of ``select`` with ``model`` into ``table``.``result_column``."""

    kind: ClassVar[str] = "predict"
    omitted_when_none: ClassVar[tuple[str, ...]] = ("version", "image")
    select: str
    table: list[str]
    result_column: str | None  # None: named after the model's label, as in SQLFlow
    model: str
    attributes: dict[str, Any]
    version: int | str | None = None  # VERSION: a number or an alias; None: the newest
    # The model zoo image its model was trained from, when a TO TRAIN of the same program
    # names one: the step's image on Argo.
    image: str | None = None
