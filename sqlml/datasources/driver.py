"""Database drivers imported when a datasource first uses them: importing sqlml, or opening
a DuckDB file, never loads pymysql or psycopg."""

from __future__ import annotations

from typing import Any

from sqlml import imports


class Driver:
    """The module ``name``, imported at the first use of one of its attributes."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(imports.load(self._name), attribute)

    def __repr__(self) -> str:
        return f"<driver {self._name}>"
