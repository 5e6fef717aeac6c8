"""What the shell knows of the database for completion and ``\\d``: tables, columns, models."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlml.datasources import Datasource
from sqlml.models.store import ModelStore
from sqlml.tables import is_own_table


@dataclass
class Catalog:
    """A cached view of the database; :meth:`refresh` reads it again."""

    tables: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # name -> columns
    models: list[str] = field(default_factory=list)

    def refresh(self, datasource: Datasource) -> None:
        """Read the tables (but sqlml's own: the model store, the run record), their columns
        and types, and the stored models' names."""
        found = datasource.execute(datasource.columns_sql.format(schema=datasource.current_schema))
        tables: dict[str, list[tuple[str, str]]] = {}
        for table, column, kind in found.rows if found else ():
            if is_own_table([table]):
                continue
            tables.setdefault(table, []).append((column, str(kind)))
        self.tables = tables
        self.models = sorted({name for name, _, _ in ModelStore(datasource).list()})

    def spelling(self) -> dict[str, str]:
        """Table name in lower case -> the name as the catalog spells it."""
        return {name.lower(): name for name in self.tables}

    def named(self, words: Iterable[str]) -> list[str]:
        """The tables ``words`` name (case ignored), as the catalog spells them, in the order
        they are first named."""
        spelled = self.spelling()
        found = (spelled.get(word.lower()) for word in words)
        return list(dict.fromkeys(name for name in found if name is not None))

    def columns(self, tables: Sequence[str] | None = None) -> dict[str, list[str]]:
        """Column name -> the tables that have it: those of ``tables`` (as the catalog spells
        them), in their order, else every table's."""
        found: dict[str, list[str]] = {}
        for table in self.tables if tables is None else tables:
            for column, _ in self.tables.get(table, ()):
                found.setdefault(column, []).append(table)
        return found
