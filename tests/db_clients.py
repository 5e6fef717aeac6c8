"""The databases' own command-line clients (``sqlite3``, ``mysql``, ``psql``), run as a
dashboard's or another team's script runs them: a process of their own, without sqlml or a
Python driver."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

CLIENTS = {"sqlite": "sqlite3", "mysql": "mysql", "postgresql": "psql"}
NULL = "NULL"  # how the rows below show a NULL
TIMEOUT = 120  # seconds: a deadlock guard


def client_or_skip(kind: str) -> str:
    """The command of ``kind``'s client; a skip where it is not installed, a failure in CI
    (CI=true), where it must be."""
    command = CLIENTS[kind]
    if shutil.which(command) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{command} must be installed in CI")
        pytest.skip(f"{command} is not installed")
    return command


def _command(url: str) -> tuple[list[str], dict[str, str]]:
    """The client connected to ``url``'s database, and its environment (a password, if the
    URL holds one, passed as the client reads it there, never on its command line)."""
    parsed = urlsplit(url)
    env = dict(os.environ)
    if parsed.scheme == "sqlite":
        return ["sqlite3", "-bail", "-nullvalue", NULL, "-separator", "\t", parsed.path], env
    if parsed.password:
        env["MYSQL_PWD" if parsed.scheme == "mysql" else "PGPASSWORD"] = unquote(parsed.password)
    host, user = parsed.hostname or "127.0.0.1", unquote(parsed.username or "root")
    database = parsed.path.lstrip("/")
    if parsed.scheme == "mysql":
        port = str(parsed.port or 3306)
        return ["mysql", "-h", host, "-P", port, "-u", user, "--batch", database], env
    port = str(parsed.port or 5432)
    return [
        "psql", "-X", "-q", "-h", host, "-p", port, "-U", user, "-d", database,
        "-v", "ON_ERROR_STOP=1", "-P", f"null={NULL}",
    ], env  # fmt: skip


def run_file(url: str, file: Path) -> None:
    """Run the SQL ``file`` by the client of ``url``'s database, as ``client < file``."""
    command, env = _command(url)
    with file.open() as text:
        done = subprocess.run(
            command, stdin=text, capture_output=True, text=True, env=env, timeout=TIMEOUT
        )
    assert done.returncode == 0, done.stderr


def client_rows(url: str, query: str) -> list[tuple[str | None, ...]]:
    """The rows of ``query`` as the client of ``url``'s database prints them, unaligned and
    tab-separated: each value its text, a NULL None."""
    command, env = _command(url)
    if command[0] == "psql":
        command += ["-A", "-t", "-F", "\t", "-c", query]
    elif command[0] == "mysql":
        command += ["--skip-column-names", "--raw", "-e", query]
    else:
        command.append(query)
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    return [
        tuple(None if value == NULL else value for value in line.split("\t"))
        for line in done.stdout.splitlines()
    ]
