"""A recorded run's description beside its step logs: ``RUN_DIR/RUN_ID/run.json``.

The run record in the database says how each step ended; this file says what the run was:
the program it came from (its file and folder, to resume it), who ran it where (user, host,
process id, to stop it) and its DAG (each step's kind, the steps it waits for, its
statement's text and position). ``sqlml ui`` draws runs from both. It never holds the
datasource's URL or any other credential.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from sqlml.workflow.core import Workflow

RUN_FILE = "run.json"
_STATEMENT_FIELDS = ("text", "line", "column")


def describe(
    run_id: str, workflow: Workflow, resumed: str | None, source: str | None, base_dir: Path
) -> dict[str, Any]:
    """The description of the run ``run_id`` of ``workflow`` from the program ``source``."""
    return {
        "run_id": run_id,
        "workflow": workflow.name,
        "resumed_from": resumed,
        "source": source,
        "base_dir": str(base_dir),
        "user": getpass.getuser(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started_at": time.time(),
        "steps": [
            {
                "name": step.name,
                "kind": step.template,
                "after": list(step.after),
                **{key: step.params[key] for key in _STATEMENT_FIELDS if key in step.params},
            }
            for step in [*workflow.steps, *workflow.exit_handlers]
        ],
    }


def write_run_file(run_dir: Path, description: dict[str, Any]) -> None:
    """Write ``description`` to ``run_dir``'s run file (replaced whole, never half written)."""
    partial = run_dir / (RUN_FILE + ".partial")
    partial.write_text(json.dumps(description, indent=1), encoding="utf-8")
    partial.replace(run_dir / RUN_FILE)


def read_run_file(run_dir: Path) -> dict[str, Any] | None:
    """The description in ``run_dir``, or None when it has none (or an unreadable one)."""
    try:
        return json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
