"""The ``sqlml ui`` command line: where the page is served, what it reads, and its token.

The page runs statements as the user who started it, so it always asks for a token (a new
random one, printed in its address, unless one is chosen), but with ``--no-token`` on a
loopback address. Secrets given on the command line (a password in ``--datasource``, the
``--token``) are moved into the environment, and the command started again without them:
other users of the machine read a process's arguments (``ps``), not its environment.
"""

from __future__ import annotations

import argparse
import os
import sys

from sqlml.errors import SqlmlError

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8765
TOKEN_ENV = "SQLML_UI_TOKEN"
DATASOURCE_ENV = "SQLML_DATASOURCE"


def add_ui_parser(commands: argparse._SubParsersAction) -> None:
    """``sqlml ui``'s options."""
    ui = commands.add_parser("ui", help="a local web page of runs, models and an editor")
    ui.add_argument(
        "--datasource",
        metavar="URL",
        help=f"the database whose runs and models to show (also ${DATASOURCE_ENV}, which "
        "keeps a password out of the process list)",
    )
    ui.add_argument(
        "--host",
        default=LOOPBACK,
        help=f"the address to listen on ({LOOPBACK}: this machine only)",
    )
    ui.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"its port ({DEFAULT_PORT})")
    secret = ui.add_mutually_exclusive_group()
    secret.add_argument(
        "--token",
        help=f"the token a browser must present (default: ${TOKEN_ENV}, else a new random one, "
        "printed in the page's address at the start)",
    )
    secret.add_argument(
        "--no-token",
        action="store_true",
        help="no token: anyone who can reach the page (every user of this machine) runs "
        "statements as you; loopback addresses only",
    )
    ui.add_argument(
        "--no-file-access",
        action="store_true",
        help="the editor's statements may not read or write this machine's files through a "
        "database that runs in this process (read_csv, COPY ... TO, ATTACH), nor load its "
        "extensions; a database server's own files are its privileges' to guard",
    )


def loopback(host: str) -> bool:
    """Whether ``host`` is an address of this machine only."""
    import ipaddress  # here: the command line of every start reads this module

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ui(args: argparse.Namespace, datasource: str | None) -> int:
    """Serve the page until Ctrl-C."""
    import secrets

    try:
        from sqlml.ui.server import serve
    except ImportError as error:
        raise SqlmlError(
            f"sqlml ui needs the ui extra ({error.name} is not installed)",
            hint="pip install 'sqlml[ui]'",
        ) from None

    if args.no_token and not loopback(args.host):
        raise SqlmlError(
            f"sqlml ui --no-token listens on {args.host}, which other machines reach: without "
            "a token, anyone there would run statements as you",
            hint="keep the token (the default), or listen on 127.0.0.1",
        )
    _restart_without_secrets(args, datasource)
    given = os.environ.pop(TOKEN_ENV, None)  # read once: no process the page starts gets it
    token = None if args.no_token else args.token or given
    if not token and not args.no_token:
        token = secrets.token_urlsafe(24)
    shown = f"[{args.host}]" if ":" in args.host else args.host  # an IPv6 address
    address = f"http://{shown}:{args.port}/"
    print(f"sqlml ui: {address}" + (f"?token={token}" if token else ""), file=sys.stderr)
    if not token:
        print(
            "sqlml ui: warning: no token: every user of this machine can run statements, "
            "and TO RUN's declared programs, as you through this page",
            file=sys.stderr,
        )
    return serve(datasource, args.host, args.port, token, not args.no_file_access)


def _restart_without_secrets(args: argparse.Namespace, datasource: str | None) -> None:
    """Start ``sqlml ui`` again in this process (``exec``), the datasource and the token
    given in its arguments moved into its environment; nothing when none is there."""
    given = [secret for secret in (datasource, args.token) if secret]
    if os.name != "posix" or not any(s in argument for s in given for argument in sys.argv):
        return
    environment = dict(os.environ)
    if datasource:
        environment[DATASOURCE_ENV] = datasource
    if args.token:
        environment[TOKEN_ENV] = args.token
    argv = [sys.executable, "-m", "sqlml", "ui", "--host", args.host, "--port", str(args.port)]
    if args.no_token:
        argv.append("--no-token")
    if args.no_file_access:
        argv.append("--no-file-access")
    sys.stderr.flush()
    os.execve(sys.executable, argv, environment)
