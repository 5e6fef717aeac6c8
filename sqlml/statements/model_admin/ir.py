"""The IR of the statements on the model store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlml.ir import Statement


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
