"""External memory's pages kept on local disk between XGBoost's passes.

XGBoost reads an external-memory matrix in several passes (its shape, the quantile sketch,
the pages it builds). The first pass reads the SELECT; it also writes each page (the float32
feature matrix and its labels, ``.npy`` files read without pickle) to the training's
temporary folder, and the later passes read them from there instead of running the SELECT
again: about 4 bytes a feature a row on disk, beside XGBoost's own cache, for passes that
no longer cost the database a scan each, and that hold the very rows of the first.

A pass whose pages would leave less than ``RESERVE`` bytes free on the folder's disk (or
whose write fails) stops writing and drops what it wrote: every pass then reads the SELECT,
as without a spool.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np

RESERVE = 1 << 30  # bytes left free on the temporary folder's disk
Page = tuple[np.ndarray, np.ndarray]  # features (rows x columns, float32), labels


class Spool:
    """Pages written to ``folder`` during one pass, read back in the passes after it."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._pages = 0  # pages of the complete pass written, 0 before it
        self._full = False  # the disk had no room: no pass is written

    @property
    def complete(self) -> bool:
        """Whether a whole pass is on disk, to be read instead of the SELECT."""
        return self._pages > 0

    def record(self, pages: Iterator[Page]) -> Iterator[Page]:
        """``pages``, written as they go by; complete only if the pass reaches its end."""
        written = 0
        for features, labels in pages:
            if not self._full:
                self._full = not self._write(written, features, labels)
                written = 0 if self._full else written + 1
            yield features, labels
        self._pages = written

    def replay(self) -> Iterator[Page]:
        """The written pass's pages, in order."""
        for page in range(self._pages):
            yield self._load(page, "x"), self._load(page, "y")

    def _write(self, page: int, features: np.ndarray, labels: np.ndarray) -> bool:
        """Write page ``page``; False (and the pages written removed) if the disk is short or
        the write fails (the disk filled meanwhile)."""
        try:
            self._folder.mkdir(exist_ok=True)
            if shutil.disk_usage(self._folder).free - features.nbytes - labels.nbytes >= RESERVE:
                np.save(self._path(page, "x"), features, allow_pickle=False)
                np.save(self._path(page, "y"), labels, allow_pickle=False)
                return True
        except OSError:
            pass
        shutil.rmtree(self._folder, ignore_errors=True)
        return False

    def _load(self, page: int, part: str) -> np.ndarray:
        return np.load(self._path(page, part), allow_pickle=False)

    def _path(self, page: int, part: str) -> Path:
        return self._folder / f"{page}.{part}.npy"
