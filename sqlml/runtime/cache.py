"""A local columnar cache of SELECT results, so repeated training reads skip the database.

An entry is keyed by the datasource (without its password), the SELECT text and a
fingerprint of every table the SELECT reads, computed by the database itself (the table's
columns, their types and order, plus on MySQL its update time, else ``CHECKSUM TABLE``; a
hash aggregate of the rows elsewhere, and of a view's rows everywhere): a changed table, or
a view whose tables changed, is a new key. A SELECT
that reads no table, a table that cannot be fingerprinted, or a non-deterministic function
(random numbers, the clock) is never cached.

Entries are ``.npz`` files written without pickle (text columns as fixed-width Unicode plus
a NULL mask); the least recently used are evicted beyond the size limit, with temporary
files that killed writers left. The cache only saves time: an entry that cannot be read
(truncated, corrupt) is a miss and is removed; one that cannot be written (a full disk, a
file-size limit, a read-only folder) is skipped with one warning.
Settings: ``SQLML_CACHE=off`` turns the cache off, ``SQLML_CACHE_DIR`` (default
``~/.cache/sqlml``) and ``SQLML_CACHE_MAX_BYTES`` (default 2 GiB).

A user without a usable home folder (a pod run as ``--run-as-user 1234``: ``$HOME`` unset or
``/``, a user id the system does not know, a home that does not exist or is read-only) and
no ``SQLML_CACHE_DIR`` gets no cache: one warning, and every read goes to the database.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
import zipfile
from contextlib import suppress
from pathlib import Path

import numpy as np
from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlml.datasources import Columns, Datasource
from sqlml.local_files import reason, warn_once
from sqlml.runtime.progress import Progress
from sqlml.semantics.sql_check import parse_sql

DEFAULT_MAX_BYTES = 2 << 30
STALE_SECONDS = 600  # a temporary file untouched this long was left by a killed writer
_VOLATILE = (exp.Rand, exp.CurrentTimestamp, exp.CurrentDate, exp.CurrentTime, exp.Uuid)
_NULLS = "__nulls__"


# The fingerprints a statement has taken, by table (its name's parts as written): each is
# taken once, for its lineage and its reads alike (a running statement's Context holds them)
Fingerprints = dict[tuple[str, ...], str | None]


def cached_read(
    datasource: Datasource,
    select: str,
    reporter: Progress | None = None,
    taken: Fingerprints | None = None,
) -> Columns:
    """``datasource.read(select, reporter)`` through the cache the environment asks for, if
    any, keyed by the fingerprints ``taken`` (those missing are taken and added)."""
    cache = InputCache.from_environment()
    if cache is None:
        return datasource.read(select, reporter)
    return cache.read(datasource, select, reporter, taken)


def fingerprint(
    datasource: Datasource, table: tuple[str, ...], taken: Fingerprints | None = None
) -> str | None:
    """``datasource.table_fingerprint(table)``, taken once for ``taken``."""
    if taken is None:
        return datasource.table_fingerprint(list(table))
    if table not in taken:
        taken[table] = datasource.table_fingerprint(list(table))
    return taken[table]


class InputCache:
    """A folder of cached SELECT results, bounded in size."""

    def __init__(self, folder: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    @classmethod
    def from_environment(cls) -> InputCache | None:
        """The cache the environment asks for, or None when it is off or has no folder this
        user can create (then with one warning)."""
        if os.environ.get("SQLML_CACHE", "on").lower() in ("off", "0", "false", "no"):
            return None
        folder = _folder()
        if folder is None:
            return None
        text = os.environ.get("SQLML_CACHE_MAX_BYTES") or ""
        try:
            max_bytes = int(text) if text else DEFAULT_MAX_BYTES
        except ValueError:
            warn_once(
                "cache size",
                f"SQLML_CACHE_MAX_BYTES={text!r} is not a number of bytes: the input cache "
                f"keeps up to {DEFAULT_MAX_BYTES} bytes",
            )
            max_bytes = DEFAULT_MAX_BYTES
        return cls(folder, max_bytes)

    def read(
        self,
        datasource: Datasource,
        select: str,
        reporter: Progress | None = None,
        taken: Fingerprints | None = None,
    ) -> Columns:
        """The result of ``select``: from the cache if the tables are unchanged (their
        fingerprints ``taken``, or taken now), else read from the database, reported to
        ``reporter`` (None: nowhere)."""
        key = cache_key(datasource, select, taken)
        if key is None:
            return datasource.read(select, reporter)
        path = self.folder / f"{key}.npz"
        columns = self._load(path)
        if columns is None:
            columns = datasource.read(select, reporter)
            self._store(path, columns)
        return columns

    def _load(self, path: Path) -> Columns | None:
        """The entry at ``path``; None if there is none or it cannot be read (truncated,
        corrupt, unreadable): then it is removed, and the SELECT reads the database."""
        try:
            columns = _load(path)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
            with suppress(OSError):
                path.unlink(missing_ok=True)
            return None
        with suppress(OSError):
            os.utime(path)  # most recently used
        return columns

    def _store(self, path: Path, columns: Columns) -> None:
        """Write the entry (readers never see part of it) and evict old ones. An entry that
        cannot be written is skipped with a warning, its temporary file removed."""
        temporary: Path | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".tmp", delete=False) as f:
                temporary = Path(f.name)
                np.savez(f, **_storable(columns))
            temporary.replace(path)
            temporary = None
        except OSError as error:
            warn_once(
                "cache",
                f"the input cache in {self.folder} cannot be written ({reason(error)}): "
                "training reads its data from the database each time",
            )
        finally:
            if temporary is not None:
                with suppress(OSError):
                    temporary.unlink()
        self._evict()

    def _evict(self) -> None:
        """Remove the least recently used entries beyond the size limit, and temporary files
        that writers killed mid-write left behind."""
        now = time.time()
        entries = []
        with suppress(OSError):
            for entry in self.folder.iterdir():
                with suppress(OSError):
                    if entry.suffix == ".npz":
                        entries.append((entry.stat(), entry))
                    elif entry.suffix == ".tmp" and now - entry.stat().st_mtime > STALE_SECONDS:
                        entry.unlink()
        total = 0
        for stat, entry in sorted(entries, key=lambda found: found[0].st_mtime, reverse=True):
            total += stat.st_size
            if total > self.max_bytes:
                with suppress(OSError):
                    entry.unlink()


_SKIPPED = "training reads its data from the database each time"


def _folder() -> Path | None:
    """The cache folder: ``$SQLML_CACHE_DIR``, else ``~/.cache/sqlml``, created if need be.
    None, after one warning, when there is none this user can create: no home folder (no
    ``$HOME`` and a user id the system does not know, an empty or relative ``$HOME``, one
    that does not exist) or one where nothing can be created (``/`` for a user other than
    root, a read-only file system)."""
    given = os.environ.get("SQLML_CACHE_DIR")
    if given:
        folder = Path(given)
    else:
        home, why = _home()
        if home is None:
            warn_once(
                "cache",
                f"the input cache is off: {why}; {_SKIPPED} "
                "(set SQLML_CACHE_DIR to a writable folder to use one)",
            )
            return None
        folder = home / ".cache" / "sqlml"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        warn_once(
            "cache",
            f"the input cache in {folder} cannot be created ({reason(error)}): {_SKIPPED} "
            "(set SQLML_CACHE_DIR to a writable folder to use one)",
        )
        return None
    return folder


def _home() -> tuple[Path | None, str]:
    """The user's home folder if it is one (an existing absolute folder), else None and why
    not. Never raises: ``Path.home()`` raises RuntimeError (and, in some Python versions,
    KeyError from the password database) for a user id the system does not know."""
    uid = os.getuid() if hasattr(os, "getuid") else None
    user = f"user id {uid}" if uid is not None else "this user"
    text = os.environ.get("HOME")
    if text is None:
        try:
            home = Path.home()
        except (RuntimeError, KeyError, OSError):
            return (
                None,
                f"{user} has no home folder ($HOME is not set and the system has no entry for it)",
            )
    elif not text or not os.path.isabs(text):
        return None, f"$HOME ({text!r}) is not a folder's absolute path"
    else:
        home = Path(text)
    try:
        exists = home.is_dir()
    except OSError as error:
        return None, f"the home folder {home} cannot be read ({reason(error)})"
    if not exists:
        return None, f"the home folder {home} of {user} does not exist"
    return home, ""


def cache_key(datasource: Datasource, select: str, taken: Fingerprints | None = None) -> str | None:
    """A key that changes when the SELECT or any table it reads changes (its fingerprint
    ``taken``, or taken now); None: don't cache."""
    tree = _tree(select, datasource.dialect)
    if tree is None or any(tree.find_all(*_VOLATILE)):
        return None
    tables = _tables(tree)
    if not tables:
        return None
    fingerprints = [fingerprint(datasource, table, taken) for table in tables]
    if None in fingerprints:
        return None
    text = "\n".join([str(datasource.url), select, *map(str, tables), *fingerprints])
    return hashlib.sha256(text.encode()).hexdigest()


def tables_read(select: str, dialect: str) -> list[tuple[str, ...]]:
    """The tables ``select`` reads, each as its name's parts as written, in order (none for
    a SELECT that cannot be read), as the cache fingerprints them."""
    tree = _tree(select, dialect)
    return [] if tree is None else _tables(tree)


def _tree(select: str, dialect: str) -> exp.Expression | None:
    """The tree the analysis built (its long lists of literals cut short); None for a text
    that is not one statement sqlglot reads."""
    try:
        trees = parse_sql(select, dialect)
    except (SqlglotError, RecursionError):
        return None
    return trees[0] if len(trees) == 1 else None


def _tables(tree: exp.Expression) -> list[tuple[str, ...]]:
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    return sorted(
        {
            tuple(part.name for part in table.parts)
            for table in tree.find_all(exp.Table)
            if table.name and table.name not in ctes
        }
    )


def _storable(columns: Columns) -> dict[str, np.ndarray]:
    """Columns as arrays that load without pickle; text gets a NULL mask."""
    arrays: dict[str, np.ndarray] = {}
    for index, (name, values) in enumerate(columns.items()):
        stored_name = f"{index}:{name}"
        if values.dtype.kind == "O":
            nulls = np.array([v is None for v in values.tolist()])
            arrays[stored_name] = np.array(["" if v is None else str(v) for v in values.tolist()])
            arrays[f"{_NULLS}{index}"] = nulls
        else:
            arrays[stored_name] = values
    return arrays


def _load(path: Path) -> Columns:
    with np.load(path, allow_pickle=False) as data:
        stored = {key: data[key] for key in data.files}
    columns: Columns = {}
    data_keys = sorted((k for k in stored if not k.startswith(_NULLS)), key=_index)
    for key in data_keys:
        values = stored[key]
        index, name = key.split(":", 1)
        nulls = stored.get(f"{_NULLS}{index}")
        if nulls is not None:
            values = values.astype(object)
            values[nulls] = None
        columns[name] = values
    return columns


def _index(key: str) -> int:
    return int(key.split(":", 1)[0])
