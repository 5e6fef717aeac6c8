"""The record of an Argo run that ``sqlml run --backend argo`` submitted, for ``sqlml ui``:
``RUN_DIR/<workflow name>/argo.json`` beside the local runs' folders.

It says where the run is (the kubeconfig's path, context, namespace and API server), what it
runs (the program's file, its datasource's URL without the password, or None when the URL is
the one already in the cluster's Secret), who submitted it where and when, and its DAG as the
Workflow has it (each task, the tasks it waits for, its statement's text and position). It
holds no credential: neither the datasource's password nor the cluster's token.
"""

from __future__ import annotations

import dataclasses
import getpass
import json
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlml.datasources import parse_url
from sqlml.local_files import reason, warn_once

if TYPE_CHECKING:
    from sqlml import ir
    from sqlml.backends.argo.kube import Cluster, Kube

ARGO_FILE = "argo.json"


def describe(
    name: str,
    kube: Kube,
    cluster: Cluster,
    manifest: Mapping[str, Any],
    statements: Sequence[ir.Statement],
    source: str,
    datasource: str | None,
) -> dict[str, Any]:
    """The record of the run ``name`` of ``manifest`` (compiled from ``statements`` of the
    program ``source``) submitted through ``kube`` to ``cluster``."""
    texts = {s.id: {"text": s.text, "line": s.line, "column": s.column} for s in statements}
    return {
        "name": name,
        "namespace": kube.namespace,
        "server": kube.server,
        "kubeconfig": str(Path(cluster.kubeconfig).resolve()) if cluster.kubeconfig else None,
        "context": cluster.context,
        "workflow": (manifest.get("metadata") or {}).get("generateName", "").rstrip("-"),
        "source": source if source.startswith("<") else str(Path(source).resolve()),
        "datasource": datasource_key(datasource) if datasource else None,
        "user": getpass.getuser(),
        "host": socket.gethostname(),
        "submitted_at": time.time(),
        "steps": [{**step, **texts.get(step["name"], {})} for step in dag(manifest)],
    }


def datasource_key(url: str | None) -> str:
    """How a record names a datasource: its URL without the password (None: the default)."""
    return str(dataclasses.replace(parse_url(url), password=""))


def dag(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Workflow's steps (the tasks of its DAG templates that run no DAG), each with its
    template and the steps it waits for, in the Workflow's order."""
    templates = (manifest.get("spec") or {}).get("templates") or []
    dags = {t["name"] for t in templates if t.get("dag")}
    tasks = [
        task
        for template in templates
        for task in (template.get("dag") or {}).get("tasks") or []
        if task.get("template") not in dags
    ]
    names = {task["name"] for task in tasks}
    return [
        {
            "name": task["name"],
            "kind": task.get("template") or "",
            "after": [d for d in task.get("dependencies") or [] if d in names],
        }
        for task in tasks
    ]


def write(run_dir: Path, record: Mapping[str, Any]) -> None:
    """Write ``record`` into its run's folder in ``run_dir``; one that cannot be written is
    skipped with a warning (the run goes on; only sqlml ui misses it)."""
    folder = run_dir / record["name"]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / (ARGO_FILE + ".partial")
        partial.write_text(json.dumps(record, indent=1), encoding="utf-8")
        partial.replace(folder / ARGO_FILE)
    except OSError as error:
        warn_once("argo-record", f"sqlml ui will not list this run: {folder} ({reason(error)})")


def read(folder: Path) -> dict[str, Any] | None:
    """The record in ``folder``, or None when it has none (or an unreadable one)."""
    try:
        record = json.loads((folder / ARGO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("name") == folder.name else None
