"""The IR of standard SQL."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class SqlStatement(Statement):
    """Standard SQL, run by the database as written; ``params`` binds its ``:name``
    placeholders as the driver's parameters; ``models`` are those its ``PREDICT`` calls
    name, compiled into SQL in their place as it runs."""

    kind: ClassVar[str] = "sql"
    params: dict[str, Any] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Its JSON's fields; ``models`` only when it has calls (a statement without them
        serialises as before)."""
        data = super().to_dict()
        if not self.models:
            del data["models"]
        return data
