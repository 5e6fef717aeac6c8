"""Statement kinds, declared once.

Each module here declares its kinds (:class:`StatementKind`): the IR class, the AST node it
lowers, its analysis, workflow step, runtime handler and what it reads and writes. The
analysis, the dependency analysis, the workflow compilers, ``execute``, ``sqlml check``, the
REPL and the grammar corpus's tests read :data:`KINDS` instead of listing the kinds.

Adding a kind (say ``RUN <script>``):

1. the grammar: a rule in ``grammar/sqlml.lark`` (its keywords reach the REPL by
   themselves), its node in ``grammar/ast.py`` and the transformer's callback in
   ``grammar/parser.py``;
2. its IR class in ``ir.py``, and its analysis (AST node -> IR) in ``semantics/``;
3. its handler, ``(statement, datasource) -> Outcome``, in ``runtime/``;
4. a module here declaring it (``step="statement"`` unless the step zoo has a function of
   its own for it), named in the tuple of modules below.

This package sits just above the IR: it names the analysis and handler by their dotted
paths, so any layer may read it without loading the checks or the runtime's libraries.
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
