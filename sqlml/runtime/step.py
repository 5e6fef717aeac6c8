"""Run one statement step in a container: ``python -m sqlml.runtime.step IR_JSON``.

The datasource URL comes from ``$SQLML_DATASOURCE`` (a Kubernetes Secret), never from the
arguments, so credentials stay out of workflow specs and logs.
"""

from __future__ import annotations

import json
import sys

from sqlml import ir
from sqlml.errors import SqlmlError
from sqlml.output import render
from sqlml.runtime.datasource import connect
from sqlml.runtime.execute import execute


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m sqlml.runtime.step IR_JSON", file=sys.stderr)
        return 2
    statement = ir.from_dict(json.loads(argv[0]))
    try:
        datasource = connect()
        try:
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


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
