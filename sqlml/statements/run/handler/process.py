"""A TO RUN program's child process: started through its supervisor
(:mod:`sqlml.statements.run.launch`, which ties its life and its descendants' to sqlml's) in
a session of its own, its output passed on to standard error (the step's log) with each
line cut at :data:`~sqlml.runtime.bounds.LINE_LIMIT` (the log keeps it whole, up to
:data:`~sqlml.runtime.bounds.LOG_LIMIT`) and its last lines kept, stopped with all it started
past the timeout or when the statement is cancelled."""

from __future__ import annotations

import codecs
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
from sqlml.runtime.bounds import LINE_LIMIT, LOG_LIMIT, cut_note
from sqlml.runtime.cancel import Token, stopped_error
from sqlml.statements.run import launch

TAIL_LINES = 20  # of the program's output, shown when it fails
READ_SECONDS = 5.0  # for the last of the output once the program ended: a guard
STOP_SECONDS = 30.0  # for the supervisor to end the program and what it started: a guard
CHUNK = 64 * 1024  # of the program's output, read at once


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
            [sys.executable, "-m", launch.__name__, *argv],
            cwd=cwd,
            env={**env, launch.PARENT_ENV: str(os.getpid())},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group
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
                reader.join(timeout=READ_SECONDS)
                raise SqlmlError(
                    f"the program {name} ran longer than run.timeout = {timeout:g} s and was "
                    f"stopped{_last_lines(tail)}",
                    hint="give it more time with WITH run.timeout = <seconds>; nothing was written",
                )
    finally:
        _kill_group(child, signal.SIGKILL)  # the supervisor's group, if it did not end it
    reader.join(timeout=READ_SECONDS)
    if child.returncode:
        raise SqlmlError(
            f"the program {name} failed (exit status {child.returncode}){_last_lines(tail)}",
            hint="correct the program; nothing was written, the INTO tables are as they were",
        )


def _pass_on(child: subprocess.Popen[bytes], tail: deque[str], log: IO[str] | None) -> None:
    """Copy the child's output, read in chunks, to ``log`` (up to ``LOG_LIMIT`` characters)
    and, each line cut at ``LINE_LIMIT``, to standard error and ``tail``."""
    assert child.stdout is not None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines = _Lines(tail, getattr(log, "path", None))
    logged = 0
    while chunk := child.stdout.read1(CHUNK):
        text = decoder.decode(chunk)
        if log is not None and logged < LOG_LIMIT:
            _write(log, text[: LOG_LIMIT - logged])
            if logged + len(text) >= LOG_LIMIT:
                _write(log, f"\n{cut_note(0, 'the output past here is not kept')}\n")
        logged += len(text)
        lines.feed(text)
    lines.feed(decoder.decode(b"", final=True))
    lines.end()
    if log is not None and logged > LOG_LIMIT:
        _write(log, f"{cut_note(logged - LOG_LIMIT, f'the log keeps {LOG_LIMIT} of them')}\n")


class _Lines:
    """The program's output as lines cut at ``LINE_LIMIT`` (with a note of the rest and the
    log ``path`` that keeps it), written to standard error and kept in ``tail``."""

    def __init__(self, tail: deque[str], path: Path | None) -> None:
        self._tail, self._path = tail, path
        self._kept: list[str] = []  # the current line's start, LINE_LIMIT characters at most
        self._length = 0  # the current line's length

    def feed(self, text: str) -> None:
        while text:
            line, newline, text = text.partition("\n")
            room = LINE_LIMIT - min(self._length, LINE_LIMIT)
            if room:
                self._kept.append(line[:room])
            self._length += len(line)
            if newline:
                self.end()

    def end(self) -> None:
        """The current line is complete: shown and kept."""
        if not self._kept and not self._length:
            return
        line = "".join(self._kept)
        if self._length > LINE_LIMIT:
            where = f"the step log {self._path} keeps them" if self._path else ""
            line += cut_note(self._length - LINE_LIMIT, where)
        self._kept, self._length = [], 0
        self._tail.append(line.rstrip("\r"))
        _write(sys.stderr, line + "\n")


def _write(stream: IO[str] | None, text: str) -> None:
    if stream is not None:
        with suppress(OSError, ValueError):
            stream.write(text)
            stream.flush()


def _last_lines(tail: deque[str]) -> str:
    if not tail:
        return "; it printed nothing"
    return "; its last lines:\n" + "\n".join(f"    {line}" for line in tail)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the child's group: the supervisor ends the program (SIGKILL past its
    grace) and all it started; SIGKILL to the group if the supervisor itself does not end."""
    _kill_group(child, signal.SIGTERM)
    try:
        child.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(child, signal.SIGKILL)
        child.wait()


def _kill_group(child: subprocess.Popen[bytes], signum: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signum)
