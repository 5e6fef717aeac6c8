"""The IR of the statements on the model store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class ShowTrainStatement(Statement):
    """The TO TRAIN statement that trained ``version`` of ``model`` (None: the newest)."""

    kind: ClassVar[str] = "show_train"
    omitted_when_none: ClassVar[tuple[str, ...]] = ("version",)
    model: str
    version: int | str | None = None


@dataclass(frozen=True)
class ShowModelsStatement(Statement):
    """The stored models."""

    kind: ClassVar[str] = "show_models"


@dataclass(frozen=True)
class ShowModelVersionsStatement(Statement):
    """Every stored version of ``model`` (None: of every model)."""

    kind: ClassVar[str] = "show_model_versions"
    model: str | None


@dataclass(frozen=True)
class DescribeModelStatement(Statement):
    """A stored model's estimator, features, label, metrics and lineage: of ``version``
    (None: the newest)."""

    kind: ClassVar[str] = "describe_model"
    omitted_when_none: ClassVar[tuple[str, ...]] = ("version",)
    model: str
    version: int | str | None = None


@dataclass(frozen=True)
class DropModelStatement(Statement):
    """Delete a stored model."""

    kind: ClassVar[str] = "drop_model"
    model: str
    if_exists: bool


@dataclass(frozen=True)
class AlterModelStatement(Statement):
    """Change a stored model's aliases or retention: ``action`` is ``set_alias`` (point
    ``alias`` at ``version``), ``drop_alias``, ``rollback_alias`` (point ``alias`` back where
    it was before its last move), ``promote`` (point ``champion`` at ``version``) or ``keep``
    (keep the newest ``keep`` versions; None: all)."""

    kind: ClassVar[str] = "alter_model"
    model: str
    action: str
    alias: str | None = None
    version: int | str | None = None
    keep: int | None = None
