"""The supervisor of a TO RUN program: ``python -m sqlml.statements.run.launch ARGV...``.

sqlml starts it in a session of its own; it runs ``ARGV`` (the program) as its child and
ties the program's life, and its descendants', to sqlml's (on Linux; elsewhere it only runs
the program, which sqlml stops with its process group):

- it asks for a signal when sqlml dies (``PR_SET_PDEATHSIG``), however sqlml dies (SIGKILL
  too), and the program for SIGKILL when the supervisor dies;
- it is the subreaper of the program's descendants (``PR_SET_CHILD_SUBREAPER``): a
  descendant whose parent ends, one that started a session of its own too, becomes its child;
- once the program ends, or on SIGTERM (sqlml stopping the program: a timeout, a
  cancellation) or sqlml's death, it ends every descendant still running (SIGTERM to the
  program's group first when asked to stop, SIGKILL to all after ``GRACE_SECONDS``), and
  ends with the program's status;
- on sqlml's death, it removes the hand-over folder (the rows' Parquet file and the tables
  the program wrote), which sqlml, dead, cannot.

It imports nothing but the standard library, so that it starts at once.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

PARENT_ENV = "SQLML_RUN_PARENT"  # sqlml's pid: a supervisor whose parent is another quits
HAND_OVER_ENV = "SQLML_RUN_FOLDER"  # the hand-over folder, removed if sqlml dies
GRACE_SECONDS = 3.0  # between SIGTERM to the program and SIGKILL to all
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_WAITED = {signal.SIGTERM, signal.SIGCHLD}  # blocked, and waited for: no race with a handler


def main(argv: list[str]) -> int:
    if not sys.platform.startswith("linux"):  # no prctl: the program runs unsupervised
        return subprocess.call(argv)
    parent = int(os.environ.get(PARENT_ENV, "0"))
    unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)  # waited for, below
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if parent and os.getppid() != parent:  # sqlml died before the signal was asked for
        _orphaned()
        return 1
    program = _start(argv, unblocked)
    while True:
        if signal.sigwaitinfo(_WAITED).si_signo == signal.SIGTERM:
            status = _stopped(program)
            break
        done, status = os.waitpid(program, os.WNOHANG)
        if done:
            break
    _end_descendants()
    if parent and os.getppid() != parent:
        _orphaned()
    return _exit_code(status)


def _start(argv: list[str], mask: set[signal.Signals]) -> int:
    """The program's pid: ``argv`` run (with the signal ``mask``) in a child that dies with
    this process."""
    supervisor = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if os.getppid() == supervisor:
            os.execvp(argv[0], argv)
    except OSError as error:
        print(f"sqlml: {argv[0]} cannot be run: {error.strerror or error}", file=sys.stderr)
    finally:
        os._exit(127)


def _stopped(program: int) -> int:
    """SIGTERM to the program's group (this process's, which blocks it), then its status
    once it ends or, past ``GRACE_SECONDS``, once SIGKILL ended it."""
    with suppress(ProcessLookupError):
        os.killpg(0, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline:
        done, status = os.waitpid(program, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    with suppress(ProcessLookupError):
        os.kill(program, signal.SIGKILL)
    return os.waitpid(program, 0)[1]


def _end_descendants() -> None:
    """SIGKILL to every descendant, reaped: as each one's parent dies, its children become
    this process's (the subreaper's), until it has none."""
    me = os.getpid()
    while True:
        for pid in _children(me):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                time.sleep(0.01)  # none has ended yet
        except ChildProcessError:
            return


def _children(pid: int) -> list[int]:
    """The pids of the processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _orphaned() -> None:
    """sqlml died: remove the hand-over folder it would have removed."""
    folder = os.environ.get(HAND_OVER_ENV)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, int(value), 0, 0, 0)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
