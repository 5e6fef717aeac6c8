"""The IR of TO EXPLAIN."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class ExplainStatement(Statement):
    """Per-feature attributions of ``model`` on the rows of ``select``."""

    kind: ClassVar[str] = "explain"
    omitted_when_none: ClassVar[tuple[str, ...]] = ("version",)
    select: str
    model: str
    explainer: str | None
    table: list[str] | None  # None: show the summary instead of writing a table
    attributes: dict[str, Any]
    version: int | str | None = None  # VERSION: a number or an alias; None: the newest
