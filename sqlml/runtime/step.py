"""Run one statement step in a container: ``python -m sqlml.runtime.step IR``.

``IR`` is the statement's JSON, or that JSON in base64 (what Kubeflow job and Katib trial
pods get: it survives ``sh -c`` and the kubelet's ``$(VAR)`` expansion). A Katib trial's
values come in ``$SQLML_TRIAL``. The datasource URL comes from ``$SQLML_DATASOURCE`` (a
Kubernetes Secret), never from the arguments, so credentials stay out of workflow specs and
logs. With ``SQLML_PROGRESS=1`` the step's log shows its progress lines, as ``sqlml run``'s
standard error does. ``$SQLML_RUN_ID`` (the Argo Workflow's name, which its steps' pods
get) is the run a trained model's lineage records, the step then the statement's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlml import imports, ir
from sqlml.datasources import Datasource, connect
from sqlml.errors import InternalError, SqlmlError
from sqlml.runtime import cancel
from sqlml.runtime.context import RUN_ENV, RunStep
from sqlml.runtime.execute import execute
from sqlml.runtime.output import render
from sqlml.runtime.progress import terminal


def main(argv: list[str]) -> int:
    imports.hide_unused()  # sqlml's own process: see sqlml.imports
    if len(argv) != 1:
        print("usage: python -m sqlml.runtime.step IR", file=sys.stderr)
        return 2
    try:
        statement = _statement(argv[0])
    except (ValueError, KeyError, TypeError) as error:
        print(f"error: the step's statement cannot be read: {error}", file=sys.stderr)
        return 2
    token = cancel.Token()
    received: list[int] = []
    try:
        datasource = connect()
        try:
            with _stopped_by_signals(token, datasource, received):
                sink, run = terminal(sys.stderr), _run(statement)
                outcome = execute(statement, datasource, token=token, sink=sink, run=run)
        finally:
            datasource.close()
    except SqlmlError as error:
        print(error.render(statement.id), file=sys.stderr)
        if isinstance(error, InternalError):  # the pod's log is the step's
            print(error.details, file=sys.stderr)
        # Stopped by a signal: the shell's 128 + its number (what Kubernetes shows of a pod
        # stopped from outside); any other failure is 1.
        return 128 + received[0] if received else 1
    if outcome.summary:  # a search's trial: its name=value metric lines for Katib's collector
        print(outcome.summary, file=sys.stdout if statement.kind == "trial" else sys.stderr)
    if outcome.result is not None:
        sys.stdout.write(render(outcome.result))
    return 0


def _run(statement: ir.Statement) -> RunStep:
    """The run the step is part of, as its environment says (none without a run id)."""
    run = os.environ.get(RUN_ENV) or None
    return RunStep() if run is None else RunStep(run, statement.id)


def _statement(argument: str) -> ir.Statement:
    statement = ir.from_argument(argument)
    values = os.environ.get(ir.TRIAL_ENV)
    if isinstance(statement, ir.TrialStatement) and values:
        statement = dataclasses.replace(statement, trial=dict(json.loads(values)))
    return statement


@contextmanager
def _stopped_by_signals(
    token: cancel.Token, datasource: Datasource, received: list[int]
) -> Iterator[None]:
    """SIGTERM (Kubernetes stopping the pod: ``sqlml stop``, a deadline, a node drained) and
    SIGINT cancel the statement: it stops at its next check, commits nothing and the step
    fails, well within the pod's grace period. The signals are added to ``received``."""

    def stop(signum: int, frame: object) -> None:
        received.append(signum)
        token.cancel(f"the step was stopped ({signal.Signals(signum).name})")
        threading.Thread(target=datasource.interrupt, daemon=True).start()

    previous = {number: signal.signal(number, stop) for number in _STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
