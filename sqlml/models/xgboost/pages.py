"""The temporary folder of XGBoost's external-memory pages, and the room they need there.

XGBoost writes its pages from C++ and aborts the whole process when a write fails (a full
disk: ``terminate called after throwing an instance of 'dmlc::Error'``), which no Python code
can catch. So each batch is checked before XGBoost gets it: its page, and later the pages
the training derives from all of them (sorted or binned copies), must fit on the folder's
disk with :data:`MARGIN` to spare, or the training stops with an error. The disk may still
fill from elsewhere meanwhile: the folder of a process that died so is removed by the next
external-memory training (the folders hold a lock while their training lives).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np

from sqlml.errors import ModelError

MARGIN = 16 << 20  # bytes left free on the disk beyond the estimate
PREFIX = "sqlml-xgboost-"
_LOCK = "lock"  # held while the training lives


@contextmanager
def folder() -> Iterator[Path]:
    """A new temporary folder for one training's pages, removed when it ends, after those
    left by trainings whose process died."""
    _remove_orphans(Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory(prefix=PREFIX) as name:
        path = Path(name)
        with _held(path):
            yield path


@contextmanager
def _held(path: Path) -> Iterator[None]:
    """Hold the lock of ``path`` (made under another name, then renamed: another process
    never finds it unlocked)."""
    try:
        import fcntl
    except ImportError:  # Windows: no orphan is ever removed
        yield
        return
    making = path / f"{_LOCK}.new"
    with open(making, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        making.rename(path / _LOCK)
        yield


def _remove_orphans(root: Path) -> None:
    """Remove the page folders in ``root`` whose lock nobody holds: their process died."""
    try:
        import fcntl
    except ImportError:
        return
    for lock_path in root.glob(f"{PREFIX}*/{_LOCK}"):
        with suppress(OSError), open(lock_path) as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a training alive
            shutil.rmtree(lock_path.parent, ignore_errors=True)


class Room:
    """The pages XGBoost writes for the batches seen so far, against their disk's room."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._pages = 0  # bytes

    def check(self, x: np.ndarray) -> None:
        """A :class:`ModelError` if the page of batch ``x`` (8 bytes a value and a row: a
        value and its column, a row's offset), and the derived pages of every batch so far
        (as much again), would leave less than :data:`MARGIN` free."""
        page = 8 * x.size + 8 * (len(x) + 1)
        self._pages += page
        needed = page + self._pages + MARGIN
        free = shutil.disk_usage(self._path).free
        if free < needed:
            raise ModelError(
                f"the disk of the temporary folder {self._path.parent} has {_size(free)} free; "
                f"XGBoost's external-memory pages of the rows read so far need about "
                f"{_size(needed)}",
                hint="free space there, or set TMPDIR to a folder on a larger disk; "
                "nothing was saved",
            )


def _size(count: int) -> str:
    return f"{count / (1 << 20):,.1f} MiB"
