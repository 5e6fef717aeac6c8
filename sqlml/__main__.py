"""The ``sqlml`` command (its console script and ``python -m sqlml``): a Ctrl-C while sqlml
loads ends it quietly, with status 130, as one while it runs does
(:mod:`sqlml.interrupted`).

Once a command has loaded TensorFlow, the interpreter's own shutdown takes seconds (7 to 17
on a busy machine: TensorFlow's objects and thread pools torn down one by one) after
everything sqlml writes is written. So the command's end is the process's end then: the
exit handlers run, the standard streams are flushed, and the process exits at once.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys

from sqlml.interrupted import INTERRUPTED, SAID, loading


def main() -> int:
    """Load sqlml's command line and run it."""
    with loading():
        from sqlml.cli import main as command
    try:
        status = command()
    except KeyboardInterrupt:  # outside a run, which hears Ctrl-C itself
        sys.stderr.write(SAID)
        status = INTERRUPTED
    if "tensorflow" in sys.modules:
        _exit_now(status)
    return status


def _exit_now(status: int) -> None:
    """End the process with ``status`` without the interpreter's shutdown, once the exit
    handlers have run and the standard streams are flushed (the command has closed its
    connections and files: nothing else is pending)."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to write
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    raise SystemExit(main())
