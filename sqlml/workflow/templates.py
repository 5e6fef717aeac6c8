"""Steps that are not sqlml statements: a container, a script, a Kubernetes resource.

Every function takes the step's name, what it runs, the steps it runs ``after``, and any
other :class:`~sqlml.workflow.core.Step` field as a keyword (``inputs``, ``outputs``,
``retry``, ``timeout``, ``prerequisites``, ``resources``, ``secrets``...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlml.workflow.core import CONTAINER, RESOURCE, SCRIPT, Step, names

DEFAULT_SCRIPT_IMAGE = "python:3.12-slim"


def run_container(
    name: str,
    image: str,
    command: Sequence[str] = (),
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    after: Sequence[Step] = (),
    **fields: Any,
) -> Step:
    """Run ``command`` with ``args`` in ``image``.

    The local executor runs the command on this machine (no container engine): it must exist
    here. Its standard output is the step's ``result``.
    """
    params = {"image": image, "command": list(command), "args": list(args), "env": dict(env or {})}
    return Step(name, CONTAINER, params, names(after), **fields)


def run_script(
    name: str,
    source: str,
    image: str = DEFAULT_SCRIPT_IMAGE,
    command: Sequence[str] = ("python",),
    env: Mapping[str, str] | None = None,
    after: Sequence[Step] = (),
    **fields: Any,
) -> Step:
    """Run ``source`` with the interpreter ``command`` in ``image``.

    The local executor runs it on this machine; ``python`` is the running Python. Its
    standard output is the step's ``result``.
    """
    params = {"image": image, "command": list(command), "source": source, "env": dict(env or {})}
    return Step(name, SCRIPT, params, names(after), **fields)


def run_job(
    name: str,
    manifest: Mapping[str, Any],
    success_condition: str,
    failure_condition: str,
    after: Sequence[Step] = (),
    **fields: Any,
) -> Step:
    """Create the Kubernetes object ``manifest`` and wait until ``success_condition`` or
    ``failure_condition`` (Argo's tests on the object, e.g. ``status.succeeded > 0``) holds.

    Kubernetes backends only: the local executor refuses it.
    """
    params = {
        "manifest": dict(manifest),
        "success_condition": success_condition,
        "failure_condition": failure_condition,
    }
    return Step(name, RESOURCE, params, names(after), **fields)
