"""sqlml's four extension points, one mechanism: model families, statement kinds, datasources
and backends, each a :class:`Registry`.

A registry fills itself on first lookup, in this order: the built-in folders (each package
under ``sqlml/<folder>/`` that holds the registry's module declares one entry, or a sequence
of them, as its attribute), then the entry points of the registry's group that installed
distributions declare (``pip install`` of a package whose metadata says, say,
``[project.entry-points."sqlml.families"] constant = "my_package:FAMILY"``), then what is
registered in the process. Every entry is checked once: the attributes it must set, a name
no other entry has, and claims (an estimator's name, a URL scheme, a compile target) no
other entry makes.

Nothing is imported until something asks, and ``importlib.metadata`` (25 ms to import) only
when an installed distribution declares entry points of sqlml's groups (a look at the
metadata folders on ``sys.path`` tells), so a plain SELECT pays for neither.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any, Generic, TypeVar

from sqlml import imports
from sqlml.errors import SqlmlError

T = TypeVar("T")

_PACKAGE = Path(__file__).resolve().parent
_GROUP_HEADER = re.compile(r"^\[(sqlml\.[A-Za-z_.]+)\]", re.MULTILINE)


class PluginError(SqlmlError):
    """An installed plugin that cannot be used: it fails to import, or it clashes."""


class Registry(Mapping[str, T], Generic[T]):
    """The entries of one extension point by name, built-in ones first (see the module).

    ``folder``: the package under ``sqlml/`` holding the built-in ones; ``attribute``: where
    each declares its entry, ``NAME`` in the folder's package or ``module:NAME``; ``first``:
    the built-in ones listed first, in this order (the rest follow by name); ``key``: an
    entry's name; ``claims``: the names, besides that, no two entries may share;
    ``required``: the attributes an entry must set.
    """

    def __init__(
        self,
        what: str,
        group: str,
        folder: str,
        attribute: str,
        *,
        first: tuple[str, ...] = (),
        key: Callable[[T], str] = lambda entry: entry.name,  # type: ignore[attr-defined]
        claims: Callable[[T], Iterable[str]] = lambda entry: (),
        required: tuple[str, ...] = ("name",),
    ) -> None:
        self.what, self.group, self.folder, self.attribute = what, group, folder, attribute
        self.first, self.key, self.claims, self.required = first, key, claims, required
        self._entries: dict[str, T] = {}
        self._claimed: dict[str, str] = {}  # claim -> the name of the entry making it
        self._built_in: set[str] = set()
        self._unclaimed: list[str] = []  # built-in entries whose claims are not read yet
        self._filled = False
        self.generation = 0  # grows at each change: caches of what entries declare key on it

    # -- Mapping -----------------------------------------------------------------------------
    def __getitem__(self, name: str) -> T:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._all()))

    def __len__(self) -> int:
        return len(self._all())

    def claimant(self, claim: str) -> T | None:
        """The entry that claims ``claim`` (a URL scheme, a compile target), if any."""
        entries = self._all()
        with imports.LOCK:
            self._claim_built_ins()
            name = self._claimed.get(claim)
        return entries[name] if name is not None else None

    def built_in(self, name: str) -> bool:
        """Whether the entry ``name`` comes with sqlml."""
        self._all()
        return name in self._built_in

    # -- changes -----------------------------------------------------------------------------
    def register(self, entry: T) -> T:
        """Add ``entry`` (from outside sqlml); returns it.

        A :class:`TypeError` if it lacks a required attribute; a :class:`ValueError` if its
        name or one of its claims is taken.
        """
        with imports.LOCK:
            self._all()
            self._add(entry)
        return entry

    def unregister(self, name: str) -> None:
        """Forget the entry ``name`` (a :class:`ValueError` for a built-in one)."""
        with imports.LOCK:
            self._all()
            if name in self._built_in:
                raise ValueError(f"{name} is a built-in {self.what}")
            if self._entries.pop(name, None) is not None:
                self._claimed = {c: n for c, n in self._claimed.items() if n != name}
                self.generation += 1

    # -- filling -----------------------------------------------------------------------------
    def _all(self) -> dict[str, T]:
        # Steps running side by side look entries up first at once: one fills the registry,
        # the others wait (a lookup that saw it half filled would miss an entry).
        if self._filled:
            return self._entries
        with imports.LOCK:
            if not self._filled:
                for folder in self._folders():
                    for entry in _entries(_load(self._path(folder))):
                        self._add(entry, built_in=True)
                for point in _entry_points(self.group):
                    self._add_plugin(point)
                self._filled = True
        return self._entries

    def _folders(self) -> list[str]:
        module = self.attribute.partition(":")[0] if ":" in self.attribute else ""
        found = [
            child.name
            for child in sorted((_PACKAGE / self.folder).iterdir())
            if (child / "__init__.py").is_file()
            and (not module or (child / f"{module}.py").is_file())
        ]
        return [
            *[name for name in self.first if name in found],
            *sorted(set(found) - set(self.first)),
        ]

    def _path(self, folder: str) -> str:
        module, _, name = self.attribute.rpartition(":")
        return f"sqlml.{self.folder}.{folder}{'.' + module if module else ''}:{name}"

    def _add_plugin(self, point: Any) -> None:
        source = f"entry point {point.name!r} of {_distribution(point)}"
        try:
            loaded = point.load()
        except Exception as error:  # a broken plugin: say which, not where inside it
            raise PluginError(
                f"{source} ({point.value}) cannot be loaded: {type(error).__name__}: {error}",
                hint="fix or uninstall that package",
            ) from error
        for entry in _entries(loaded):
            try:
                self._add(entry)
            except (TypeError, ValueError) as error:
                raise PluginError(f"{source}: {error}", hint="uninstall one of the two") from error

    def _add(self, entry: T, built_in: bool = False) -> None:
        missing = [name for name in self.required if not getattr(entry, name, None)]
        if missing:
            label = getattr(entry, "__name__", type(entry).__name__)
            raise TypeError(f"{self.what} {label} sets no {', '.join(missing)}")
        name = self.key(entry)
        if name in self._entries:
            raise ValueError(f"a {self.what} called {name!r} is already registered")
        self._entries[name] = entry
        self.generation += 1
        if built_in:  # sqlml's own never clash; their claims are read when one may clash
            self._built_in.add(name)
            self._unclaimed.append(name)
            return
        self._claim_built_ins()
        claims = list(self.claims(entry))
        taken = [claim for claim in claims if claim in self._claimed]
        if taken:
            del self._entries[name]
            raise ValueError(
                f"{self.what} {name!r}: {taken[0]!r} is already declared by "
                f"{self._claimed[taken[0]]!r}"
            )
        self._claimed.update(dict.fromkeys(claims, name))

    def _claim_built_ins(self) -> None:
        """Read the claims of the built-in entries (a family's load its estimators)."""
        while self._unclaimed:
            name = self._unclaimed.pop(0)
            self._claimed.update(dict.fromkeys(self.claims(self._entries[name]), name))


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(imports.load(module), name)


def _entries(loaded: Any) -> list[Any]:
    """A declaration as a list of entries (a statement kind's folder declares several)."""
    return list(loaded) if isinstance(loaded, list | tuple) else [loaded]


def _distribution(point: Any) -> str:
    dist = getattr(point, "dist", None)
    return f"the package {dist.name}" if dist is not None else "an installed package"


def _entry_points(group: str) -> list[Any]:
    """The entry points of ``group`` installed distributions declare."""
    if group not in _declared_groups():
        return []
    from importlib.metadata import entry_points  # only when a plugin is installed

    return list(entry_points(group=group))


@cache
def _declared_groups() -> frozenset[str]:
    """sqlml's entry-point groups that some distribution on ``sys.path`` declares, read from
    the ``entry_points.txt`` of each metadata folder (``importlib.metadata`` reads the same
    files, at greater cost)."""
    groups: set[str] = set()
    for folder in dict.fromkeys(sys.path):
        try:
            names = [entry.name for entry in os.scandir(folder or ".")]
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            try:
                text = Path(folder or ".", name, "entry_points.txt").read_text("utf-8")
            except OSError:
                continue
            groups.update(_GROUP_HEADER.findall(text))
    return frozenset(groups)


def _family_claims(family: Any) -> list[str]:
    return [estimator.name.lower() for estimator in family.estimators()]


FAMILIES: Registry[Any] = Registry(
    "model family",
    "sqlml.families",
    "models",
    "FAMILY",
    first=("xgboost", "keras", "cluster", "outlier", "timeseries", "graph", "sklearn"),
    claims=_family_claims,
    required=("name", "format", "extensions"),
)
"""Model families (``sqlml.models.Family``): ``sqlml/models/<name>/__init__.py``'s ``FAMILY``."""

KINDS: Registry[Any] = Registry("statement kind", "sqlml.statements", "statements", "KINDS")
"""Statement kinds (``sqlml.statements.StatementKind``): ``sqlml/statements/<name>/``'s
``KINDS``, a tuple."""

DATASOURCES: Registry[Any] = Registry(
    "datasource",
    "sqlml.datasources",
    "datasources",
    "source:SOURCE",
    first=("duckdb", "mysql", "sqlite", "postgresql"),
    key=lambda source: source.schemes[0],
    claims=lambda source: source.schemes,
    required=("schemes", "dialect"),
)
"""Datasource classes (``sqlml.datasources.Datasource``) by their first URL scheme:
``sqlml/datasources/<name>/source.py``'s ``SOURCE``; every scheme is a claim."""


def datasource_of_dialect(dialect: str) -> Any | None:
    """The first datasource class whose SQL is sqlglot's ``dialect``, if any: what code that
    knows a program's dialect, and no datasource, asks about the database's SQL."""
    return next((source for source in DATASOURCES.values() if source.dialect == dialect), None)


BACKENDS: Registry[Any] = Registry(
    "backend",
    "sqlml.backends",
    "backends",
    "backend:BACKEND",
    first=("local", "argo"),
    claims=lambda backend: (f"target {backend.target}",),
    required=("name", "target"),
)
"""Backends (``sqlml.backends.Backend``): ``sqlml/backends/<name>/backend.py``'s ``BACKEND``;
its compile target is a claim."""
