"""A statement kind's part of the grammar: its rules and the builders of their nodes.

Each kind declares one (``StatementKind.grammar``); the parser assembles the grammar from
the shared rules of ``sqlml.lark`` and the fragments of the declared kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

# A builder: the children of its rule (tokens and what the shared rules made) in, a
# sqlml.grammar.build.Unsliced out for a statement's rule (or a clause's value for a helper).
Builder = Callable[[list], Any]


@dataclass(frozen=True, eq=False)
class Fragment:
    """Lark rules (and their terminals) for one or more statement kinds, with their builders."""

    grammar: str
    statements: tuple[str, ...]  # its rules that are alternatives of ``statement``
    builders: Mapping[str, Builder]  # rule -> the builder of its node or value
    # The words of its ``TO <clause>`` (TRAIN; MAXIMIZE and MINIMIZE), each its terminal named
    # ``_<clause>`` (_TRAIN) unless the fragment reads them otherwise: the SQL text of a
    # statement ends before them.
    clauses: tuple[str, ...] = ()
    # The terminal a statement of its clause ends with, and the hint of a parse error in it
    # where that terminal (or INTO) could come.
    end: tuple[str, str] | None = None
    sections: tuple[str, ...] = ()  # the keywords of its clause's sections (WITH, LABEL...)
    # Its terminals that may end a statement before the ';' (ASSERT's WARN): a parse error
    # expecting ';' or one of them still hints to end the statement.
    finals: tuple[str, ...] = ()
    words: Mapping[str, str] = field(default_factory=dict)  # terminal -> its name in errors

    @classmethod
    def load(cls, package: str, **fields: Any) -> Fragment:
        """The fragment whose rules are ``grammar.lark`` in ``package``."""
        return cls(files(package).joinpath("grammar.lark").read_text(), **fields)
