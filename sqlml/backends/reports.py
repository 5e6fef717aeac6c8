"""What a run reports of its statements, whatever its backend: their results
(:data:`WriteResult`), the verdict on each (:class:`Verdict`), and the run's result
(:class:`RunReport`) that a backend's ``run`` hands to ``on_result`` when it knows how each
statement ended, for the end-of-run summary and the JUnit report (:mod:`sqlml.junit`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from sqlml.errors import SqlmlError

if TYPE_CHECKING:
    from sqlml.datasources import ResultSet
    from sqlml.runtime.outcome import Outcome
    from sqlml.workflow.core import Step

PASSED, FAILURE, ERROR, SKIPPED = "passed", "failure", "error", "skipped"

# What keeps a statement's result (its id, the rows) in a run of a backend that runs the
# statements here (``Backend.runs_here``): printed on stdout, or a file of its own.
WriteResult = Callable[[str, "ResultSet"], object]


@dataclass(frozen=True)
class Verdict:
    """A statement's ``outcome`` (passed, failure, error or skipped) and, unless it passed,
    the ``diagnostic`` saying so, located at the statement. ``cancelled``: the run's
    cancellation ended it (a front end that says once that the run was cancelled leaves it
    out)."""

    outcome: str
    diagnostic: SqlmlError | None = None
    cancelled: bool = False

    @property
    def besides_cancellation(self) -> SqlmlError | None:
        """The diagnostic, unless the run's cancellation ended the statement: what a front
        end that says once that the run was cancelled (the shell, a notebook, the editor)
        shows."""
        return None if self.cancelled else self.diagnostic


@dataclass(frozen=True)
class StatementEnd:
    """How the statement of ``step`` ended in the run ``run_id``: its ``verdict``, and the
    ``outcome`` of a statement that ran and succeeded (None if it did not, or was cached)."""

    run_id: str
    step: Step
    verdict: Verdict
    outcome: Outcome | None = None


# What a run that runs statements for a person calls as each statement ends, in order.
StatementDone = Callable[[StatementEnd], None]


class StepReport(Protocol):
    """One step of a run as it went: when, and its outputs (``result``: a statement's)."""

    @property
    def started_at(self) -> float | None: ...
    @property
    def ended_at(self) -> float | None: ...
    @property
    def outputs(self) -> Mapping[str, str]: ...


class RunReport(Protocol):
    """A run's result: its steps by name (a statement's steps are named by its id, its
    parts ``ID-...``), the verdict on each statement by its id, and its first error."""

    @property
    def steps(self) -> Mapping[str, StepReport]: ...
    @property
    def verdicts(self) -> Mapping[str, Verdict]: ...
    @property
    def error(self) -> SqlmlError | None:
        """The run's first error (None: it succeeded)."""
