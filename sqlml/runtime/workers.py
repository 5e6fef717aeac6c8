"""Worker processes of one step on this machine: started with the environment that the
Kubeflow training operator gives an XGBoostJob's pods, waited for, and stopped together.

Each worker runs the step's statement (``python -m sqlml.runtime.step``) as a pod would;
credentials reach it through its environment, never its arguments. The step fails with the
first worker that fails, naming its rank, and stops the others; a cancelled step (Ctrl-C, a
timeout) stops them all. A worker whose parent dies ends itself (:func:`watch_parent`), so
none is left behind.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sqlml.errors import ModelError, SqlmlError
from sqlml.runtime.cancel import Token

PARENT_ENV = "SQLML_PARENT_PID"  # a local worker's parent, which it ends with
RESULT_ENV = "SQLML_WORKERS_FOLDER"  # where local workers leave their errors and results
STOP_GRACE = 3.0  # seconds a stopped worker has to end before it is killed
POLL = 0.05
JOB_ENV = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")  # the training operator's


def job_size() -> int:
    """The processes of the job this one is a worker of (``WORLD_SIZE``, which the training
    operator sets with ``RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``); 1 outside a job."""
    if not all(name in os.environ for name in JOB_ENV):
        return 1
    return int(os.environ["WORLD_SIZE"])


def free_port() -> int:
    """A TCP port of the loopback interface that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run(argument: str, count: int, env: Mapping[str, str], folder: Path, token: Token) -> None:
    """Run ``count`` workers of the step ``argument`` (ranks 0 .. count - 1, rank 0 hosting
    the collective's tracker on a free loopback port), each with ``env`` added to this
    process's environment, until all have succeeded; their output goes to ``folder``.

    A :class:`ModelError` names the first worker that failed; ``token``'s cancellation
    stops them all and raises it."""
    common = {
        **os.environ,
        **env,
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(free_port()),
        "WORLD_SIZE": str(count),
        PARENT_ENV: str(os.getpid()),
        RESULT_ENV: str(folder),
    }
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for rank in range(count):
            with open(folder / f"worker-{rank}.log", "wb") as log:
                processes.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "sqlml.runtime.step", argument],
                        env={**common, "RANK": str(rank)},
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,  # Ctrl-C reaches the step, which stops them
                    )
                )
        _wait(processes, folder, token)
    finally:
        stop(processes)


def _wait(processes: Sequence[subprocess.Popen[bytes]], folder: Path, token: Token) -> None:
    while True:
        token.check()
        codes = [process.poll() for process in processes]
        failed = [rank for rank, code in enumerate(codes) if code not in (None, 0)]
        if failed:
            time.sleep(POLL * 4)  # the worker whose failure ended the others' may be later
            codes = [process.poll() for process in processes]
            failed = [rank for rank, code in enumerate(codes) if code not in (None, 0)]
            raise _failure(folder, min(failed, key=lambda rank: _consequence(folder, rank)), codes)
        if all(code == 0 for code in codes):
            return
        time.sleep(POLL)


def _consequence(folder: Path, rank: int) -> tuple[bool, int]:
    """Sorts a worker that failed because another did (its error says so) after the others."""
    error = _error(folder, rank)
    return (error is not None and bool(error.get("consequence")), rank)


def _failure(folder: Path, rank: int, codes: Sequence[int | None]) -> ModelError:
    """The error of worker ``rank``: the one it recorded, else its exit status and log."""
    count = len(codes)
    error = _error(folder, rank)
    if error is not None:
        return ModelError(f"worker {rank} of {count}: {error['message']}", hint=error["hint"])
    log = (folder / f"worker-{rank}.log").read_text(errors="replace").strip().splitlines()
    last = log[-1] if log else "no output"
    return ModelError(
        f"worker {rank} of {count} ended with exit status {codes[rank]}: {last}",
        hint="see the worker's message; lower train.workers if memory ran short",
    )


def record_error(error: SqlmlError, consequence: bool = False) -> None:
    """In a local worker, leave ``error`` for the step that started it (``consequence``:
    the worker failed because another did)."""
    folder, rank = os.environ.get(RESULT_ENV), os.environ.get("RANK")
    if folder and rank is not None:
        text = {"message": error.message, "hint": error.hint, "consequence": consequence}
        (Path(folder) / f"error-{rank}.json").write_text(json.dumps(text))


def _error(folder: Path, rank: int) -> dict[str, str] | None:
    path = folder / f"error-{rank}.json"
    return json.loads(path.read_text()) if path.exists() else None


def stop(processes: Sequence[subprocess.Popen[bytes]]) -> None:
    """Stop the workers still running (SIGTERM, which cancels a step; then SIGKILL) and
    reap them all."""
    running = [process for process in processes if process.poll() is None]
    for process in running:
        process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    for process in running:
        try:
            process.wait(max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def watch_parent() -> None:
    """In a local worker: end this process when the step that started it has gone (killed
    without the chance to stop its workers)."""
    parent = os.environ.get(PARENT_ENV)
    if not parent:
        return

    def watch() -> None:
        while os.getppid() == int(parent):
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True, name="sqlml-parent-watch").start()
