"""Whether Argo v4.1.2 runs a step again after an attempt ended (``workflow/controller/
operator.go``, ``processNodeRetries``), for tests.

An attempt whose pod was deleted (a node drained, a preemption) ends ``Error`` ("pod
deleted", ``podReconciliation``); a container that exits non-zero ends ``Failed``. The
policy (``RetryPolicyActual``: ``OnFailure`` when none is given and no expression) retries
``Always`` both, ``OnError`` errors, ``OnFailure`` failures; the node is retried while it has
had no more attempts than ``limit``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

POLICIES = {"Always": ("Failed", "Error"), "OnError": ("Error",), "OnFailure": ("Failed",)}


def retried(strategy: Mapping[str, Any] | None, phase: str, attempts: int) -> bool:
    """Whether a node with ``strategy`` (a template's ``retryStrategy``) whose last of
    ``attempts`` ended ``phase`` (``Failed`` or ``Error``) runs again."""
    if not strategy:
        return False
    policy = strategy.get("retryPolicy") or (
        "Always" if strategy.get("expression") else "OnFailure"
    )
    assert policy in POLICIES and not strategy.get("expression"), f"not modelled: {strategy}"
    if phase not in POLICIES[policy]:
        return False
    limit = strategy.get("limit")
    return limit is None or attempts <= int(limit)
