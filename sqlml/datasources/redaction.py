"""Keeping the datasource's password out of every page and response.

sqlml's own messages name a datasource by its URL without the password; a driver's message
may quote more. Whatever text reaches a page from a run passes through :func:`scrubber`'s
function, which replaces the URL as given by its shown form and the password by ``***``.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from sqlml.datasources.url import parse_url, redacted
from sqlml.errors import SqlmlError


def scrubber(url: str | None) -> Callable[[str], str]:
    """A function that removes ``url``'s password (and ``url`` itself) from a text."""
    try:
        parsed = parse_url(url)
        shown, password = str(parsed), parsed.password
    except SqlmlError:  # the page cannot open it either: hide what may be a password
        shown, password = redacted(url or ""), ""
    secrets = [s for s in {url or "", password, unquote(password)} if len(s) >= 3]
    secrets.sort(key=len, reverse=True)

    def scrub(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, shown if secret == url else "***")
        return text

    return scrub
