"""Statement kinds, declared once.

Each folder here is one kind (or a few close ones) and declares them (:class:`StatementKind`):
its grammar fragment, AST node, IR class, analysis, workflow step, handler, what it
reads and writes, and what the REPL completes in it. The parser, the analysis, the
dependency analysis, the workflow compilers, ``execute``, ``sqlml check``, the REPL and the
grammar corpus's tests read :data:`KINDS` instead of listing the kinds.

Adding a kind (say ``RUN <script>``) is its rule and one folder, ``statements/run/``:

1. ``grammar.lark``: its rule(s) and keywords (they reach the REPL's completion by
   themselves); ``syntax.py``: its AST node (a subclass of ``sqlml.grammar.ast.Statement``),
   the builder of each rule (the rule's children in, a ``sqlml.grammar.build.Unsliced`` out)
   and the :class:`~sqlml.grammar.fragment.Fragment` gathering them (grammar layer);
2. ``ir.py``: its IR class, a subclass of ``sqlml.ir.Statement`` that names its ``kind``;
3. ``analysis.py``: ``lower(node, prefix, dialect) -> IR`` (semantics layer; a
   ``<select> TO <clause>`` statement lowers through ``sqlml.semantics.lowering``);
4. ``handler.py`` (or a ``handler/`` package): its handler, ``(statement, context) ->
   Outcome`` (handlers layer, above the models it drives; what it shares with other kinds'
   handlers lies below: the data layer, ``sqlml.runtime``, or the models layer);
5. ``__init__.py``: ``KINDS``, its declarations (``step="statement"`` unless the step zoo has
   a function of its own for it), naming the IR class, the node and the fragment by their
   ``module:name`` paths (imported when first read: a plain SELECT loads no kind's modules)
   and the ``keywords`` one of which each of its statements holds (``RUN``).

The folders are found by name (:data:`sqlml.plugins.KINDS`); an installed kind through an
entry point of ``sqlml.statements``; another with :func:`register`. This package sits just
above the IR: it names the analysis and handler by their dotted paths, so any layer may read
it without loading the checks or the runtime's libraries.
"""

from __future__ import annotations

from sqlml import ir
from sqlml.plugins import KINDS
from sqlml.statements.kind import Completion, Effects, StatementKind, resolve


def register(kind: StatementKind) -> None:
    """Declare a kind (from outside sqlml): the parser, the analysis and the runtime use it.
    A :class:`ValueError` if a kind of its name is declared."""
    KINDS.register(kind)


def unregister(name: str) -> None:
    """Forget the kind ``name`` (a :class:`ValueError` for a built-in one)."""
    KINDS.unregister(name)


def kind_of(statement: ir.Statement) -> StatementKind:
    """The declaration of an IR statement's kind."""
    return KINDS[statement.kind]


def for_syntax(node: object) -> StatementKind:
    """The declaration of the kind that lowers a parsed statement."""
    return next(kind for kind in KINDS.values() if kind.lowers(node))


__all__ = [
    "KINDS",
    "Completion",
    "Effects",
    "StatementKind",
    "for_syntax",
    "kind_of",
    "register",
    "resolve",
    "unregister",
]
