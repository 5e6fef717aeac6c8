"""Datasources: one base class and a folder per database, found by URL scheme."""

from __future__ import annotations

from pathlib import Path

from sqlml.datasources import registry
from sqlml.datasources.base import Columns, Datasource, ResultSet
from sqlml.datasources.registry import dialects, register, unregister
from sqlml.datasources.url import DatasourceURL, parse_url
from sqlml.errors import DatasourceError
from sqlml.plugins import datasource_of_dialect as source_of_dialect


def connect(url: str | DatasourceURL | None = None, base_dir: Path | None = None) -> Datasource:
    """Open the datasource named by ``url`` (default: ``$SQLML_DATASOURCE`` or a DuckDB file).

    ``base_dir`` is where relative file paths in statements are looked up (the files DuckDB
    reads, ``explain.plot``); it is kept as the datasource's ``base_dir``.
    """
    parsed = url if isinstance(url, DatasourceURL) else parse_url(url)
    return source_class(parsed)(parsed, base_dir)


def source_class(url: str | DatasourceURL | None) -> type[Datasource]:
    """The class that opens ``url`` (default: ``$SQLML_DATASOURCE``, else a DuckDB file)."""
    parsed = url if isinstance(url, DatasourceURL) else parse_url(url)
    found = registry.find(parsed.scheme)
    if found is None:  # unregistered since the URL was parsed
        raise DatasourceError(
            f"unsupported datasource URL {parsed}", hint="register its datasource class again"
        )
    return found


def dialect_of(url: str | None) -> str:
    """sqlglot's name of the SQL dialect of the datasource ``url`` names (default:
    ``$SQLML_DATASOURCE``'s, else DuckDB's)."""
    return source_class(url).dialect


__all__ = [
    "Columns",
    "Datasource",
    "DatasourceURL",
    "ResultSet",
    "connect",
    "dialect_of",
    "dialects",
    "parse_url",
    "register",
    "source_class",
    "source_of_dialect",
    "unregister",
]
