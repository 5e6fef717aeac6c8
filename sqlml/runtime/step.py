"""Run one statement step in a container: ``python -m sqlml.runtime.step IR_JSON``.

The datasource URL comes from ``$SQLML_DATASOURCE`` (a Kubernetes Secret), never from the
arguments, so credentials stay out of workflow specs and logs.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlml import ir
from sqlml.errors import SqlmlError
from sqlml.output import render
from sqlml.runtime import cancel
from sqlml.runtime.datasource import Datasource, connect
from sqlml.runtime.execute import execute


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m sqlml.runtime.step IR_JSON", file=sys.stderr)
        return 2
    statement = ir.from_dict(json.loads(argv[0]))
    token = cancel.Token()
    try:
        datasource = connect()
        try:
            with cancel.scope(token), _stopped_by_signals(token, datasource):
                outcome = execute(statement, datasource)
        finally:
            datasource.close()
    except SqlmlError as error:
        print(error.render(statement.id), file=sys.stderr)
        return 1
    if outcome.summary:  # a search's trial: its name=value metric lines for Katib's collector
        print(outcome.summary, file=sys.stdout if statement.kind == "trial" else sys.stderr)
    if outcome.result is not None:
        sys.stdout.write(render(outcome.result))
    return 0


@contextmanager
def _stopped_by_signals(token: cancel.Token, datasource: Datasource) -> Iterator[None]:
    """SIGTERM (Kubernetes stopping the pod: ``sqlml stop``, a deadline) and SIGINT cancel
    the statement: it stops at its next check, commits nothing and the step fails, well
    within the pod's grace period."""

    def stop(signum: int, frame: object) -> None:
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
