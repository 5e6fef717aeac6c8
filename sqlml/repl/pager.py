"""Show output, through a pager when it does not fit the terminal."""

from __future__ import annotations

import os
import pydoc
import shlex
import shutil
import subprocess
import sys


def page(text: str) -> None:
    """Print ``text``; on a terminal too small for it, page it with ``$PAGER`` or ``less``
    (``less -SRXF``: long lines scroll sideways, and it quits at once if the text fits)."""
    size = shutil.get_terminal_size()
    lines = text.splitlines()
    fits = len(lines) < size.lines - 1 and all(len(line) <= size.columns for line in lines)
    if fits or not (sys.stdin.isatty() and sys.stdout.isatty()):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    command = os.environ.get("PAGER")
    if not command and shutil.which("less"):
        command = "less -SRXF"
    if not command:
        pydoc.pager(text)
        return
    try:
        subprocess.run(shlex.split(command), input=text, text=True, check=False)
    except OSError:  # the pager cannot run: print instead
        sys.stdout.write(text)
