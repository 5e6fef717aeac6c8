"""The run results of ``sqlml run --run-results FILE``: one JSON document for CI, modelled on
dbt's ``run_results.json``: the sqlml version and when, the run's totals (as the summary line
counts them) and each statement's file, id, position, status, start, seconds, rows returned
and message (the diagnostic ``sqlml run`` printed), read from the run's
:class:`~sqlml.junit.JUnitReport`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlml import __version__
from sqlml.errors import SqlmlError
from sqlml.junit import SUMMARY_WORDS, JUnitReport
from sqlml.runtime.output import write_atomically

SCHEMA = "sqlml-run-results/1"  # the document's format; a change of its meaning bumps it


def run_results(report: JUnitReport, started: float, ended: float) -> dict[str, Any]:
    """The document of a run from ``started`` to ``ended`` (epoch seconds)."""
    counts = report.counts()
    results = [
        {
            "file": case.classname,
            "statement": case.statement or None,
            "line": case.line,
            "column": case.column,
            "status": SUMMARY_WORDS[case.outcome].lower(),
            "started_at": _when(case.started),
            "execution_time": round(case.time, 3),
            "rows_returned": report.rows.get((case.classname, case.statement)),
            "message": case.message or None,
        }
        for suite in report.suites
        for case in suite.cases
    ]
    return {
        "metadata": {"schema": SCHEMA, "sqlml_version": __version__, "generated_at": _when(ended)},
        "elapsed_time": round(ended - started, 3),
        "totals": {**{word.lower(): n for word, n in counts.items()}, "total": len(results)},
        "results": results,
    }


def write_run_results(path: str, document: dict[str, Any]) -> None:
    """Save ``document`` at ``path`` (whole or not at all)."""
    try:
        write_atomically(Path(path), json.dumps(document, indent=2) + "\n")
    except OSError as error:
        raise SqlmlError(
            f"cannot write the run results {path}: {error.strerror or error}",
            hint="give --run-results a path in a folder that exists and can be written",
        ) from None


def _when(seconds: float | None) -> str | None:
    """``seconds`` since the epoch as ISO 8601 in UTC (``2026-12-05T11:39:18.250Z``)."""
    if seconds is None:
        return None
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
