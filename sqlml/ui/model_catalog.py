"""The models pages' view of the model store: each version's metadata, never its bytes.

A page reads only ``sqlml_model_versions`` (name, version, size and the metadata JSON), so
nothing stored is loaded or executed. Metadata is checked as SHOW MODELS checks it
(:func:`sqlml.models.metadata.read_metadata`); a damaged one is shown with what is wrong.

Lists of versions (every model's newest, a model's versions) show a few fields of each: those
are kept, by the metadata's text, for the next page (a version's text does not change), so
that a page of 1,000 versions checks and parses only the versions it has not seen before.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from sqlml.datasources import Datasource
from sqlml.errors import ModelError
from sqlml.models.metadata import read_metadata
from sqlml.tables import MODEL_VERSIONS

LISTED_KEPT = 20_000  # versions whose listed fields are kept between pages
_LISTED_KEYS = ("estimator", "label", "rows", "trained_at", "metrics")
_listed: OrderedDict[tuple[str, int, int, int], Version] = OrderedDict()
_listed_lock = threading.Lock()


@dataclass(frozen=True)
class Version:
    """One stored version of a model: its metadata, or why it cannot be read."""

    name: str
    version: int
    size: int
    metadata: dict[str, Any] = field(default_factory=dict)
    damage: str | None = None  # what is wrong with the metadata (then it is empty)

    @property
    def estimator(self) -> str:
        return str(self.metadata.get("estimator", "(metadata unreadable)"))

    @property
    def task(self) -> str:
        labels = self.metadata.get("labels")
        if isinstance(labels, dict) and isinstance(labels.get("task"), str):
            return labels["task"]
        return "searched" if "search" in self.metadata else ""

    @property
    def attributes(self) -> dict[str, Any]:
        found = self.metadata.get("attributes")
        return found if isinstance(found, dict) else {}

    @property
    def metrics(self) -> dict[str, float]:
        """The training and validation metrics that are numbers, by name."""
        found = self.metadata.get("metrics")
        if not isinstance(found, dict):
            return {}
        return {
            str(name): float(value)
            for name, value in sorted(found.items())
            if isinstance(value, int | float) and not isinstance(value, bool)
        }

    @property
    def trials(self) -> list[dict[str, Any]]:
        """A hyperparameter search's trials (none if this version was not searched)."""
        search = self.metadata.get("search")
        results = search.get("results") if isinstance(search, dict) else None
        return [t for t in results if isinstance(t, dict)] if isinstance(results, list) else []


def newest_versions(datasource: Datasource) -> list[Version]:
    """The newest version of every model, by name (their listed fields)."""
    if not datasource.table_exists([MODEL_VERSIONS]):
        return []
    table = datasource.quote([MODEL_VERSIONS])
    found = datasource.execute(
        f"SELECT name, version, size, metadata FROM {table} AS m WHERE version = "
        f"(SELECT MAX(version) FROM {table} AS n WHERE n.name = m.name) ORDER BY name"
    )
    return [_listed_version(*row) for row in (found.rows if found else ())]


def versions(datasource: Datasource, name: str) -> list[Version]:
    """Every stored version of the model ``name`` (their listed fields), the newest first
    (none: no such model)."""
    if not datasource.table_exists([MODEL_VERSIONS]):
        return []
    found = datasource.execute(
        f"SELECT name, version, size, metadata FROM {datasource.quote([MODEL_VERSIONS])} "
        f"WHERE name = {datasource.param} ORDER BY version DESC",
        [name],
    )
    return [_listed_version(*row) for row in (found.rows if found else ())]


@dataclass(frozen=True)
class VersionNumbers:
    """How many versions a model has and the numbers of its newest ones, newest first."""

    count: int
    newest: list[int]


def version_numbers(datasource: Datasource, name: str, limit: int) -> VersionNumbers:
    """The number of stored versions of the model ``name`` and the ``limit`` newest version
    numbers (no metadata read: a comparison lists versions to choose from, not their fields)."""
    if not datasource.table_exists([MODEL_VERSIONS]):
        return VersionNumbers(0, [])
    table, p = datasource.quote([MODEL_VERSIONS]), datasource.param
    counted = datasource.execute(f"SELECT COUNT(*) FROM {table} WHERE name = {p}", [name])
    found = datasource.execute(
        f"SELECT version FROM {table} WHERE name = {p} ORDER BY version DESC LIMIT {int(limit)}",
        [name],
    )
    count = int(counted.rows[0][0]) if counted and counted.rows else 0
    return VersionNumbers(count, [int(row[0]) for row in (found.rows if found else ())])


def version(datasource: Datasource, name: str, number: int) -> Version | None:
    """Version ``number`` of the model ``name`` with all its metadata; None if not stored."""
    if not datasource.table_exists([MODEL_VERSIONS]):
        return None
    p = datasource.param
    found = datasource.execute(
        f"SELECT name, version, size, metadata FROM {datasource.quote([MODEL_VERSIONS])} "
        f"WHERE name = {p} AND version = {p}",
        [name, number],
    )
    return _version(*found.rows[0]) if found and found.rows else None


def _listed_version(name: str | bytes, number: Any, size: Any, text: Any) -> Version:
    """A version with the fields lists show (estimator, task, label, rows, trained_at,
    metrics), read once for each text."""
    if not isinstance(text, str | bytes):
        return _listed_fields(_version(name, number, size, text))
    key = (str(name), int(number), len(text), hash(text))
    with _listed_lock:
        found = _listed.get(key)
        if found is not None:
            _listed.move_to_end(key)
            return found
    listed = _listed_fields(_version(name, number, size, text))
    with _listed_lock:
        _listed[key] = listed
        if len(_listed) > LISTED_KEPT:
            _listed.popitem(last=False)
    return listed


def _listed_fields(read: Version) -> Version:
    meta = read.metadata
    kept = {k: meta[k] for k in _LISTED_KEYS if k in meta}
    if isinstance(meta.get("labels"), dict):
        kept["labels"] = {"task": meta["labels"].get("task")}
    if "search" in meta:
        kept["search"] = {}
    return Version(read.name, read.version, read.size, kept, read.damage)


def _version(name: str | bytes, version: Any, size: Any, text: Any) -> Version:
    named = bytes(name).decode("utf-8", "replace") if isinstance(name, bytes | bytearray) else name
    number = int(version)
    stored = int(size) if isinstance(size, int) else 0
    try:
        return Version(named, number, stored, read_metadata(named, number, text, used=False))
    except ModelError as error:
        return Version(named, number, stored, damage=error.message)


def number(value: Any) -> float | None:
    """``value`` as a finite number, or None (text, booleans, lists, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
