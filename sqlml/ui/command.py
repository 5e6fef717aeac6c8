"""The ``sqlml ui`` command line: where the page is served and what it reads."""

from __future__ import annotations

import argparse
import sys

from sqlml.errors import SqlmlError

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8765


def add_ui_parser(commands: argparse._SubParsersAction) -> None:
    """``sqlml ui``'s options."""
    ui = commands.add_parser("ui", help="a local web page of runs, models and an editor")
    ui.add_argument(
        "--datasource", metavar="URL", help="the database whose runs and models to show"
    )
    ui.add_argument(
        "--host",
        default=LOOPBACK,
        help=f"the address to listen on ({LOOPBACK}: this machine only; another needs a token)",
    )
    ui.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"its port ({DEFAULT_PORT})")
    ui.add_argument(
        "--token",
        help="the token a browser must present (default: none on loopback, a new random one "
        "printed at the start otherwise; also $SQLML_UI_TOKEN)",
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
    import os
    import secrets

    try:
        from sqlml.ui.server import serve
    except ImportError as error:
        raise SqlmlError(
            f"sqlml ui needs the ui extra ({error.name} is not installed)",
            hint="pip install 'sqlml[ui]'",
        ) from None

    token = args.token or os.environ.get("SQLML_UI_TOKEN")
    if not token and not loopback(args.host):
        token = secrets.token_urlsafe(24)
    shown = f"[{args.host}]" if ":" in args.host else args.host  # an IPv6 address
    address = f"http://{shown}:{args.port}/"
    print(f"sqlml ui: {address}" + (f"?token={token}" if token else ""), file=sys.stderr)
    return serve(datasource, args.host, args.port, token)
