"""Columns as numpy arrays: building them from a driver's rows, joining batches, and the
kinds of a write's staging columns.

Imported where arrays are built (a read, a write), so that a datasource that only runs
statements, as a plain SELECT on the command line does, never loads numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sqlml.datasources.base import Columns


class StagingColumns:
    """The kinds ("int", "float", "bool", "text", "blob"; "null" while only NULLs came) of a
    staging table's columns, settled batch by batch."""

    def __init__(self, first: Columns) -> None:
        self.kinds = {name: _batch_kind(values) for name, values in first.items()}

    def definition(self, types: dict[str, str], quote: Callable[[Sequence[str]], str]) -> str:
        return ", ".join(
            f"{quote([name])} {types['text' if kind == 'null' else kind]}"
            for name, kind in self.kinds.items()
        )

    def settle(self, batch: Columns, widen: Callable[[str, str, str], None]) -> Columns:
        """``batch`` converted to the columns' kinds; a column whose kind cannot hold the
        batch's values is widened first (``widen(column, kind, wider kind)``)."""
        if list(batch) != list(self.kinds):
            raise ValueError("every batch of a write has the same columns")
        settled: Columns = {}
        for name, values in batch.items():
            kind, now = _batch_kind(values), self.kinds[name]
            wider = _wider(now, kind)
            if wider != now:
                widen(name, now, wider)
                self.kinds[name] = now = wider
            settled[name] = _as_kind(values, now)
        return settled


_NUMBERS = ("bool", "int", "float")


def _wider(now: str, batch: str) -> str:
    """The kind a column of kind ``now`` needs to also hold a batch of kind ``batch``: what
    :func:`join_chunks` makes of the two."""
    if batch == now:
        return now
    if now == "null":
        return batch if batch in ("text", "blob") else "float"
    if now in _NUMBERS:
        if batch == "null":
            return "float"
        if batch in _NUMBERS:
            return _NUMBERS[max(_NUMBERS.index(now), _NUMBERS.index(batch))]
        return "text"
    return now if batch == "null" else "text"


def _as_kind(values: np.ndarray, kind: str) -> np.ndarray:
    """A batch's values as a column of ``kind`` holds them (NULLs as NaN or None)."""
    if kind == "float" and values.dtype == object:  # only NULLs
        return np.full(len(values), np.nan)
    if kind in ("float", "int") and values.dtype.kind in "biu":
        return values.astype(np.float64 if kind == "float" else np.int64)
    if kind in ("text", "blob") and values.dtype != object:
        return _objects(values)
    return values


def _batch_kind(values: np.ndarray) -> str:
    return "null" if _all_null(values) and len(values) else _kind(values)


def fetch_batches(cursor: Any, kinds: Sequence[str], batch_rows: int) -> Iterator[Columns]:
    """A DB-API cursor's result in batches of columns, each fetched and converted at once.

    ``kinds`` gives each column's declared kind: "int" (int64, or float64 with NaN if a NULL
    occurs in the batch), "float" (float64, NULL as NaN), "object" (the driver's values) or
    "any" (decided from each batch's values, for SQLite).
    """
    names = [d[0] for d in cursor.description]
    fetched = False
    while rows := cursor.fetchmany(batch_rows):
        fetched = True
        batch: Columns = {}
        for name, kind, values in zip(names, kinds, zip(*rows, strict=True), strict=True):
            if kind == "any":
                kind = inferred_kind(set(map(type, values)))
            batch[name] = batch_array(values, kind)
        yield batch
    if not fetched:
        yield {
            name: np.empty(0, dtype=_EMPTY.get(kind, object))
            for name, kind in zip(names, kinds, strict=True)
        }


def join_batches(batches: Iterable[Columns]) -> Columns:
    """One result from its batches: int64 batches join float64 ones as float64; a column with
    any batch of objects is objects (NaN in its numeric batches becomes None)."""
    chunks: dict[str, list[np.ndarray]] = {}
    for batch in batches:
        if not chunks:
            chunks = {name: [] for name in batch}
        for name, values in batch.items():
            chunks[name].append(values)
    columns: Columns = {}
    for name in list(chunks):
        columns[name] = join_chunks(chunks.pop(name))  # free each column's batches once joined
    return columns


def batch_array(values: Sequence[Any], kind: str) -> np.ndarray:
    """One batch of a column's values as an array of its kind ("int", "float" or "object")."""
    if kind == "int" and None not in values:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:  # BIGINT UNSIGNED past int64: doubles, as MySQL's binary rows
            return np.array(values, dtype=np.float64)
    if kind in ("int", "float"):
        return np.array(values, dtype=np.float64)  # None becomes NaN
    return object_array(values)


def join_chunks(chunks: list[np.ndarray]) -> np.ndarray:
    """A column from its batches' arrays (see :func:`join_batches`)."""
    if len(chunks) == 1:
        return chunks[0]
    if all(c.dtype != object or _all_null(c) for c in chunks) and not all(map(_all_null, chunks)):
        chunks = [np.full(len(c), np.nan) if c.dtype == object else c for c in chunks]
    if any(chunk.dtype == object for chunk in chunks):
        chunks = [_objects(chunk) for chunk in chunks]
    return np.concatenate(chunks)


def _all_null(values: np.ndarray) -> bool:
    """Whether an object batch holds only NULLs (SQLite: such a batch has no type)."""
    return values.dtype == object and all(v is None for v in values.tolist())


def _objects(values: np.ndarray) -> np.ndarray:
    if values.dtype == object:
        return values
    return object_array(python_values(values))


_EMPTY = {"int": np.int64, "float": np.float64, "object": object}


def inferred_kind(types: set[type]) -> str:
    """The kind of a batch holding values of ``types``: SQLite types each value alone."""
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
    if values.dtype.kind == "S" or _all_bytes(values):
        return "blob"
    return "text"


def _all_bytes(values: np.ndarray) -> bool:
    """Whether an object column holds bytes, and nothing else but NULLs."""
    if values.dtype != object:
        return False
    items = values.tolist()
    first = next((v for v in items if v is not None), None)  # text columns stop here
    return isinstance(first, bytes) and all(v is None or isinstance(v, bytes) for v in items)
