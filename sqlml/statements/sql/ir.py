"""The IR of standard SQL."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class SqlStatement(Statement):
    """Standard SQL, run by the database as written; ``params`` binds its ``:name``
    placeholders as the driver's parameters."""

    kind: ClassVar[str] = "sql"
    params: dict[str, Any] = field(default_factory=dict)
