"""The IR of ASSERT."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class AssertStatement(Statement):
    """Fail unless ``condition`` (SQL) holds; ``select`` evaluates it: 1 true, 0 false, NULL.
    ``warn``: a warning-level assertion, reported without failing the run.

    ``observed`` pairs a label with the SQL of each scalar subquery of the condition, whose
    values a failure reports.
    """

    kind: ClassVar[str] = "assert"
    condition: str
    message: str | None
    select: str
    observed: list[list[str]]
    warn: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Its fields; ``warn`` only when set, so that an ASSERT without WARN keeps the form
        (and the step's content hash) it had before WARN existed."""
        fields = super().to_dict()
        if not self.warn:
            del fields["warn"]
        return fields
