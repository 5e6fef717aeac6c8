"""HiGHS (``scipy.optimize.milp``) in a child process, which a cancelled statement kills.

HiGHS checks no signal and takes no callback while it solves: in this process, a timeout or
Ctrl-C would wait for it to end, however long. The child (``python -m`` this module) reads
the program from its standard input (an ``.npz``, read without pickle), solves it and writes
the result to its standard output. It keeps reading its input after the program: the end of
that input (its parent gone, killed or quit at once) ends it too, so no solver is left behind.
It is in a process group of its own, out of reach of the terminal's Ctrl-C, which its parent
hears and answers by killing it.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml.errors import SqlmlError

POLL = 0.05  # seconds between two checks of the statement's cancellation
# A process group of the child's own: the terminal's Ctrl-C reaches the parent only.
_OWN_GROUP: dict[str, Any] = (
    {"process_group": 0}
    if os.name == "posix"
    else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
)
_LENGTH = 8  # bytes of the program's length, before it


@dataclass(frozen=True)
class Found:
    """``milp``'s answer: its status, its message and the values (None without a solution)."""

    status: int
    message: str
    x: np.ndarray | None


def milp(arrays: dict[str, np.ndarray], check: Callable[[], None]) -> Found:
    """Solve the program of ``arrays`` (``cost``, ``integrality``, ``lower``, ``upper``, the
    CSR ``data``, ``indices``, ``indptr`` and ``shape`` of the constraint matrix, ``low``,
    ``high`` and ``time_limit``, NaN for none) in a child process; ``check`` is called every
    :data:`POLL` seconds meanwhile, and what it raises kills the child and is raised."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    payload = buffer.getvalue()
    with tempfile.TemporaryFile() as errors:
        child = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            **_OWN_GROUP,
        )
        try:
            output = _exchange(child, payload, check)
        finally:
            if child.poll() is None:
                child.kill()
            child.stdin.close()
            child.stdout.close()
            child.wait()
        if child.returncode == 0 and output:
            return _found(output)
        errors.seek(0)
        said = errors.read().decode(errors="replace").strip()
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        raise SqlmlError(
            f"the solver's process was killed ({name}) before it found a solution",
            hint="a SIGKILL is often the system out of memory: try a smaller problem; "
            "nothing was written",
        )
    raise RuntimeError(f"the solver's process failed (status {child.returncode}): {said}")


def _exchange(child: subprocess.Popen[bytes], payload: bytes, check: Callable[[], None]) -> bytes:
    """Send ``payload`` to the child, and read its output, calling ``check`` meanwhile."""
    output: list[bytes] = []

    def talk() -> None:
        try:
            child.stdin.write(len(payload).to_bytes(_LENGTH, "big") + payload)
            child.stdin.flush()  # kept open: its end tells the child to end
        except BrokenPipeError:  # the child died: its status says so
            return
        output.append(child.stdout.read())

    talker = threading.Thread(target=talk, name="sqlml-solver", daemon=True)
    talker.start()
    while talker.is_alive():
        talker.join(POLL)
        check()
    return output[0] if output else b""


def _found(output: bytes) -> Found:
    with np.load(io.BytesIO(output), allow_pickle=False) as result:
        x = result["x"] if bool(result["has_x"]) else None
        return Found(int(result["status"]), str(result["message"]), x)


def _solve(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The child's work: ``milp`` on the program of ``arrays``; its result as arrays."""
    from scipy import optimize, sparse

    shape = tuple(int(size) for size in arrays["shape"])
    matrix = sparse.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape)
    constraints = [optimize.LinearConstraint(matrix, arrays["low"], arrays["high"])]
    time_limit = float(arrays["time_limit"])
    found = optimize.milp(
        arrays["cost"],
        integrality=arrays["integrality"],
        bounds=optimize.Bounds(arrays["lower"], arrays["upper"]),
        constraints=constraints if shape[0] else [],
        options=None if np.isnan(time_limit) else {"time_limit": time_limit},
    )
    x = found.x if found.x is not None else np.empty(0)
    return {
        "status": np.array(found.status),
        "message": np.array(found.message),
        "x": x,
        "has_x": np.array(found.x is not None),
    }


def _child() -> None:
    """Read the program, solve it and write the result; end when the input ends."""
    length = int.from_bytes(_read(_LENGTH), "big")
    with np.load(io.BytesIO(_read(length)), allow_pickle=False) as loaded:
        arrays = {name: loaded[name] for name in loaded.files}

    def orphaned() -> None:  # os.read: no lock of sys.stdin's held at exit
        while os.read(0, 4096):  # until the parent closes it or dies
            pass
        os._exit(1)

    threading.Thread(target=orphaned, daemon=True).start()
    buffer = io.BytesIO()
    np.savez(buffer, **_solve(arrays))
    sys.stdout.buffer.write(buffer.getvalue())
    sys.stdout.buffer.flush()


def _read(size: int) -> bytes:
    """``size`` bytes of the standard input (fewer if it ends first)."""
    parts, left = [], size
    while left and (part := os.read(0, min(left, 1 << 20))):
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


if __name__ == "__main__":
    _child()
