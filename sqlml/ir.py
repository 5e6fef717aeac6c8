"""The intermediate representation: one checked statement as a plain, JSON-serialisable value.

The same IR drives the local executor in-process and a step running in a container
(``python -m sqlml.runtime.step``), so both behave alike.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar


@dataclass(frozen=True)
class Statement:
    """Fields every statement has: a stable id, its text and where it starts."""

    kind: ClassVar[str]
    id: str
    text: str
    line: int
    column: int

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **dataclasses.asdict(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


@dataclass(frozen=True)
class SqlStatement(Statement):
    """Standard SQL, run by the database as written."""

    kind: ClassVar[str] = "sql"


@dataclass(frozen=True)
class TrainStatement(Statement):
    """Train ``estimator`` on the rows of ``select`` and save it as ``model``."""

    kind: ClassVar[str] = "train"
    select: str
    estimator: str
    family: str  # which runtime trainer: "xgboost" or "keras"
    task: str  # "classifier", "regressor", or "auto": decided by objective and label
    attributes: dict[str, Any]  # checked, with defaults and the estimator's fixed parameters
    features: list[str]  # empty: every selected column but the label
    label: str
    model: str


@dataclass(frozen=True)
class PredictStatement(Statement):
    """Predict the rows of ``select`` with ``model`` into ``table``.``column``."""

    kind: ClassVar[str] = "predict"
    select: str
    table: list[str]
    result_column: str
    model: str
    attributes: dict[str, Any]


_KINDS: dict[str, type[Statement]] = {
    cls.kind: cls for cls in (SqlStatement, TrainStatement, PredictStatement)
}


def from_dict(data: dict[str, Any]) -> Statement:
    """Rebuild a statement from :meth:`Statement.to_dict` output."""
    fields = dict(data)
    kind = fields.pop("kind")
    return _KINDS[kind](**fields)
