"""A model version's lineage on its page (:mod:`sqlml.runtime.lineage`): the run and step
that trained it, linked to the run's page, and the rest as text; and the link from a run's
step to the version it trained or measured."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

FINGERPRINT_SHOWN = 12  # hex digits of a hash of a table's fingerprint


@dataclass(frozen=True)
class Shown:
    """One row of the lineage table: its name, its text, a link (None: none) and, for a
    table's fingerprint, the whole of it (a hover text)."""

    name: str
    text: str
    href: str | None = None
    title: str | None = None


def version_url(name: str, version: int) -> str:
    """The page of ``version`` of the model ``name``."""
    return f"/models/{quote(name, safe='')}?version={version}"


def step_url(run_id: str, step: str) -> str:
    """The run page of ``run_id`` with ``step``'s panel open."""
    return f"/runs/{quote(run_id, safe='')}#step={quote(step, safe='')}"


def with_version_link(details: dict[str, Any]) -> dict[str, Any]:
    """A run step's details (its panel's JSON) with the address of the model version it
    trained or measured, when it names one."""
    model = details.get("model")
    if not model:
        return details
    return {**details, "model": {**model, "url": version_url(model["name"], model["version"])}}


def lineage_rows(metadata: dict[str, Any]) -> list[Shown]:
    """The rows of a version's lineage (none for a version stored without)."""
    found = metadata.get("lineage")
    if not isinstance(found, dict):
        return []
    run, step = found["run"], found["step"]
    position = found["statement"]
    rows = [
        Shown("run", run or "none (the shell, the notebook or the editor)",
              f"/runs/{quote(run, safe='')}" if run else None),
        Shown("step", step or "none", step_url(run, step) if run and step else None),
        Shown("program", found["program"] or "none (sqlml -e, the shell or a notebook)"),
        Shown("position", f"line {position['line']}, column {position['column']}"),
        Shown("user", found["user"] or "unknown"),
        Shown("host", found["host"] or "unknown"),
        Shown("libraries", ", ".join(f"{k} {v}" for k, v in sorted(found["libraries"].items()))),
    ]  # fmt: skip
    for table, fingerprint in sorted(found["tables"].items()):
        if fingerprint is None:
            rows.append(Shown(f"table {table}", "no fingerprint"))
            continue
        digest = hashlib.sha256(fingerprint.encode()).hexdigest()[:FINGERPRINT_SHOWN]
        rows.append(Shown(f"table {table}", f"fingerprint {digest}", title=fingerprint))
    return rows


def metrics_text(metrics: dict[str, float]) -> list[tuple[str, str]]:
    """TO EVALUATE's metrics as the page shows them, in their order."""
    return [(name, f"{float(value):.6g}") for name, value in metrics.items()]
