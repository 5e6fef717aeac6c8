"""What the shell knows of the database for completion and ``\\d``: tables, columns, models."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlml.models.store import ModelStore
from sqlml.runtime.datasource import Datasource


@dataclass
class Catalog:
    """A cached view of the database; :meth:`refresh` reads it again."""

    tables: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # name -> columns
    models: list[str] = field(default_factory=list)

    def refresh(self, datasource: Datasource) -> None:
        """Read the tables, their columns and types, and the stored models' names."""
        found = datasource.execute(datasource.columns_sql.format(schema=datasource.current_schema))
        tables: dict[str, list[tuple[str, str]]] = {}
        for table, column, kind in found.rows if found else ():
            tables.setdefault(table, []).append((column, str(kind)))
        self.tables = tables
        self.models = sorted({name for name, _, _ in ModelStore(datasource).list()})

    def columns(self, tables: set[str] | None = None) -> dict[str, list[str]]:
        """Column name -> the tables (of ``tables``, default all) that have it."""
        found: dict[str, list[str]] = {}
        for table, columns in self.tables.items():
            if tables is None or table.lower() in tables:
                for column, _ in columns:
                    found.setdefault(column, []).append(table)
        return found
