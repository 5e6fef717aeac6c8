"""The registered model families, by name: the built-in ones first, then those registered.

Lookups load the built-in packages (:data:`BUILT_IN`) on first use, in order; each exposes
its family as ``FAMILY``. Nothing here imports a family's library.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from sqlml import imports
from sqlml.errors import ModelError

if TYPE_CHECKING:
    from sqlml.models.estimator import Estimator
    from sqlml.models.interface import Family

# Packages under sqlml.models, in the order their estimators are listed (docs, completion).
BUILT_IN = ("xgboost", "keras", "cluster", "outlier", "timeseries", "graph", "sklearn")
_REGISTERED: dict[str, Family] = {}


def families() -> dict[str, Family]:
    """The registered families by name, the built-in ones first."""
    # Steps running side by side look families up first at once: one loads them, the others
    # wait (a lookup that saw the registry half filled found no Keras family).
    with imports.LOCK:
        if not _REGISTERED:
            for name in BUILT_IN:
                _add(imports.load(f"{__package__}.{name}").FAMILY)
        return dict(_REGISTERED)


def family(name: str) -> Family:
    """The family called ``name``; a :class:`ModelError` if none is registered."""
    found = families().get(name)
    if found is None:
        raise ModelError(
            f"model family {name!r} is unknown to this version of sqlml",
            hint=f"the known families are {', '.join(families())}",
        )
    return found


@functools.cache
def estimators(casefold: bool = False) -> Mapping[str, Estimator]:
    """The registered families' estimators by name (lower-cased with ``casefold``), in the
    families' order; assembled once, again after a family is registered or unregistered."""
    found = {e.name: e for known in families().values() for e in known.estimators()}
    return MappingProxyType({k.lower(): e for k, e in found.items()} if casefold else found)


def register(new: Family) -> Family:
    """Add ``new`` to the families (its estimators join the estimator table); returns it.

    A :class:`TypeError` if it lacks a class attribute of :class:`Family`; a
    :class:`ValueError` if its name or one of its estimators' names (case-insensitive) is
    taken.
    """
    missing = [name for name in ("name", "format", "extensions") if not hasattr(new, name)]
    if missing:
        raise TypeError(f"{type(new).__name__} sets no {', '.join(missing)}")
    if new.name in families():
        raise ValueError(f"a model family called {new.name!r} is already registered")
    clashes = [e.name for e in new.estimators() if e.name.lower() in estimators(casefold=True)]
    if clashes:
        raise ValueError(f"family {new.name!r}: estimator {clashes[0]} is already declared")
    _add(new)
    return new


def unregister(name: str) -> None:
    """Remove the family ``name`` (a :class:`ValueError` for a built-in one)."""
    if name in BUILT_IN:
        raise ValueError(f"{name} is a built-in model family")
    with imports.LOCK:
        families()
        _REGISTERED.pop(name, None)
        estimators.cache_clear()


def _add(new: Family) -> None:
    _REGISTERED[new.name] = new
    estimators.cache_clear()
