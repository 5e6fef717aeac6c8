"""Kubernetes resource quantities (``500m``, ``2``, ``512Mi``, ``4Gi``): what a pod's CPU and
memory requests and limits are written in, read as numbers to compare and check them."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

_QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?")
_SUFFIXES = {
    None: 1, "m": Decimal("0.001"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
    "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
    "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip


def quantity(text: str) -> Decimal:
    """A Kubernetes quantity (``500m``, ``2Gi``, ``1.5``) as a number; ValueError if not one."""
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError("must be a Kubernetes quantity such as 500m, 2, 512Mi or 4Gi")
    return Decimal(match[1]) * _SUFFIXES[match[2]]


def check_quantity(value: Any) -> None:
    """An attribute's check: ``value`` is a positive quantity."""
    if quantity(value) <= 0:
        raise ValueError("must be above 0")
