"""How each statement of a local run ended (a :class:`~sqlml.backends.reports.Verdict`),
said once: the outcome that the end-of-run summary and the JUnit report count, and the one
diagnostic every front end shows for a statement that did not succeed.

- a statement that failed (a timeout included) is a ``failure``, shown as its error;
- one the run's cancellation stopped (Ctrl-C) is an ``error``, shown as its cancellation;
- one that did not run (a step it waits for failed or did not run, the run was cancelled
  before it started, its ``when`` condition did not hold) is ``skipped``, shown as a
  :class:`~sqlml.errors.NotRun` note saying why.

A statement of several steps (a search: its trials, then the step keeping the best) gets
one verdict, from the first of its steps that did not end done.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from sqlml.backends.local import record as rec
from sqlml.backends.reports import ERROR, FAILURE, PASSED, SKIPPED, Verdict
from sqlml.errors import NotRun, SqlmlError
from sqlml.workflow.core import Step

CANCELLED_RUN = "the run was cancelled"  # why a step not yet started when it was is omitted
_UNMET = "its condition does not hold"  # why a step is skipped


def verdict(
    step: Step, records: Sequence[rec.StepRecord], errors: Mapping[str, SqlmlError]
) -> Verdict:
    """The verdict on the statement ``step`` runs, from the records of its steps in the
    workflow's order (``step``'s last) and the errors of those that failed, by step name."""
    ended = next((r for r in records if r.state not in rec.DONE_STATES), records[-1])
    if ended.state in (rec.SUCCEEDED, rec.CACHED):
        return Verdict(PASSED)
    if ended.state in (rec.SKIPPED, rec.OMITTED):
        why = ended.error or _UNMET
        note = _located(NotRun(f"not run: {why}"), step)
        return Verdict(SKIPPED, note, cancelled=why.startswith(CANCELLED_RUN))
    error = errors.get(ended.step) or SqlmlError(ended.error or f"the step ended {ended.state}")
    stopped = ended.state == rec.CANCELLED
    return Verdict(ERROR if stopped else FAILURE, _located(error, step), stopped)


def omission(after: Sequence[str], states: Mapping[str, str]) -> str:
    """Why a step waiting for the steps ``after`` (their ``states`` known) is not run: the
    first of them that did not end done, and how it ended."""
    first = next(name for name in after if states[name] not in rec.DONE_STATES)
    how = {rec.FAILED: "failed", rec.CANCELLED: "was cancelled"}.get(states[first], "did not run")
    return f"it waits for {first}, which {how}"


def _located(error: SqlmlError, step: Step) -> SqlmlError:
    """A copy of ``error`` located at ``step``'s statement, unless it has a place of its own."""
    located = copy.copy(error)
    if "line" in step.params:
        located.at(step.params["line"], step.params["column"])
    return located
