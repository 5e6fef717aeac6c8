"""Models live in the database next to the data, in the table ``sqlml_models``.

A model is its metadata (JSON) and its bytes in the library's own format (XGBoost UBJSON,
Keras ``.keras``); nothing stored is ever unpickled or executed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlml.errors import ModelError
from sqlml.runtime.datasource import Datasource

TABLE = "sqlml_models"


@dataclass(frozen=True)
class StoredModel:
    name: str
    metadata: dict[str, Any]
    data: bytes


class ModelStore:
    """Save and load models in one datasource."""

    def __init__(self, datasource: Datasource) -> None:
        self._ds = datasource
        self._table = datasource.quote([TABLE])

    def save(self, name: str, metadata: dict[str, Any], data: bytes) -> None:
        """Store a model under ``name``, replacing any previous one in one transaction."""
        types, p = self._ds.types, self._ds.param
        self._ds.execute(
            f"CREATE TABLE IF NOT EXISTS {self._table} (name {types['key']} PRIMARY KEY, "
            f"metadata {types['text']} NOT NULL, data {types['blob']} NOT NULL)"
        )
        with self._ds.transaction():
            self._ds.execute(f"DELETE FROM {self._table} WHERE name = {p}", [name])
            self._ds.execute(
                f"INSERT INTO {self._table} (name, metadata, data) VALUES ({p}, {p}, {p})",
                [name, json.dumps(metadata, sort_keys=True), data],
            )

    def list(self) -> list[tuple[str, dict[str, Any]]]:
        """Every stored model's name and metadata, by name."""
        if not self._ds.table_exists([TABLE]):
            return []
        rows = self._ds.execute(f"SELECT name, metadata FROM {self._table} ORDER BY name")
        return [(name, json.loads(metadata)) for name, metadata in rows.rows] if rows else []

    def drop(self, name: str) -> bool:
        """Delete the model ``name``; whether there was one."""
        if not self._ds.table_exists([TABLE]):
            return False
        p = self._ds.param
        with self._ds.transaction():
            found = self._ds.execute(f"SELECT COUNT(*) FROM {self._table} WHERE name = {p}", [name])
            self._ds.execute(f"DELETE FROM {self._table} WHERE name = {p}", [name])
        return bool(found and found.rows[0][0])

    def load(self, name: str) -> StoredModel:
        """The model called ``name``; a :class:`ModelError` if there is none."""
        rows = None
        if self._ds.table_exists([TABLE]):
            rows = self._ds.execute(
                f"SELECT metadata, data FROM {self._table} WHERE name = {self._ds.param}", [name]
            )
        if not rows or not rows.rows:
            raise ModelError(
                f"model {name} does not exist in {self._ds.url}",
                hint=f"train it first with ... TO TRAIN <estimator> ... INTO {name}",
            )
        metadata, data = rows.rows[0]
        return StoredModel(name, json.loads(metadata), bytes(data))
