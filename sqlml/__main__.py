"""The ``sqlml`` command (its console script and ``python -m sqlml``): a Ctrl-C while sqlml
loads ends it quietly, with status 130, as one while it runs does
(:mod:`sqlml.interrupted`)."""

from __future__ import annotations

import sys

from sqlml.interrupted import INTERRUPTED, SAID, loading


def main() -> int:
    """Load sqlml's command line and run it."""
    with loading():
        from sqlml.cli import main as command
    try:
        return command()
    except KeyboardInterrupt:  # outside a run, which hears Ctrl-C itself
        sys.stderr.write(SAID)
        return INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
