"""External memory's batches kept on local disk between passes.

XGBoost reads an external-memory matrix in several passes (its shape, the quantile sketch,
the pages it builds), Keras once an epoch. The first pass reads the SELECT; it also writes
each batch (its arrays by name and its labels, one ``.npz`` file read without pickle) to the
training's temporary folder, and the later passes read them from there instead of running
the SELECT again: about the batches' size on disk (4 bytes a feature a row for XGBoost's
float32 matrix), for passes that no longer cost the database a scan each and that hold the
very rows of the first.

A pass whose batches would leave less than ``RESERVE`` bytes free on the folder's disk, or
whose write fails (the disk filled meanwhile, an array of Python objects), stops writing and
drops what it wrote: every pass then reads the SELECT, as without a spool.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np

RESERVE = 1 << 30  # bytes left free on the temporary folder's disk
Page = tuple[dict[str, np.ndarray], np.ndarray]  # arrays by name, labels
_LABELS = "labels"  # the labels' name in a page's file; the arrays' names are prefixed


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

    def passed(self, pages: Iterator[Page]) -> Iterator[Page]:
        """One pass: the written one if complete, else ``pages``, written as they go by."""
        return self._replay() if self.complete else self._record(pages)

    def _record(self, pages: Iterator[Page]) -> Iterator[Page]:
        """``pages``, written as they go by; complete only if the pass reaches its end."""
        written = 0
        for arrays, labels in pages:
            if not self._full:
                self._full = not self._write(written, arrays, labels)
                written = 0 if self._full else written + 1
            yield arrays, labels
        self._pages = written

    def _replay(self) -> Iterator[Page]:
        for page in range(self._pages):
            with np.load(self._path(page), allow_pickle=False) as stored:
                arrays = {name[2:]: stored[name] for name in stored.files if name != _LABELS}
                yield arrays, stored[_LABELS]

    def _write(self, page: int, arrays: dict[str, np.ndarray], labels: np.ndarray) -> bool:
        """Write page ``page``; False (and the pages written removed) if the disk is short or
        the write fails."""
        named = {f"a_{name}": values for name, values in arrays.items()}
        named[_LABELS] = labels
        size = sum(values.nbytes for values in named.values())
        try:
            self._folder.mkdir(exist_ok=True)
            objects = any(values.dtype.hasobject for values in named.values())  # need pickle
            if not objects and shutil.disk_usage(self._folder).free - size >= RESERVE:
                np.savez(self._path(page), **named)
                return True
        except OSError:
            pass
        shutil.rmtree(self._folder, ignore_errors=True)
        return False

    def _path(self, page: int) -> Path:
        return self._folder / f"{page}.npz"
