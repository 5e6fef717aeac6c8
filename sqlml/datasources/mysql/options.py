"""The options a MySQL URL may give pymysql (``mysql://u@h/db?ssl=true&ssl_ca=ca.pem``).

TLS is asked for by ``ssl=true`` or by any ``ssl_*`` option; it is then required: a server
that offers none is an error, as MySQL's ``--ssl-mode=REQUIRED`` makes it. ``ssl_ca`` with
``ssl_verify_cert=true`` checks the server's certificate, ``ssl_verify_identity=true`` its
name too (``VERIFY_IDENTITY``). ``ssl=false`` turns TLS off. Time limits are in seconds.
"""

from __future__ import annotations

from typing import Any

from sqlml.datasources.url import DatasourceURL
from sqlml.errors import DatasourceError

_FLAGS = ("ssl_verify_cert", "ssl_verify_identity")
_FILES = ("ssl_ca", "ssl_cert", "ssl_key")
_SECONDS = ("connect_timeout", "read_timeout", "write_timeout")
# name -> what its value is, for errors
OPTIONS = {
    "ssl": "true or false",
    **dict.fromkeys(_FILES, "a file's path"),
    "ssl_key_password": "the password of ssl_key",
    **dict.fromkeys(_FLAGS, "true or false"),
    **dict.fromkeys(_SECONDS, "a whole number of seconds"),
}
NO_TLS_HINT = (
    "the URL asks for TLS (ssl=true or ssl_* options): enable TLS on the server and check "
    "the certificates' paths, or leave the ssl options out of the URL"
)
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def wants_tls(url: DatasourceURL) -> bool:
    """Whether the URL asks for TLS."""
    ssl = url.option("ssl")
    if ssl is not None:
        return _flag(url, "ssl", ssl)
    return any(url.option(name) is not None for name in OPTIONS if name.startswith("ssl_"))


def connect_arguments(url: DatasourceURL) -> dict[str, Any]:
    """pymysql.connect's arguments for the URL's options."""
    arguments: dict[str, Any] = {}
    for name, value in url.options:
        if name in _FLAGS:
            arguments[name] = _flag(url, name, value)
        elif name in _SECONDS:
            if not value.isdigit() or int(value) == 0:
                raise _bad(url, name, value)
            arguments[name] = int(value)
        elif name != "ssl":
            arguments[name] = value
    tls = wants_tls(url)
    if not tls and any(name.startswith("ssl_") for name, _ in url.options):
        raise DatasourceError(
            f"datasource URL {url}: ssl=false and ssl_* options contradict each other",
            hint="leave out ssl=false to connect with TLS, or the ssl_* options to connect without",
        )
    if tls and not any(name in arguments for name in (*_FILES, *_FLAGS)):
        arguments["ssl"] = {"verify_mode": False}  # encrypted, the certificate unchecked
    elif url.option("ssl") is not None and not tls:
        arguments["ssl_disabled"] = True
    return arguments


def _flag(url: DatasourceURL, name: str, value: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise _bad(url, name, value)


def _bad(url: DatasourceURL, name: str, value: str) -> DatasourceError:
    return DatasourceError(
        f"datasource URL {url}: option {name} is {value!r}, not {OPTIONS[name]}",
        hint=f"write {name}={'true' if OPTIONS[name] == 'true or false' else '10'}",
    )
