"""Datasource URLs: ``duckdb:///file.duckdb``, ``mysql://user:password@host:3306/db``.

A URL's text form never shows its password, so it is safe in messages and logs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit

from sqlml.errors import DatasourceError
from sqlml.runtime.datasource import registry

DEFAULT_URL = "duckdb:///sqlml.duckdb"


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
        if not self.host:  # a file: server URLs need a host
            return f"{self.scheme}:///{self.path}"
        user = self.user + (":***" if self.password else "")
        at = f"{user}@" if user else ""
        port = f":{self.port}" if self.port else ""
        return f"{self.scheme}://{at}{self.host}{port}/{self.path}"

    def with_password(self) -> str:
        """The URL written whole, its password too: only for the environment of a process
        sqlml starts (``$SQLML_DATASOURCE``), never for a message, a log or an argument."""
        if not self.host:
            return f"{self.scheme}:///{self.path}"
        user = quote(self.user, safe="")
        if self.password:
            user += ":" + quote(self.password, safe="")
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
        port = f":{self.port}" if self.port else ""
        at = f"{user}@" if user else ""
        return f"{self.scheme}://{at}{host}{port}/{quote(self.path, safe='')}"


def parse_url(text: str | None) -> DatasourceURL:
    """Parse ``text``, or ``$SQLML_DATASOURCE``, or the default DuckDB file."""
    text = text or os.environ.get("SQLML_DATASOURCE") or DEFAULT_URL
    scheme, sep, rest = text.partition("://")
    source = registry.find(scheme) if sep else None
    if source is None:
        raise DatasourceError(
            f"unsupported datasource URL {redacted(text)!r}", hint=f"use {_examples()}"
        )
    scheme = source.schemes[0]
    if source.file_based:
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


def _examples() -> str:
    """An example URL of each registered datasource, files first."""
    sources = sorted(registry.sources(), key=lambda source: not source.file_based)
    examples = [source.url_example.format(scheme=source.schemes[0]) for source in sources]
    return " or ".join([", ".join(examples[:-1]), examples[-1]] if len(examples) > 1 else examples)


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
