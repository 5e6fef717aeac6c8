"""Statement kinds, declared once.

Each module here declares its kinds (:class:`StatementKind`): the IR class, the AST node it
lowers, its analysis, workflow step, runtime handler and what it reads and writes. The
analysis, the dependency analysis, the workflow compilers, ``execute``, ``sqlml check`` and
the REPL read :data:`KINDS` instead of listing the kinds themselves.
"""

from __future__ import annotations

from sqlml import ir
from sqlml.statements import assertion, evaluate, explain, model_admin, predict, sql, train
from sqlml.statements.kind import Effects, StatementKind, resolve

KINDS: dict[str, StatementKind] = {
    kind.name: kind
    for module in (sql, train, predict, evaluate, explain, model_admin, assertion)
    for kind in module.KINDS
}
_BY_SYNTAX = {kind.syntax: kind for kind in KINDS.values() if kind.syntax is not None}


def kind_of(statement: ir.Statement) -> StatementKind:
    """The declaration of an IR statement's kind."""
    return KINDS[statement.kind]


def for_syntax(node: object) -> StatementKind:
    """The declaration of the kind that lowers a parsed statement."""
    return _BY_SYNTAX[type(node)]


__all__ = ["KINDS", "Effects", "StatementKind", "for_syntax", "kind_of", "resolve"]
