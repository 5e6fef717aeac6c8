"""Whether a dotted ``module.function`` name is a user's model builder, read from the
module's source without importing it: checking a program never runs the user's code (the
trainer imports the builder when it trains)."""

from __future__ import annotations

import ast
from importlib.machinery import PathFinder
from pathlib import Path

from sqlml.models.registry import families

UNKNOWN = "unknown"  # bound by an import or an expression: known only once imported


def builder_kind(name: str) -> str | None:
    """What the module's top level binds to the function's name: ``"function"``,
    :data:`UNKNOWN`, or None when the module or the name does not exist.

    A name bound to something else (a number, a class) is a :class:`TypeError`; a module
    that cannot be read or parsed raises :class:`OSError` or :class:`SyntaxError`.
    """
    module, _, function = name.rpartition(".")
    # The families' libraries, whose names are sqlml's estimators or none: never a user's
    # model builder (the installed xgboost package binds XGBClassifier and the like by imports).
    libraries = {library for known in families().values() for library in known.libraries}
    if module.split(".")[0].lower() in libraries:
        return None
    source = _source(module) if module else None
    if source is None:
        return None
    if source.suffix != ".py":  # compiled: its names are known only by importing it
        return UNKNOWN
    kind = _binding(ast.parse(source.read_bytes(), str(source)).body, function)
    if kind not in (None, "function", UNKNOWN):
        raise TypeError(f"it names an object of type {kind}, not a function")
    return kind


def _source(module: str) -> Path | None:
    """The file of ``module``, found as the import system would find it, but without running
    any package's ``__init__``."""
    search: list[str] | None = None
    spec = None
    parts = module.split(".")
    for count in range(1, len(parts) + 1):
        spec = PathFinder.find_spec(".".join(parts[:count]), search)
        if spec is None:
            return None
        search = list(spec.submodule_search_locations or [])
        if count < len(parts) and not search:
            return None  # not a package
    if spec is None or not spec.has_location or spec.origin is None:
        return None
    return Path(spec.origin)


def _binding(body: list[ast.stmt], name: str) -> str | None:
    """The kind of the last top-level binding of ``name`` in ``body`` (the branches of an
    ``if`` or ``try`` included)."""
    kind: str | None = None
    for node in body:
        kind = _binds(node, name) or kind
        if isinstance(node, ast.If):
            kind = _binding(node.body + node.orelse, name) or kind
        elif isinstance(node, ast.Try):
            handled = [statement for handler in node.handlers for statement in handler.body]
            branches = node.body + handled + node.orelse + node.finalbody
            kind = _binding(branches, name) or kind
    return kind


def _binds(node: ast.stmt, name: str) -> str | None:
    """What ``node`` binds to ``name``, if it binds it."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
        return "function"
    if isinstance(node, ast.ClassDef) and node.name == name:
        return "type"
    if isinstance(node, ast.Import | ast.ImportFrom):
        bound = {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        return UNKNOWN if name in bound else None
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
        return None
    value = getattr(node, "value", None)
    if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(value, ast.Constant):
        return type(value.value).__name__
    return "function" if isinstance(value, ast.Lambda) else UNKNOWN
