"""What the shell knows of the database for completion and ``\\d``: tables, columns, models."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sqlml.datasources import Datasource
from sqlml.models.store import ModelStore
from sqlml.tables import is_own_table


@dataclass
class Catalog:
    """A cached view of the database; :meth:`refresh` reads it again.

    ``tables`` are named as a statement names them: a table of the search path's schemas
    (the first that has it) by its name, another schema's as ``schema.table``. ``schemas``:
    each schema that has tables, and those of the search path, with its tables' names.
    """

    tables: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # name -> columns
    models: list[str] = field(default_factory=list)
    schemas: dict[str, list[str]] = field(default_factory=dict)
    search_path: list[str] = field(default_factory=list)

    def refresh(self, datasource: Datasource) -> None:
        """Read the tables (but sqlml's own: the model store, the run record), their columns
        and types, the schemas, and the stored models' names."""
        schema = datasource.current_schema
        searched = datasource.execute(datasource.search_path_sql.format(schema=schema))
        path = [str(row[0]) for row in searched.rows] if searched else []
        if datasource.schema_columns_sql is None:
            found = datasource.execute(datasource.columns_sql.format(schema=schema))
            rows = [(path[0] if path else "", *row) for row in found.rows] if found else []
        else:
            found = datasource.execute(datasource.schema_columns_sql)
            rows = list(found.rows) if found else []
        self.search_path, self.tables, self.schemas = path, *_named(rows, path)
        self.models = sorted({name for name, _, _ in ModelStore(datasource).list()})

    def find(self, name: str) -> tuple[str, list[tuple[str, str]]] | None:
        """The table ``name`` names (``table`` or ``schema.table``, case ignored), as
        :attr:`tables` names it, and its columns; None if there is none."""
        wanted = name.lower()
        for table, columns in self.tables.items():
            if wanted in (n.lower() for n in self.names(table)):
                return table, columns
        return None

    def names(self, table: str) -> list[str]:
        """The names of ``table`` (as :attr:`tables` names it): that one, and for a table of
        the search path, ``schema.table`` too."""
        if "." in table:
            return [table]
        schema = next((s for s in self.search_path if table in self.schemas.get(s, ())), None)
        return [table] if schema is None else [table, f"{schema}.{table}"]

    def parts(self, table: str) -> list[str]:
        """The schema (when not of the search path) and name of ``table``, to be quoted."""
        schema, dot, name = table.partition(".")
        return [schema, name] if dot else [table]

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


def _named(
    rows: Iterable[Sequence[str]], path: list[str]
) -> tuple[dict[str, list[tuple[str, str]]], dict[str, list[str]]]:
    """The tables of ``rows`` (schema, table, column, type) by the name a statement gives
    them on the search ``path``, and each schema's tables."""
    columns: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for schema, table, column, kind in rows:
        if not is_own_table([table]):
            columns.setdefault((str(schema), str(table)), []).append((str(column), str(kind)))
    rank = {schema: i for i, schema in enumerate(path)}
    schemas: dict[str, list[str]] = {schema: [] for schema in path}
    tables: dict[str, list[tuple[str, str]]] = {}
    for schema, table in sorted(columns, key=lambda key: (rank.get(key[0], len(rank)), key)):
        schemas.setdefault(schema, []).append(table)
        visible = schema in rank and table not in tables
        tables[table if visible else f"{schema}.{table}"] = columns[schema, table]
    return dict(sorted(tables.items())), dict(sorted(schemas.items()))
