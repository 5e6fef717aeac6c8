"""Models live in the database next to the data, with their versions.

``sqlml_model_versions`` holds one row per model version (its metadata as JSON) and
``sqlml_model_chunks`` the model's bytes in the library's own format (XGBoost UBJSON, Keras
``.keras``), cut into chunks that fit any server's packet limit. A version is written in one
transaction, so a failed save leaves the previous version in place, and loading checks that
every byte is there. Nothing stored is ever unpickled or executed.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from typing import Any

from sqlml.errors import DatasourceError, ModelError
from sqlml.runtime import cancel
from sqlml.runtime.datasource import Datasource
from sqlml.tables import MODEL_CHUNKS, MODEL_VERSIONS

TABLE = MODEL_VERSIONS
CHUNKS = MODEL_CHUNKS
CHUNK_BYTES = 4 << 20  # well below MySQL's default max_allowed_packet, even escaped
KEEP_VERSIONS = 3  # the newest versions kept per model
SAVE_ATTEMPTS = 3  # attempts of a save that lost a race with a concurrent one


@dataclass(frozen=True)
class StoredModel:
    name: str
    version: int
    metadata: dict[str, Any]
    data: bytes


class ModelStore:
    """Save, load, list and drop models in one datasource."""

    def __init__(self, datasource: Datasource) -> None:
        self._ds = datasource
        self._models = datasource.quote([TABLE])
        self._chunks = datasource.quote([CHUNKS])

    def save(self, name: str, metadata: dict[str, Any], data: bytes) -> int:
        """Store ``data`` as the next version of ``name``; returns the version.

        Concurrent saves may race for a version number, or (DuckDB) for creating the tables:
        the loser tries again after a short, random pause (the winner commits meanwhile).
        """
        attempt = 1
        while True:
            try:
                self._create_tables()
                with self._ds.transaction():
                    return self._save_version(name, metadata, data)
            except DatasourceError:
                if attempt == SAVE_ATTEMPTS:
                    raise
                time.sleep(random.uniform(0.05, 0.2) * attempt)
                attempt += 1

    def _save_version(self, name: str, metadata: dict[str, Any], data: bytes) -> int:
        p = self._ds.param
        latest = self._ds.execute(
            f"SELECT COALESCE(MAX(version), 0) FROM {self._models} WHERE name = {p}", [name]
        )
        version = int(latest.rows[0][0]) + 1 if latest else 1
        for seq, start in enumerate(range(0, max(len(data), 1), CHUNK_BYTES)):
            self._ds.execute(
                f"INSERT INTO {self._chunks} (name, version, seq, chunk) "
                f"VALUES ({p}, {p}, {p}, {p})",
                [name, version, seq, data[start : start + CHUNK_BYTES]],
            )
        self._ds.execute(
            f"INSERT INTO {self._models} (name, version, size, metadata) "
            f"VALUES ({p}, {p}, {p}, {p})",
            [name, version, len(data), json.dumps(metadata, sort_keys=True)],
        )
        for table in (self._chunks, self._models):
            self._ds.execute(
                f"DELETE FROM {table} WHERE name = {p} AND version <= {p}",
                [name, version - KEEP_VERSIONS],
            )
        cancel.check()  # a cancelled training saves nothing: the transaction rolls back
        return version

    def _create_tables(self) -> None:
        key, text, blob = (self._ds.types[kind] for kind in ("key", "text", "blob"))
        self._ds.create_tables(
            [
                f"CREATE TABLE IF NOT EXISTS {self._models} (name {key} NOT NULL, "
                f"version INTEGER NOT NULL, size BIGINT NOT NULL, metadata {text} NOT NULL, "
                "PRIMARY KEY (name, version))",
                f"CREATE TABLE IF NOT EXISTS {self._chunks} (name {key} NOT NULL, "
                f"version INTEGER NOT NULL, seq INTEGER NOT NULL, chunk {blob} NOT NULL, "
                "PRIMARY KEY (name, version, seq))",
            ]
        )

    def load(self, name: str, version: int | None = None) -> StoredModel:
        """``version`` of ``name`` (default: the newest); a :class:`ModelError` if none."""
        p = self._ds.param
        found = None
        chosen = "" if version is None else f" AND version = {p}"
        if self._ds.table_exists([TABLE]):
            found = self._ds.execute(
                f"SELECT version, size, metadata FROM {self._models} WHERE name = {p}{chosen} "
                "ORDER BY version DESC LIMIT 1",
                [name] if version is None else [name, version],
            )
        if not found or not found.rows:
            stored = self.list_versions(name) if version is not None else []
            if stored:
                raise ModelError(
                    f"model {name} has no version {version} in {self._ds.url}",
                    hint=f"its stored versions are {', '.join(map(str, stored))}",
                )
            raise ModelError(
                f"model {name} does not exist in {self._ds.url}",
                hint=f"train it first with ... TO TRAIN <estimator> ... INTO {name}",
            )
        version, size, metadata = found.rows[0]
        chunks = self._ds.execute(
            f"SELECT chunk FROM {self._chunks} WHERE name = {p} AND version = {p} ORDER BY seq",
            [name, version],
        )
        data = b"".join(bytes(chunk) for (chunk,) in chunks.rows) if chunks else b""
        if len(data) != size:
            raise ModelError(
                f"model {name} version {version} is incomplete ({len(data)} of {size} bytes)",
                hint="train it again",
            )
        return StoredModel(name, int(version), json.loads(metadata), data)

    def list(self) -> list[tuple[str, int, dict[str, Any]]]:
        """The newest version of every model: name, version and metadata, by name."""
        if not self._ds.table_exists([TABLE]):
            return []
        rows = self._ds.execute(
            f"SELECT name, version, metadata FROM {self._models} AS m WHERE version = "
            f"(SELECT MAX(version) FROM {self._models} AS n WHERE n.name = m.name) ORDER BY name"
        )
        return [(n, int(v), json.loads(meta)) for n, v, meta in rows.rows] if rows else []

    def list_versions(self, name: str) -> list[int]:
        """The stored versions of ``name``, oldest first."""
        if not self._ds.table_exists([TABLE]):
            return []
        rows = self._ds.execute(
            f"SELECT version FROM {self._models} WHERE name = {self._ds.param} ORDER BY version",
            [name],
        )
        return [int(v) for (v,) in rows.rows] if rows else []

    def drop(self, name: str) -> bool:
        """Delete every version of ``name``; whether there was one."""
        if not self._ds.table_exists([TABLE]):
            return False
        p = self._ds.param
        with self._ds.transaction():
            found = self._ds.execute(
                f"SELECT COUNT(*) FROM {self._models} WHERE name = {p}", [name]
            )
            for table in (self._chunks, self._models):
                self._ds.execute(f"DELETE FROM {table} WHERE name = {p}", [name])
        return bool(found and found.rows[0][0])
