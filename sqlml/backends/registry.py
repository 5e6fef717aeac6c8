"""The backends, by name (:data:`sqlml.plugins.BACKENDS`): the built-in ones first, then
those installed (entry points of ``sqlml.backends``), then those registered.

Each built-in package declares its backend as ``BACKEND`` in its module ``backend``, which
imports neither its executor nor its API client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlml.errors import SqlmlError
from sqlml.plugins import BACKENDS

if TYPE_CHECKING:
    from sqlml.backends.interface import Backend

DEFAULT = "local"  # sqlml run's and status's, and sqlml -e's


def backends() -> dict[str, Backend]:
    """The backends by name, the built-in ones first."""
    return dict(BACKENDS)


def backend(name: str) -> Backend:
    """The backend called ``name``; a :class:`SqlmlError` if none is registered."""
    found = BACKENDS.get(name)
    if found is None:
        raise SqlmlError(
            f"backend {name!r} is unknown", hint=f"the known backends are {', '.join(BACKENDS)}"
        )
    return found


def by_target(target: str) -> Backend:
    """The backend whose program ``sqlml compile --target target`` writes."""
    found = BACKENDS.claimant(f"target {target}")
    if found is None:
        targets = ", ".join(known.target for known in BACKENDS.values())
        raise SqlmlError(f"compile target {target!r} is unknown", hint=f"the targets are {targets}")
    return found


def default(command: str) -> Backend:
    """The backend ``command`` (run, status, logs, stop) uses without ``--backend``:
    :data:`DEFAULT` if it supports the command, else the first that does."""
    ordered = [backend(DEFAULT), *BACKENDS.values()]
    return next((known for known in ordered if known.supports(command)), ordered[0])


def register(new: Backend) -> Backend:
    """Add ``new`` to the backends; returns it.

    A :class:`TypeError` if it lacks ``name`` or ``target``; a :class:`ValueError` if its
    name or target is taken.
    """
    return BACKENDS.register(new)


def unregister(name: str) -> None:
    """Remove the backend ``name`` (a :class:`ValueError` for a built-in one)."""
    BACKENDS.unregister(name)
