"""The ``sqlml`` command (its console script and ``python -m sqlml``): a Ctrl-C while sqlml
loads ends it quietly, with status 130, as one while it runs does.

Python turns SIGINT into ``KeyboardInterrupt`` from its start, and one raised while the
modules load would print a traceback; until they are loaded, SIGINT ends the process at once.
Later, a ``KeyboardInterrupt`` that reaches here (outside a run, which hears Ctrl-C itself) is
one line too.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

INTERRUPTED = 130  # as shells report SIGINT
_SAID = "sqlml: interrupted\n"


def _quit(signum: int, frame: FrameType | None) -> None:
    os.write(2, _SAID.encode())
    os._exit(INTERRUPTED)


def main() -> int:
    """Load sqlml's command line and run it."""
    quiet = signal.getsignal(signal.SIGINT) is signal.default_int_handler  # not SIG_IGN (nohup)
    if quiet:
        signal.signal(signal.SIGINT, _quit)
    from sqlml.cli import main as command

    if quiet:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return command()
    except KeyboardInterrupt:
        sys.stderr.write(_SAID)
        return INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
