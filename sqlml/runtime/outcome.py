"""What running a statement produced: the value every statement handler returns."""

from __future__ import annotations

from dataclasses import dataclass

from sqlml.datasources import ResultSet


@dataclass(frozen=True)
class Outcome:
    """What a statement produced: rows to show and/or a one-line summary."""

    result: ResultSet | None = None
    summary: str | None = None
