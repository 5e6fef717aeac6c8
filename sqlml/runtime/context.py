"""What a running statement is given besides itself: its datasource, its cancellation token,
its progress reporter, where its own output goes and the run it is a step of.

Whatever runs a statement (:func:`sqlml.runtime.execute.execute`) makes its
:class:`Context` and hands it to the statement's handler, which passes what is needed down
to the code that reads, trains, scores and writes. Nothing about a running statement is kept
in module-level state, so statements running in parallel are independent.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from sqlml.datasources import Datasource
from sqlml.runtime.cancel import Token
from sqlml.runtime.progress import Progress

if TYPE_CHECKING:
    import numpy as np

# A step's pod's environment variable naming its run: an Argo Workflow's name
RUN_ENV = "SQLML_RUN_ID"


@dataclass(frozen=True)
class RunStep:
    """The recorded run a statement is a step of: the run's id, the step's name and the
    program's file as given (each None where there is none: the shell, the notebook and the
    editor record no run; ``sqlml -e`` and a pod have no program file)."""

    run: str | None = None
    step: str | None = None
    program: str | None = None


@dataclass(frozen=True)
class Context:
    """A running statement's datasource, the :class:`Token` that stops it (a timeout,
    Ctrl-C, a stopped pod), the :class:`Progress` it reports to (by default: a token nobody
    cancels, and nowhere), ``log``, where output of its own goes (a TO RUN program's):
    the step's log, else (None) standard error, the :class:`RunStep` it runs as (what a
    trained model's lineage records) and the fingerprints of the tables it read."""

    datasource: Datasource
    token: Token = field(default_factory=Token)
    reporter: Progress = field(default_factory=Progress)
    log: IO[str] | None = None
    run: RunStep = field(default_factory=RunStep)
    # The tables' fingerprints it has taken (sqlml.runtime.cache.Fingerprints), each once
    fingerprints: dict[tuple[str, ...], str | None] = field(default_factory=dict)

    def batches(self, rows: np.ndarray, size: int) -> Iterator[np.ndarray]:
        """``rows`` ``size`` at a time, as a scorer goes through them: the token checked
        before each batch, the progress advanced by its rows once it is done."""
        for start in range(0, len(rows), size):
            self.token.check()
            batch = rows[start : start + size]
            yield batch
            self.reporter.advance(len(batch))
