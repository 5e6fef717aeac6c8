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


@dataclass(frozen=True)
class EvaluateStatement(Statement):
    """Score ``model`` on the rows of ``select`` against ``label``; metrics into ``table``."""

    kind: ClassVar[str] = "evaluate"
    select: str
    model: str
    label: str
    table: list[str]
    attributes: dict[str, Any]


@dataclass(frozen=True)
class ExplainStatement(Statement):
    """Per-feature attributions of ``model`` on the rows of ``select``."""

    kind: ClassVar[str] = "explain"
    select: str
    model: str
    explainer: str | None
    table: list[str] | None  # None: show the summary instead of writing a table
    attributes: dict[str, Any]


@dataclass(frozen=True)
class ShowTrainStatement(Statement):
    """The TO TRAIN statement that trained ``model``."""

    kind: ClassVar[str] = "show_train"
    model: str


@dataclass(frozen=True)
class ShowModelsStatement(Statement):
    """The stored models."""

    kind: ClassVar[str] = "show_models"


@dataclass(frozen=True)
class DescribeModelStatement(Statement):
    """A stored model's estimator, features, label and metrics."""

    kind: ClassVar[str] = "describe_model"
    model: str


@dataclass(frozen=True)
class DropModelStatement(Statement):
    """Delete a stored model."""

    kind: ClassVar[str] = "drop_model"
    model: str
    if_exists: bool


_KINDS: dict[str, type[Statement]] = {
    cls.kind: cls
    for cls in (
        SqlStatement,
        TrainStatement,
        PredictStatement,
        EvaluateStatement,
        ExplainStatement,
        ShowTrainStatement,
        ShowModelsStatement,
        DescribeModelStatement,
        DropModelStatement,
    )
}


def from_dict(data: dict[str, Any]) -> Statement:
    """Rebuild a statement from :meth:`Statement.to_dict` output."""
    fields = dict(data)
    kind = fields.pop("kind")
    return _KINDS[kind](**fields)
