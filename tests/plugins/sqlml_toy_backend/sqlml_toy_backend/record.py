"""The toy backend's runs: ``RUN_DIR/<run id>/toy.json`` (the run, its steps in the plan's
order with their states and times) and ``<step>.log`` beside it."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

from sqlml.backends import Program
from sqlml.errors import SqlmlError
from sqlml.local_files import default_run_dir
from sqlml.plan import plan

RUN_FILE = "toy.json"


def record(program: Program, *, shout: bool = False) -> str:
    """Run ``program`` by recording each step of its plan in order; the run's id."""
    run_id = f"toy-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    folder = default_run_dir() / run_id
    folder.mkdir(parents=True)
    texts = {s.id: s for s in program.statements}
    steps = []
    for planned in plan(program.statements, program.dialect):
        statement = texts[planned.id]
        started = time.time()
        said = f"executed {planned.id}: {statement.text.strip()}\n"
        (folder / f"{planned.id}.log").write_text(said.upper() if shout else said)
        steps.append(
            {
                "name": planned.id,
                "kind": statement.kind,
                "after": list(planned.after),
                "text": statement.text,
                "line": statement.line,
                "column": statement.column,
                "state": "succeeded",
                "started_at": started,
                "ended_at": time.time(),
            }
        )
    run = {
        "run_id": run_id,
        "source": program.source,
        "workflow": program.name,
        "state": "succeeded",
        "started_at": steps[0]["started_at"] if steps else time.time(),
        "ended_at": time.time(),
        "steps": steps,
    }
    (folder / RUN_FILE).write_text(json.dumps(run))
    return run_id


def read(run_id: str, run_dir: Path | None = None) -> dict[str, Any]:
    """The run ``run_id`` as recorded; a :class:`SqlmlError` when there is none."""
    try:
        return json.loads(((run_dir or default_run_dir()) / run_id / RUN_FILE).read_text())
    except (OSError, ValueError):
        raise SqlmlError(f"the toy backend has no run {run_id}") from None


def log(run_id: str, step: str, run_dir: Path | None = None) -> str:
    """The log of ``step`` of the run ``run_id``."""
    return ((run_dir or default_run_dir()) / run_id / f"{step}.log").read_text()
