"""What every datasource offers: run SQL, read columns, write tables atomically.

Each database is a small subclass that overrides only what differs: its driver calls,
identifier quoting, type names and how a table is replaced in one step.
"""

from __future__ import annotations

import re
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from sqlml.runtime.datasource.url import DatasourceURL

# Columns of a result: name -> 1-D array (float64/int64/bool, or object for text).
Columns = dict[str, np.ndarray]

# Statements whose result rows are shown to the user.
_QUERY_WORDS = {
    "checksum",
    "select",
    "with",
    "values",
    "show",
    "describe",
    "desc",
    "explain",
    "pragma",
    "from",
    "table",
    "summarize",
    "call",
}


@dataclass(frozen=True)
class ResultSet:
    """Rows a query returned, for display."""

    columns: list[str]
    rows: list[tuple[Any, ...]]


def returns_rows(sql: str) -> bool:
    """Whether ``sql`` is a query whose rows should be shown."""
    match = re.match(r"[\s(]*([A-Za-z]+)", sql)
    return bool(match) and match.group(1).lower() in _QUERY_WORDS


class Datasource(ABC):
    """A connection to one database."""

    dialect: ClassVar[str]  # sqlglot dialect name
    param: ClassVar[str]  # bound parameter placeholder
    types: ClassVar[dict[str, str]]  # "int", "float", "bool", "text", "blob", "key" -> SQL
    current_schema: ClassVar[str]  # SQL expression naming the default schema
    fingerprint_sql: ClassVar[str | None] = None  # a query on {table}; None: unsupported

    def __init__(self, url: DatasourceURL) -> None:
        self.url = url

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url}>"

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> ResultSet | None:
        """Run one statement; return its rows if it is a query."""

    @abstractmethod
    def read(self, select: str) -> Columns:
        """Run a SELECT and return its result as columns."""

    @abstractmethod
    def _insert(self, table: str, columns: Columns) -> None:
        """Insert ``columns`` into the existing, quoted ``table`` as fast as the driver allows."""

    @abstractmethod
    def _swap(self, staging: list[str], target: list[str]) -> None:
        """Make the table ``staging`` the table ``target`` (same schema) in one atomic step."""

    @abstractmethod
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the body in a transaction: all of it is committed, or none."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""

    def quote(self, parts: Sequence[str]) -> str:
        """Quote a possibly qualified identifier, part by part."""
        return ".".join('"' + part.replace('"', '""') + '"' for part in parts)

    def table_fingerprint(self, table: Sequence[str]) -> str | None:
        """A value that changes whenever ``table``'s rows change, or None if unknown."""
        if self.fingerprint_sql is None or not self.table_exists(table):
            return None
        found = self.execute(self.fingerprint_sql.format(table=self.quote(table)))
        return repr(found.rows) if found else None

    def table_exists(self, table: Sequence[str]) -> bool:
        """Whether ``table`` (``name`` or ``schema.name``) exists."""
        *schema, name = table
        found = self.execute(
            "SELECT COUNT(*) FROM information_schema.tables "
            f"WHERE table_schema = COALESCE({self.param}, {self.current_schema}) "
            f"AND table_name = {self.param}",
            [schema[-1] if schema else None, name],
        )
        return bool(found and found.rows[0][0])

    def write_table(self, table: Sequence[str], columns: Columns) -> None:
        """Create or replace ``table`` with ``columns``; readers see the old or the new table."""
        *schema, name = table
        staging = [*schema, f"{name}__sqlml_new_{uuid.uuid4().hex[:12]}"]
        definition = ", ".join(
            f"{self.quote([column])} {self.types[_kind(values)]}"
            for column, values in columns.items()
        )
        self.execute(f"CREATE TABLE {self.quote(staging)} ({definition})")
        try:
            self._insert(self.quote(staging), columns)
            self._swap(staging, list(table))
        except BaseException:
            self.execute(f"DROP TABLE IF EXISTS {self.quote(staging)}")
            raise


def fetch_columns(cursor: Any, kinds: Sequence[str], batch_rows: int = 10_000) -> Columns:
    """A DB-API cursor's result as columns, fetched and converted to arrays batch by batch.

    Only one batch of rows is held as Python values at a time. ``kinds`` gives each column's
    declared kind: "int" (int64, or float64 with NaN if a NULL occurs), "float" (float64,
    NULL as NaN), "object" (the driver's values) or "any" (decided from the values, for SQLite).
    """
    names = [d[0] for d in cursor.description]
    chunks: list[list[np.ndarray]] = [[] for _ in names]
    seen: list[set[type]] = [set() for _ in names]  # Python types met in "any" columns
    while rows := cursor.fetchmany(batch_rows):
        for j, values in enumerate(zip(*rows, strict=True)):
            kind = kinds[j]
            if kind == "any":
                types = set(map(type, values))
                seen[j] |= types
                kind = _inferred(types) if len(types) == 1 else "object"  # keep mixed values
            chunks[j].append(batch_array(values, kind))
    columns: Columns = {}
    for j, (name, kind) in enumerate(zip(names, kinds, strict=True)):
        columns[name] = join_chunks(chunks[j], _inferred(seen[j]) if kind == "any" else kind)
        chunks[j] = []  # free the batches once their column is joined
    return columns


def batch_array(values: Sequence[Any], kind: str) -> np.ndarray:
    """One batch of a column's values as an array of its kind ("int", "float" or "object")."""
    if kind == "int" and None not in values:
        return np.array(values, dtype=np.int64)
    if kind in ("int", "float"):
        return np.array(values, dtype=np.float64)  # None becomes NaN
    return object_array(values)


def join_chunks(chunks: list[np.ndarray], kind: str) -> np.ndarray:
    """A column of ``kind`` from its batches' arrays; int64 batches join float64 ones as float64."""
    if not chunks:
        return np.empty(0, dtype=_EMPTY[kind])
    if kind == "object":
        chunks = [chunk.astype(object, copy=False) for chunk in chunks]
    elif kind == "float":  # "any" columns: batches of mixed numbers and NULLs were kept as objects
        chunks = [np.array(c.tolist(), np.float64) if c.dtype == object else c for c in chunks]
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


_EMPTY = {"int": np.int64, "float": np.float64, "object": object}


def _inferred(types: set[type]) -> str:
    """The kind of a column holding values of ``types``: SQLite types each value alone."""
    if types == {int}:
        return "int"
    if types & {int, float} and types <= {int, float, type(None)}:
        return "float"
    return "object"


def object_array(values: Sequence[Any]) -> np.ndarray:
    """A 1-D object array holding ``values`` as they are (numpy would split sequences)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def python_values(values: np.ndarray) -> list[Any]:
    """Plain Python values for a driver; NaN becomes NULL."""
    items = values.tolist()
    if values.dtype.kind == "f":
        return [None if v != v else v for v in items]
    return items


def _kind(values: np.ndarray) -> str:
    if values.dtype.kind == "b":
        return "bool"
    if values.dtype.kind in "iu":
        return "int"
    if values.dtype.kind == "f":
        return "float"
    return "text"
