"""The model families, by name (:data:`sqlml.plugins.FAMILIES`): the built-in ones first,
then those installed (entry points of ``sqlml.families``), then those registered.

Each built-in package exposes its family as ``FAMILY``. Nothing here imports a family's
library.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from sqlml.errors import ModelError
from sqlml.plugins import FAMILIES

if TYPE_CHECKING:
    from sqlml.models.estimator import Estimator
    from sqlml.models.interface import Family

_ESTIMATORS: dict[tuple[bool, int], Mapping[str, Estimator]] = {}


def families() -> dict[str, Family]:
    """The families by name, the built-in ones first."""
    return dict(FAMILIES)


def family(name: str) -> Family:
    """The family called ``name``; a :class:`ModelError` if none is registered."""
    found = FAMILIES.get(name)
    if found is None:
        raise ModelError(
            f"model family {name!r} is unknown to this version of sqlml",
            hint=f"the known families are {', '.join(FAMILIES)}",
        )
    return found


def importing(fmt: str) -> Family | None:
    """The family whose models TO IMPORT reads from files of the format ``fmt``."""
    return next((f for f in FAMILIES.values() if fmt in f.import_formats), None)


def importable_formats() -> dict[str, tuple[str, ...]]:
    """Every format TO IMPORT reads, with the file extensions that tell it."""
    return {fmt: ext for f in FAMILIES.values() for fmt, ext in f.import_formats.items()}


def estimators(casefold: bool = False) -> Mapping[str, Estimator]:
    """The families' estimators by name (lower-cased with ``casefold``), in the families'
    order; assembled once, again after a family is registered or unregistered."""
    known = families()
    cached = _ESTIMATORS.get((casefold, FAMILIES.generation))
    if cached is None:
        found = {e.name: e for each in known.values() for e in each.estimators()}
        cached = MappingProxyType({k.lower(): e for k, e in found.items()} if casefold else found)
        _ESTIMATORS[(casefold, FAMILIES.generation)] = cached
    return cached


def register(new: Family) -> Family:
    """Add ``new`` to the families (its estimators join the estimator table); returns it.

    A :class:`TypeError` if it lacks a class attribute of :class:`Family`; a
    :class:`ValueError` if its name or one of its estimators' names (case-insensitive) is
    taken.
    """
    return FAMILIES.register(new)


def unregister(name: str) -> None:
    """Remove the family ``name`` (a :class:`ValueError` for a built-in one)."""
    FAMILIES.unregister(name)
