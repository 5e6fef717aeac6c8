"""The datasource classes by URL scheme.

A :class:`~sqlml.datasources.base.Datasource` subclass that declares ``schemes``
registers itself when it is defined: its first scheme is the one its URLs are shown with,
the others are aliases. Opening a URL, the URL syntax, the SQL dialect of a datasource, the
CLI's ``--dialect`` choices and every capability check look their datasource up here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlml.errors import DatasourceError

if TYPE_CHECKING:
    from sqlml.datasources.base import Datasource

_BY_SCHEME: dict[str, type[Datasource]] = {}  # scheme or alias -> its class


def register(source: type[Datasource]) -> None:
    """Open URLs of ``source``'s schemes with ``source``."""
    taken = {s: _BY_SCHEME[s] for s in source.schemes if _BY_SCHEME.get(s, source) is not source}
    if taken:
        scheme, other = next(iter(taken.items()))
        raise DatasourceError(
            f"datasource {source.__qualname__} declares the URL scheme {scheme!r}, "
            f"which {other.__qualname__} has",
            hint="give the class schemes of its own, or unregister the other class first",
        )
    for scheme in source.schemes:
        _BY_SCHEME[scheme] = source


def unregister(source: type[Datasource]) -> None:
    """Stop opening URLs of ``source``'s schemes with ``source``."""
    for scheme in source.schemes:
        if _BY_SCHEME.get(scheme) is source:
            del _BY_SCHEME[scheme]


def find(scheme: str) -> type[Datasource] | None:
    """The class registered for ``scheme`` (or alias), if any."""
    return _BY_SCHEME.get(scheme)


def sources() -> list[type[Datasource]]:
    """Every registered class, once each, in the order they were registered."""
    return list(dict.fromkeys(_BY_SCHEME.values()))


def dialects() -> list[str]:
    """sqlglot's names of the registered datasources' SQL dialects, once each."""
    return list(dict.fromkeys(source.dialect for source in sources()))
