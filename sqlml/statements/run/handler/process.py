"""A TO RUN program's child process: started in a process group of its own, its output
passed on line by line to standard error (the step's log) and its last lines kept, stopped
with its whole group past the timeout or when the statement is cancelled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import IO

from sqlml.errors import SqlmlError
from sqlml.runtime.cancel import Token, stopped_error

TAIL_LINES = 20  # of the program's output, shown when it fails
GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL


def run_child(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    timeout: float,
    token: Token,
    name: str,
    log: IO[str] | None = None,
) -> None:
    """Run ``argv`` to its end, its output passed on to standard error and ``log``; a
    :class:`SqlmlError` naming the program ``name`` (with its last lines) if it fails, runs
    past ``timeout`` seconds or ``token`` is cancelled."""
    try:
        child = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as one
        )
    except OSError as error:
        raise SqlmlError(
            f"the program {name} cannot be started: {error.strerror or error}",
            hint=f"check that {argv[0]} exists and can be run",
        ) from None
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    reader = threading.Thread(target=_pass_on, args=(child, tail, log), daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                child.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
            if token.stopped:
                _stop(child)
                raise stopped_error(token)
            if time.monotonic() > deadline:
                _stop(child)
                reader.join(timeout=1)
                raise SqlmlError(
                    f"the program {name} ran longer than run.timeout = {timeout:g} s and was "
                    f"stopped{_last_lines(tail)}",
                    hint="give it more time with WITH run.timeout = <seconds>; nothing was written",
                )
    finally:
        _kill_group(child, signal.SIGKILL)  # what it left running
    reader.join(timeout=1)
    if child.returncode:
        raise SqlmlError(
            f"the program {name} failed (exit status {child.returncode}){_last_lines(tail)}",
            hint="correct the program; nothing was written, the INTO tables are as they were",
        )


def _pass_on(child: subprocess.Popen[bytes], tail: deque[str], log: IO[str] | None) -> None:
    """Copy the child's output to standard error and ``log``, keeping its last lines."""
    assert child.stdout is not None
    for raw in child.stdout:
        line = raw.decode(errors="replace")
        tail.append(line.rstrip("\n"))
        for stream in (sys.stderr, log):
            if stream is not None:
                with suppress(OSError, ValueError):
                    stream.write(line)
                    stream.flush()


def _last_lines(tail: deque[str]) -> str:
    if not tail:
        return "; it printed nothing"
    return "; its last lines:\n" + "\n".join(f"    {line}" for line in tail)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the child's group, then SIGKILL if it is still running."""
    _kill_group(child, signal.SIGTERM)
    try:
        child.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(child, signal.SIGKILL)
        child.wait()


def _kill_group(child: subprocess.Popen[bytes], signum: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signum)
