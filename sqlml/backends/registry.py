"""The registered backends, by name: the built-in ones first, then those registered.

Lookups load the built-in packages (:data:`BUILT_IN`) on first use, in order; each declares
its backend as ``BACKEND`` in its module ``backend``, which imports neither its executor nor
its API client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlml import imports
from sqlml.errors import SqlmlError

if TYPE_CHECKING:
    from sqlml.backends.interface import Backend

# Packages under sqlml.backends, in the order the CLI lists them.
BUILT_IN = ("local", "argo")
DEFAULT = "local"  # sqlml run's and status's, and sqlml -e's
_REGISTERED: dict[str, Backend] = {}


def backends() -> dict[str, Backend]:
    """The registered backends by name, the built-in ones first."""
    with imports.LOCK:  # never seen half filled (sqlml ui's request threads look it up)
        if not _REGISTERED:
            for name in BUILT_IN:
                _add(imports.load(f"{__package__}.{name}.backend").BACKEND)
        return dict(_REGISTERED)


def backend(name: str) -> Backend:
    """The backend called ``name``; a :class:`SqlmlError` if none is registered."""
    found = backends().get(name)
    if found is None:
        raise SqlmlError(
            f"backend {name!r} is unknown", hint=f"the known backends are {', '.join(backends())}"
        )
    return found


def by_target(target: str) -> Backend:
    """The backend whose program ``sqlml compile --target target`` writes."""
    found = [known for known in backends().values() if known.target == target]
    if not found:
        targets = ", ".join(known.target for known in backends().values())
        raise SqlmlError(f"compile target {target!r} is unknown", hint=f"the targets are {targets}")
    return found[0]


def default(command: str) -> Backend:
    """The backend ``command`` (run, status, logs, stop) uses without ``--backend``:
    :data:`DEFAULT` if it supports the command, else the first that does."""
    ordered = [backend(DEFAULT), *backends().values()]
    return next((known for known in ordered if known.supports(command)), ordered[0])


def register(new: Backend) -> Backend:
    """Add ``new`` to the backends; returns it.

    A :class:`TypeError` if it lacks ``name`` or ``target``; a :class:`ValueError` if its
    name or target is taken.
    """
    missing = [name for name in ("name", "target") if not hasattr(new, name)]
    if missing:
        raise TypeError(f"{type(new).__name__} sets no {', '.join(missing)}")
    if new.name in backends():
        raise ValueError(f"a backend called {new.name!r} is already registered")
    if any(known.target == new.target for known in backends().values()):
        raise ValueError(f"backend {new.name!r}: compile target {new.target!r} is taken")
    _add(new)
    return new


def unregister(name: str) -> None:
    """Remove the backend ``name`` (a :class:`ValueError` for a built-in one)."""
    if name in BUILT_IN:
        raise ValueError(f"{name} is a built-in backend")
    backends()
    _REGISTERED.pop(name, None)


def _add(new: Backend) -> None:
    _REGISTERED[new.name] = new
