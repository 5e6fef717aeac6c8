"""The IR of TO IMPORT."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from sqlml.ir import Statement


@dataclass(frozen=True)
class ImportModelStatement(Statement):
    """Read the model in ``file`` (of ``format``; "": told by the file), check that it reads
    ``columns`` of the rows of ``select``, and store it as a new version of ``model``;
    ``label`` names what it predicts ("": nothing). ``file_at`` and ``columns_at`` are where
    the statement names the file and the columns (line, column), for errors found running."""

    kind: ClassVar[str] = "import_model"
    select: str
    file: str
    format: str
    columns: list[str]
    label: str
    model: str
    attributes: dict[str, Any]
    file_at: list[int]
    columns_at: list[int]
