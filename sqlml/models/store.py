"""Models live in the database next to the data, with their versions.

``sqlml_model_versions`` holds one row per model version (its metadata as JSON) and
``sqlml_model_chunks`` the model's bytes in the library's own format (XGBoost UBJSON, Keras
``.keras``), cut into chunks that fit any server's packet limit. A version is written in one
transaction, so a failed save leaves the previous version in place, and loading checks that
every byte is there. Nothing stored is ever unpickled or executed.

A version is named by its number or by an alias (``sqlml_model_aliases``: ``champion`` -> 3,
with the version it pointed to before its last move, which ROLLBACK restores). A model keeps
its newest versions (:data:`KEEP_VERSIONS`, or what ``sqlml_model_retention`` says), and
never deletes a version an alias points to or pointed to before its last move. Moving an
alias is one transaction, and loading by alias one query: a statement running meanwhile
uses the version before or the version after, never a mix or none.

Models are named exactly as written: ``Churn``, ``churn``, ``modèle`` and ``modele `` are four
models on every database. On MySQL the ``name`` columns are text in a binary collation
without padding (the default collations ignore case, accents or trailing spaces;
``VARBINARY``, read as bytes, where the server has none), and a store made with other names
is altered when first opened. Metadata is checked as it is read
(:mod:`sqlml.models.metadata`), and a model's bytes are at most
:data:`~sqlml.models.checks.MAX_MODEL_BYTES`.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import random
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlml.datasources import Datasource
from sqlml.errors import DatasourceError, ModelError
from sqlml.models.checks import MAX_MODEL_BYTES, TAMPERED_HINT
from sqlml.models.metadata import read_metadata
from sqlml.models.registry import family
from sqlml.runtime.cancel import Token
from sqlml.tables import MODEL_ALIASES, MODEL_CHUNKS, MODEL_RETENTION, MODEL_VERSIONS

TABLE = MODEL_VERSIONS
CHUNKS = MODEL_CHUNKS
CHUNK_BYTES = 4 << 20  # well below MySQL's default max_allowed_packet, even escaped
KEEP_VERSIONS = 3  # the newest versions kept per model, unless the user sets it
SAVE_ATTEMPTS = 3  # attempts of a change that lost a race with a concurrent one
Version = int | str | None  # a version's number, an alias, or None: the newest
T = TypeVar("T")
Entry = tuple[str, int, dict[str, Any] | ModelError]  # a version: or why it is unreadable
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
        self._aliases = datasource.quote([MODEL_ALIASES])
        self._retention = datasource.quote([MODEL_RETENTION])

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
        return self._change(lambda: self._save_version(name, metadata, data, token))

    def _change(self, change: Callable[[], T]) -> T:
        """``change()`` in one transaction, tried again after a short, random pause if it lost
        a race with a concurrent change (for a version number, an alias, or, on DuckDB, for
        creating the tables): the winner commits meanwhile."""
        attempt = 1
        while True:
            try:
                self._create_tables()
                with self._ds.transaction():
                    return change()
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
        self._prune(name)
        if token is not None:
            token.check()  # a cancelled training saves nothing: the transaction rolls back
        return version

    def _prune(self, name: str) -> list[int]:
        """Delete the versions of ``name`` its retention does not keep: all but the newest
        ones and those aliases point to (or pointed to before their last move); the deleted
        versions, oldest first."""
        keep = self.retention(name)
        if keep is None:
            return []
        p = self._ds.param
        versions = self.list_versions(name)
        protected = {v for alias in self._alias_rows(name) for v in alias[1:] if v is not None}
        deleted = [v for v in versions[: max(len(versions) - keep, 0)] if v not in protected]
        for version in deleted:
            for table in (self._chunks, self._models):
                self._ds.execute(
                    f"DELETE FROM {table} WHERE name = {p} AND version = {p}", [name, version]
                )
        return deleted

    def _create_tables(self) -> None:
        key = self._ds.exact_key or self._ds.types["key"]
        text, blob = (self._ds.types[kind] for kind in ("text", "blob"))
        self._ds.create_tables(
            [
                f"CREATE TABLE IF NOT EXISTS {self._aliases} (name {key} NOT NULL, "
                f"alias {key} NOT NULL, version INTEGER NOT NULL, previous INTEGER, "
                f"moved_at {text} NOT NULL, PRIMARY KEY (name, alias))",
                f"CREATE TABLE IF NOT EXISTS {self._retention} (name {key} NOT NULL, "
                "keep INTEGER, PRIMARY KEY (name))",
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

    def load(self, name: str, version: Version = None, check: bool = True) -> StoredModel:
        """``version`` of ``name`` (a number, an alias, or None: the newest); a
        :class:`ModelError` if none, or if its family finds its bytes damaged (unless
        ``check`` is False: for its metadata only)."""
        p = self._ds.param
        found = None
        if isinstance(version, str):
            if self._exists() and self._ds.table_exists([MODEL_ALIASES]):
                found = self._ds.execute(
                    f"SELECT v.version, v.size, v.metadata FROM {self._models} AS v "
                    f"JOIN {self._aliases} AS a ON a.name = v.name AND a.version = v.version "
                    f"WHERE a.name = {p} AND a.alias = {p}",
                    [name, version],
                )
        elif self._exists():
            chosen = "" if version is None else f" AND version = {p}"
            found = self._ds.execute(
                f"SELECT version, size, metadata FROM {self._models} WHERE name = {p}{chosen} "
                "ORDER BY version DESC LIMIT 1",
                [name] if version is None else [name, version],
            )
        if not found or not found.rows:
            raise self._missing(name, version)
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

    def _missing(self, name: str, version: Version) -> ModelError:
        """The error for a ``version`` of ``name`` that is not stored, saying what is."""
        stored = self.list_versions(name)
        if not stored:
            return ModelError(
                f"model {name} does not exist in {self._ds.url}",
                model=name,
                hint=f"train it first with ... TO TRAIN <estimator> ... INTO {name}",
            )
        if isinstance(version, str):
            aliases = self.aliases(name)
            named = ", ".join(f"{a} (version {v})" for a, v in aliases.items()) or "none"
            return ModelError(
                f"model {name} has no alias {version}",
                hint=f"its aliases are: {named}; set one with ALTER MODEL {name} SET ALIAS "
                f"{version} TO VERSION <n>",
            )
        return ModelError(
            f"model {name} has no version {version} in {self._ds.url}",
            hint=f"its stored versions are {', '.join(map(str, stored))}",
        )

    def resolve(self, name: str, version: Version) -> int:
        """The number of ``version`` of ``name``; a :class:`ModelError` if it is not stored."""
        if isinstance(version, int) and version in self.list_versions(name):
            return version
        if isinstance(version, str) and version in self.aliases(name):
            return self.aliases(name)[version]
        if version is None and (stored := self.list_versions(name)):
            return stored[-1]
        raise self._missing(name, version)

    def aliases(self, name: str) -> dict[str, int]:
        """The aliases of ``name``'s versions: alias -> version, by alias."""
        return {alias: version for alias, version, _ in self._alias_rows(name)}

    def _alias_rows(self, name: str) -> list[tuple[str, int, int | None]]:
        """Each alias of ``name``: its name, version and the version before its last move."""
        if not self._ds.table_exists([MODEL_ALIASES]):
            return []
        rows = self._ds.execute(
            f"SELECT alias, version, previous FROM {self._aliases} WHERE name = "
            f"{self._ds.param} ORDER BY alias",
            [name],
        )
        found = rows.rows if rows else []
        return [(_text(a), int(v), None if b is None else int(b)) for a, v, b in found]

    def all_aliases(self) -> dict[str, dict[str, int]]:
        """The aliases of every model: name -> alias -> version."""
        if not self._ds.table_exists([MODEL_ALIASES]):
            return {}
        rows = self._ds.execute(f"SELECT name, alias, version FROM {self._aliases}")
        found: dict[str, dict[str, int]] = {}
        for name, alias, version in rows.rows if rows else []:
            found.setdefault(_text(name), {})[_text(alias)] = int(version)
        return found

    def set_alias(self, name: str, alias: str, version: int | str) -> tuple[int | None, int]:
        """Point ``alias`` of ``name`` at ``version`` (a number, or another alias's version),
        in one transaction; the version it pointed to before (None: new) and now."""

        def move() -> tuple[int | None, int]:
            target = self.resolve(name, version)
            before = self.aliases(name).get(alias)
            self._write_alias(name, alias, target, before)
            return before, target

        return self._change(move)

    def rollback_alias(self, name: str, alias: str) -> tuple[int, int]:
        """Point ``alias`` of ``name`` back at the version it pointed to before its last move
        (a second rollback undoes the first), in one transaction; the versions from and to."""

        def back() -> tuple[int, int]:
            rows = {a: (v, b) for a, v, b in self._alias_rows(name)}
            if alias not in rows:
                raise self._missing(name, alias)
            now, before = rows[alias]
            if before is None:
                raise ModelError(
                    f"alias {alias} of model {name} has not moved since it was set (to version "
                    f"{now}): there is nothing to roll back to",
                    hint=f"point it at a version with ALTER MODEL {name} SET ALIAS {alias} "
                    "TO VERSION <n>",
                )
            self.resolve(name, before)  # kept by retention: an error only if tampered with
            self._write_alias(name, alias, before, now)
            return now, before

        return self._change(back)

    def _write_alias(self, name: str, alias: str, version: int, before: int | None) -> None:
        p = self._ds.param
        moved_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        self._ds.execute(
            f"DELETE FROM {self._aliases} WHERE name = {p} AND alias = {p}", [name, alias]
        )
        self._ds.execute(
            f"INSERT INTO {self._aliases} (name, alias, version, previous, moved_at) "
            f"VALUES ({p}, {p}, {p}, {p}, {p})",
            [name, alias, version, before, moved_at],
        )

    def drop_alias(self, name: str, alias: str) -> int:
        """Remove ``alias`` of ``name``; the version it pointed to."""

        def drop() -> int:
            version = self.resolve(name, alias)
            self._ds.execute(
                f"DELETE FROM {self._aliases} WHERE name = {self._ds.param} AND alias = "
                f"{self._ds.param}",
                [name, alias],
            )
            return version

        return self._change(drop)

    def set_retention(self, name: str, keep: int | None) -> list[int]:
        """Keep the newest ``keep`` versions of ``name`` (None: all) besides those aliases
        name, from now on; the versions this deletes at once, oldest first."""

        def retain() -> list[int]:
            self.resolve(name, None)
            p = self._ds.param
            self._ds.execute(f"DELETE FROM {self._retention} WHERE name = {p}", [name])
            self._ds.execute(
                f"INSERT INTO {self._retention} (name, keep) VALUES ({p}, {p})", [name, keep]
            )
            return self._prune(name)

        return self._change(retain)

    def retention(self, name: str) -> int | None:
        """How many of the newest versions of ``name`` are kept (None: all)."""
        if not self._ds.table_exists([MODEL_RETENTION]):
            return KEEP_VERSIONS
        found = self._ds.execute(
            f"SELECT keep FROM {self._retention} WHERE name = {self._ds.param}", [name]
        )
        if not found or not found.rows:
            return KEEP_VERSIONS
        keep = found.rows[0][0]
        return None if keep is None else int(keep)

    def versions(self, name: str | None = None) -> list[Entry]:
        """Every stored version of ``name`` (None: of every model), by name and version: its
        name, version and metadata, or the :class:`ModelError` saying why it is unreadable."""
        if not self._exists():
            return []
        where, params = ("", []) if name is None else (f" WHERE name = {self._ds.param}", [name])
        rows = self._ds.execute(
            f"SELECT name, version, metadata FROM {self._models}{where} ORDER BY name, version",
            params,
        )
        found = rows.rows if rows else []
        return [_entry(_text(n), int(v), text) for n, v, text in found]

    def list(self) -> list[tuple[str, int, dict[str, Any]]]:
        """The newest version of every model whose metadata is readable: name, version and
        metadata, by name."""
        return [(n, v, meta) for n, v, meta in self.catalog() if not isinstance(meta, ModelError)]

    def catalog(self) -> list[Entry]:
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
        """A value that changes whenever a version of ``name`` is saved, an alias of it moved
        or the model dropped, whatever happens to other models: its newest version's number,
        size and a hash of its metadata, and its aliases; None if there is no such model."""
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
        aliases = " ".join(f"{a}={v}" for a, v in self.aliases(name).items())
        return f"{version} {size} {hashlib.sha256(str(metadata).encode()).hexdigest()} {aliases}"

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
        """Delete every version of ``name``, its aliases and retention; whether there was
        one."""
        if not self._exists():
            return False
        p = self._ds.param
        with self._ds.transaction():
            found = self._ds.execute(
                f"SELECT COUNT(*) FROM {self._models} WHERE name = {p}", [name]
            )
            tables = [self._chunks, self._models]
            if self._ds.table_exists([MODEL_ALIASES]):
                tables += [self._aliases, self._retention]
            for table in tables:
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


def _entry(name: str, version: int, text: Any) -> Entry:
    try:
        return name, version, read_metadata(name, version, text, used=False)
    except ModelError as error:
        return name, version, error


def _text(name: str | bytes) -> str:
    """A name as read: MySQL's VARBINARY names come back as bytes."""
    return bytes(name).decode("utf-8", "replace") if isinstance(name, bytes | bytearray) else name
