"""Models live in the database next to the data, with their versions.

``sqlml_model_versions`` holds one row per model version (its metadata as JSON) and
``sqlml_model_chunks`` the model's bytes in the library's own format (XGBoost UBJSON, Keras
``.keras``), cut into chunks that fit any server's packet limit. A version is written in one
transaction, so a failed save leaves the previous version in place, and loading checks that
every byte is there. Nothing stored is ever unpickled or executed.

Models are named exactly as written: ``Churn``, ``churn``, ``modèle`` and ``modele `` are four
models on every database. On MySQL the ``name`` columns are text in a binary collation
without padding (the default collations ignore case, accents or trailing spaces;
``VARBINARY``, read as bytes, where the server has none), and a store made with other names
is altered when first opened. Metadata is checked as it is read
(:mod:`sqlml.models.metadata`), and a model's bytes are at most
:data:`~sqlml.models.checks.MAX_MODEL_BYTES`.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
import weakref
from dataclasses import dataclass
from typing import Any

from sqlml.datasources import Datasource
from sqlml.errors import DatasourceError, ModelError
from sqlml.models.checks import MAX_MODEL_BYTES, TAMPERED_HINT
from sqlml.models.metadata import read_metadata
from sqlml.models.registry import family
from sqlml.runtime.cancel import Token
from sqlml.tables import MODEL_CHUNKS, MODEL_VERSIONS

TABLE = MODEL_VERSIONS
CHUNKS = MODEL_CHUNKS
CHUNK_BYTES = 4 << 20  # well below MySQL's default max_allowed_packet, even escaped
KEEP_VERSIONS = 3  # the newest versions kept per model
SAVE_ATTEMPTS = 3  # attempts of a save that lost a race with a concurrent one
# The type of the name columns where the datasource's "key" type does not compare exactly:
_EXACT = weakref.WeakSet[Datasource]()  # datasources whose tables have exact names


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

    def save(
        self, name: str, metadata: dict[str, Any], data: bytes, token: Token | None = None
    ) -> int:
        """Store ``data`` as the next version of ``name``; returns the version.

        Concurrent saves may race for a version number, or (DuckDB) for creating the tables:
        the loser tries again after a short, random pause (the winner commits meanwhile).
        A cancelled ``token`` (that of the statement saving) stops the save just before it
        commits: nothing is saved.
        """
        if len(data) > MAX_MODEL_BYTES:
            raise ModelError(
                f"model {name} is {len(data):,} bytes, more than sqlml stores "
                f"({MAX_MODEL_BYTES:,})",
                hint="train a smaller model: fewer or smaller layers, rounds or features",
            )
        attempt = 1
        while True:
            try:
                self._create_tables()
                with self._ds.transaction():
                    return self._save_version(name, metadata, data, token)
            except DatasourceError:
                if attempt == SAVE_ATTEMPTS:
                    raise
                time.sleep(random.uniform(0.05, 0.2) * attempt)
                attempt += 1

    def _save_version(
        self, name: str, metadata: dict[str, Any], data: bytes, token: Token | None
    ) -> int:
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
        if token is not None:
            token.check()  # a cancelled training saves nothing: the transaction rolls back
        return version

    def _create_tables(self) -> None:
        key = self._ds.exact_key or self._ds.types["key"]
        text, blob = (self._ds.types[kind] for kind in ("text", "blob"))
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
        self._exact_names()

    def _exists(self) -> bool:
        """Whether the store's tables exist (with exact names, once checked)."""
        if not self._ds.table_exists([TABLE]):
            return False
        self._exact_names()
        return True

    def _exact_names(self) -> None:
        """Make the name columns compare exactly where they are of a type that does not: a
        store made before names were exact (MySQL's VARCHAR) or read as text (MySQL's
        VARBINARY, read as bytes) is altered to the datasource's ``exact_key``, keeping its
        rows (no names can clash: the new comparison is as fine). Checked once per
        connection."""
        exact = self._ds.exact_key
        if exact is None or self._ds in _EXACT:
            return
        for table in (TABLE, CHUNKS):
            if not self._ds.compares_exactly([table], "name"):
                self._ds.execute(
                    f"ALTER TABLE {self._ds.quote([table])} MODIFY name {exact} NOT NULL"
                )
        _EXACT.add(self._ds)

    def load(self, name: str, version: int | None = None, check: bool = True) -> StoredModel:
        """``version`` of ``name`` (default: the newest); a :class:`ModelError` if none, or
        if its family finds its bytes damaged (unless ``check`` is False: for its metadata
        only)."""
        p = self._ds.param
        found = None
        chosen = "" if version is None else f" AND version = {p}"
        if self._exists():
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
        version, size, text = found.rows[0]
        version = int(version)
        metadata = read_metadata(name, version, text)
        if not isinstance(size, int) or not 0 <= size <= MAX_MODEL_BYTES:
            raise ModelError(
                f"model {name} version {version} declares {size!r} bytes; sqlml loads models "
                f"of up to {MAX_MODEL_BYTES:,}",
                hint=TAMPERED_HINT,
            )
        chunks = self._ds.execute(
            f"SELECT chunk FROM {self._chunks} WHERE name = {p} AND version = {p} ORDER BY seq",
            [name, version],
        )
        parts = [chunk for (chunk,) in chunks.rows] if chunks else []
        if not all(isinstance(part, bytes | bytearray | memoryview) for part in parts):
            raise ModelError(
                f"model {name} version {version} has chunks that are not bytes", hint=TAMPERED_HINT
            )
        data = b"".join(parts)
        if len(data) != size:
            raise ModelError(
                f"model {name} version {version} is incomplete ({len(data)} of {size} bytes)",
                hint="train it again",
            )
        if check:
            _check_data(name, version, metadata, data)
        return StoredModel(name, version, metadata, data)

    def list(self) -> list[tuple[str, int, dict[str, Any]]]:
        """The newest version of every model whose metadata is readable: name, version and
        metadata, by name."""
        return [(n, v, meta) for n, v, meta in self.catalog() if not isinstance(meta, ModelError)]

    def catalog(self) -> list[tuple[str, int, dict[str, Any] | ModelError]]:
        """The newest version of every model, by name: its name, version, and metadata (what
        SHOW MODELS needs of it), or the :class:`ModelError` saying why it is unreadable."""
        if not self._exists():
            return []
        rows = self._ds.execute(
            f"SELECT name, version, metadata FROM {self._models} AS m WHERE version = "
            f"(SELECT MAX(version) FROM {self._models} AS n WHERE n.name = m.name) ORDER BY name"
        )
        found = rows.rows if rows else []
        return [_entry(_text(name), int(version), text) for name, version, text in found]

    def fingerprint(self, name: str) -> str | None:
        """A value that changes whenever a version of ``name`` is saved or the model dropped,
        whatever happens to other models: its newest version's number, size and a hash of
        its metadata; None if there is no such model."""
        found = None
        if self._exists():
            found = self._ds.execute(
                f"SELECT version, size, metadata FROM {self._models} WHERE name = "
                f"{self._ds.param} ORDER BY version DESC LIMIT 1",
                [name],
            )
        if not found or not found.rows:
            return None
        version, size, metadata = found.rows[0]
        return f"{version} {size} {hashlib.sha256(str(metadata).encode()).hexdigest()}"

    def list_versions(self, name: str) -> list[int]:
        """The stored versions of ``name``, oldest first."""
        if not self._exists():
            return []
        rows = self._ds.execute(
            f"SELECT version FROM {self._models} WHERE name = {self._ds.param} ORDER BY version",
            [name],
        )
        return [int(v) for (v,) in rows.rows] if rows else []

    def drop(self, name: str) -> bool:
        """Delete every version of ``name``; whether there was one."""
        if not self._exists():
            return False
        p = self._ds.param
        with self._ds.transaction():
            found = self._ds.execute(
                f"SELECT COUNT(*) FROM {self._models} WHERE name = {p}", [name]
            )
            for table in (self._chunks, self._models):
                self._ds.execute(f"DELETE FROM {table} WHERE name = {p}", [name])
        return bool(found and found.rows[0][0])


def _check_data(name: str, version: int, metadata: dict[str, Any], data: bytes) -> None:
    """A :class:`ModelError` naming the model if its family finds its bytes damaged
    (before its library reads them: a tree linking nodes it does not have crashes XGBoost)."""
    from sqlml.ir import FeatureColumn
    from sqlml.runtime.features_apply import max_width

    most = max_width([FeatureColumn.from_dict(feature) for feature in metadata["features"]])
    why = family(metadata["family"]).check_data(data, metadata, most)
    if why:
        raise ModelError(
            f"model {name} version {version} cannot be used: its stored model is damaged or "
            f"was altered ({why})",
            hint=TAMPERED_HINT,
        )


def _entry(name: str, version: int, text: Any) -> tuple[str, int, dict[str, Any] | ModelError]:
    try:
        return name, version, read_metadata(name, version, text, used=False)
    except ModelError as error:
        return name, version, error


def _text(name: str | bytes) -> str:
    """A name as read: MySQL's VARBINARY names come back as bytes."""
    return bytes(name).decode("utf-8", "replace") if isinstance(name, bytes | bytearray) else name
