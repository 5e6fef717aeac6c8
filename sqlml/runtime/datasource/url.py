"""Datasource URLs: ``duckdb:///file.duckdb``, ``mysql://user:password@host:3306/db``.

A URL's text form never shows its password, so it is safe in messages and logs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from sqlml.errors import DatasourceError

DEFAULT_URL = "duckdb:///sqlml.duckdb"
SCHEMES = ("duckdb", "sqlite", "mysql", "postgresql")
_ALIASES = {"postgres": "postgresql", "mariadb": "mysql"}
_FILE_SCHEMES = ("duckdb", "sqlite")


@dataclass(frozen=True)
class DatasourceURL:
    """A parsed datasource URL. ``password`` is excluded from ``repr`` and ``str``."""

    scheme: str
    path: str = ""  # file path (duckdb) or database name (servers)
    host: str = ""
    port: int | None = None
    user: str = ""
    password: str = field(default="", repr=False)

    def __str__(self) -> str:
        if self.scheme in _FILE_SCHEMES:
            return f"{self.scheme}:///{self.path}"
        user = self.user + (":***" if self.password else "")
        at = f"{user}@" if user else ""
        port = f":{self.port}" if self.port else ""
        return f"{self.scheme}://{at}{self.host}{port}/{self.path}"


def parse_url(text: str | None) -> DatasourceURL:
    """Parse ``text``, or ``$SQLML_DATASOURCE``, or the default DuckDB file."""
    text = text or os.environ.get("SQLML_DATASOURCE") or DEFAULT_URL
    scheme, sep, rest = text.partition("://")
    scheme = _ALIASES.get(scheme, scheme)
    if not sep or scheme not in SCHEMES:
        raise DatasourceError(
            f"unsupported datasource URL {redacted(text)!r}",
            hint="use duckdb:///file.duckdb, sqlite:///file.db, "
            "mysql://user:password@host:3306/database or postgresql://user@host:5432/database",
        )
    if scheme in _FILE_SCHEMES:
        path = rest[1:] if rest.startswith("/") else rest
        return DatasourceURL(scheme, path=path or ":memory:")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:  # its message may quote a password that broke the URL's syntax
        raise DatasourceError(
            f"bad datasource URL {redacted(text)!r}: its host or port cannot be read",
            hint="write the port as a number from 0 to 65535, and percent-encode a password's "
            "'/', '?', '#', '@' and ':' (%2F, %3F, %23, %40, %3A)",
        ) from None
    database = parts.path.lstrip("/")
    if not parts.hostname or not database:
        raise DatasourceError(
            f"datasource URL {redacted(text)!r} needs a host and a database",
            hint=f"for example {scheme}://user:password@127.0.0.1:3306/test",
        )
    return DatasourceURL(
        scheme,
        path=unquote(database),
        host=parts.hostname,
        port=port,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
    )


def redacted(text: str) -> str:
    """``text`` with any password replaced by ``***``.

    Without an ``@``, a ``host:port`` whose port is not a number may be ``user:password``
    with the host left out: the "port" is hidden too.
    """
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    credentials, at, location = rest.rpartition("@")
    if not at:
        return f"{scheme}://" + re.sub(r"^([^/:]*):(?!\d*(?:/|$))[^/]*", r"\1:***", rest)
    if ":" not in credentials:
        return text
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{location}"
