"""Datasources: one base class and a small class per database."""

from __future__ import annotations

from pathlib import Path

from sqlml.runtime.datasource.base import Columns, Datasource, ResultSet
from sqlml.runtime.datasource.url import DatasourceURL, parse_url


def connect(url: str | None = None, base_dir: Path | None = None) -> Datasource:
    """Open the datasource named by ``url`` (default: ``$SQLML_DATASOURCE`` or a DuckDB file).

    ``base_dir`` is where relative file paths in statements are looked up (the files DuckDB
    reads, ``explain.plot``); it is kept as the datasource's ``base_dir``.
    """
    source = _open(parse_url(url), base_dir)
    source.base_dir = base_dir
    return source


def _open(parsed: DatasourceURL, base_dir: Path | None) -> Datasource:
    if parsed.scheme == "duckdb":
        from sqlml.runtime.datasource.duckdb import DuckDBSource

        return DuckDBSource(parsed, base_dir)
    if parsed.scheme == "sqlite":
        from sqlml.runtime.datasource.sqlite import SQLiteSource

        return SQLiteSource(parsed)
    if parsed.scheme == "mysql":
        from sqlml.runtime.datasource.mysql import MySQLSource

        return MySQLSource(parsed)
    from sqlml.runtime.datasource.postgresql import PostgreSQLSource

    return PostgreSQLSource(parsed)


__all__ = ["Columns", "Datasource", "DatasourceURL", "ResultSet", "connect", "parse_url"]
