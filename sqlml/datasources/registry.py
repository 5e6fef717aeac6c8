"""The datasource classes by URL scheme (:data:`sqlml.plugins.DATASOURCES`): the built-in
ones first, then those installed (entry points of ``sqlml.datasources``), then those
registered.

Each built-in folder declares its class as ``SOURCE`` in its module ``source``; the class
declares its URL ``schemes``: the first is the one its URLs are shown with, the others are
aliases. Opening a URL, the URL syntax, the SQL dialect of a datasource, the CLI's
``--dialect`` choices and every capability check look their datasource up here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlml.errors import DatasourceError
from sqlml.plugins import DATASOURCES

if TYPE_CHECKING:
    from sqlml.datasources.base import Datasource


def register(source: type[Datasource]) -> type[Datasource]:
    """Open URLs of ``source``'s schemes with ``source``; returns it."""
    taken = {scheme: find(scheme) for scheme in source.schemes if find(scheme) is not None}
    if taken:
        scheme, other = next(iter(taken.items()))
        raise DatasourceError(
            f"datasource {source.__qualname__} declares the URL scheme {scheme!r}, "
            f"which {other.__qualname__} has",
            hint="give the class schemes of its own, or unregister the other class first",
        )
    return DATASOURCES.register(source)


def unregister(source: type[Datasource]) -> None:
    """Stop opening URLs of ``source``'s schemes with ``source``."""
    if DATASOURCES.get(source.schemes[0]) is source:
        DATASOURCES.unregister(source.schemes[0])


def find(scheme: str) -> type[Datasource] | None:
    """The class registered for ``scheme`` (or alias), if any."""
    return DATASOURCES.claimant(scheme)


def sources() -> list[type[Datasource]]:
    """Every registered class, once each, the built-in ones first."""
    return list(DATASOURCES.values())


def dialects() -> list[str]:
    """sqlglot's names of the registered datasources' SQL dialects, once each."""
    return list(dict.fromkeys(source.dialect for source in sources()))
