"""Datasource URLs: ``duckdb:///file.duckdb``, ``mysql://user:password@host:3306/db``.

A server's URL may end in options for its driver (``?sslmode=require``): each datasource
class declares the ones it understands (``url_options``), and any other is an error, never
dropped. A URL's text form never shows its password (nor a secret option's value), so it is
safe in messages and logs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from sqlml.errors import DatasourceError
from sqlml.plugins import DATASOURCES

DEFAULT_URL = "duckdb:///sqlml.duckdb"
DEFAULT_DIALECT = "duckdb"  # sqlglot's name of DEFAULT_URL's dialect


@dataclass(frozen=True)
class DatasourceURL:
    """A parsed datasource URL. ``password`` is excluded from ``repr`` and ``str``."""

    scheme: str
    path: str = ""  # file path (duckdb) or database name (servers)
    host: str = ""
    port: int | None = None
    user: str = ""
    password: str = field(default="", repr=False)
    # the driver's options (name, value), in the URL's order; secret values hidden in repr
    options: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def __str__(self) -> str:
        if not self.host:  # a file: server URLs need a host
            return f"{self.scheme}:///{self.path}"
        user = self.user + (":***" if self.password else "")
        at = f"{user}@" if user else ""
        port = f":{self.port}" if self.port else ""
        shown = [(name, "***" if _secret(name) else value) for name, value in self.options]
        query = f"?{urlencode(shown, safe='*/')}" if shown else ""
        return f"{self.scheme}://{at}{self.host}{port}/{self.path}{query}"

    def option(self, name: str) -> str | None:
        """The value of the option ``name``; None if the URL does not give it."""
        return dict(self.options).get(name)

    def identity(self) -> str:
        """What tells this datasource from another, without a secret (a run's folder keeps
        it, and ``sqlml ui`` lists only the runs of its own): a file's absolute path (a
        relative one from the working folder, as the driver opens it), a server's URL
        without its user, password and options (the same database whoever connects)."""
        if not self.host:
            path = self.path if self.path == ":memory:" else str(Path(self.path).resolve())
            return f"{self.scheme}:///{path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = f":{self.port}" if self.port else ""
        return f"{self.scheme}://{host}{port}/{quote(self.path, safe='')}"

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
        query = f"?{urlencode(self.options)}" if self.options else ""
        return f"{self.scheme}://{at}{host}{port}/{quote(self.path, safe='')}{query}"


def parse_url(text: str | None) -> DatasourceURL:
    """Parse ``text``, or ``$SQLML_DATASOURCE``, or the default DuckDB file."""
    text = text or os.environ.get("SQLML_DATASOURCE") or DEFAULT_URL
    scheme, sep, rest = text.partition("://")
    source = DATASOURCES.claimant(scheme) if sep else None
    if source is None:
        raise DatasourceError(
            f"unsupported datasource URL {redacted(text)!r}", hint=f"use {_examples()}"
        )
    scheme = source.schemes[0]
    if source.file_based:
        rest, _, query = rest.partition("?")
        path = rest[1:] if rest.startswith("/") else rest
        options = _options(text, query, source.url_options)
        return DatasourceURL(scheme, path=path or ":memory:", options=options)
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
        options=_options(text, parts.query, source.url_options),
    )


def _options(text: str, query: str, known: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The URL's options, each one its datasource understands, given once."""
    try:
        options = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise DatasourceError(
            f"the options of datasource URL {redacted(text)!r} cannot be read",
            hint="write them as ?name=value&name=value",
        ) from None
    names = [name for name, _ in options]
    for name in names:
        if name not in known or names.count(name) > 1:
            scheme = text.partition("://")[0]
            raise DatasourceError(
                f"datasource URL {redacted(text)!r}: "
                + (
                    f"option {name!r} is given twice"
                    if name in known
                    else f"sqlml does not know the option {name!r}"
                ),
                hint=f"a {scheme} URL takes the options {', '.join(known)}"
                if known
                else f"a {scheme} URL takes no options",
            )
    return tuple(options)


def _secret(option: str) -> bool:
    """Whether an option's value is a secret (a key's password): never shown."""
    return "password" in option.lower()


def _examples() -> str:
    """An example URL of each registered datasource, files first."""
    sources = sorted(DATASOURCES.values(), key=lambda source: not source.file_based)
    examples = [source.url_example.format(scheme=source.schemes[0]) for source in sources]
    return " or ".join([", ".join(examples[:-1]), examples[-1]] if len(examples) > 1 else examples)


def redacted_urls(text: str) -> str:
    """``text`` (a message quoting what the user typed) with the password of every URL in
    it replaced by ``***``."""
    return re.sub(r"[A-Za-z][\w+.-]*://[^\s'\"]*", lambda found: redacted(found[0]), text)


def redacted(text: str) -> str:
    """``text`` with any password replaced by ``***``.

    Without an ``@``, a ``host:port`` whose port is not a number may be ``user:password``
    with the host left out: the "port" is hidden too.
    """
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    rest = re.sub(r"([?&][^=&#]*password[^=&#]*=)[^&#]*", r"\1***", rest, flags=re.IGNORECASE)
    credentials, at, location = rest.rpartition("@")
    if not at:
        return f"{scheme}://" + re.sub(r"^([^/:]*):(?!\d*(?:/|$))[^/]*", r"\1:***", rest)
    if ":" not in credentials:
        return f"{scheme}://{rest}"
    return f"{scheme}://{credentials.split(':', 1)[0]}:***@{location}"
