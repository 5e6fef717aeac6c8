"""The extended-SQL grammar: text in, :class:`~sqlml.grammar.ast.Program` out."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlml.grammar import ast


def parse(text: str) -> ast.Program:
    """Parse a program; raises :class:`~sqlml.errors.ParseError` with line and column.

    A program of standard SQL only is split without the grammar (:mod:`sqlml.grammar.plain`):
    neither Lark nor the statement kinds' rules are loaded for it.
    """
    from sqlml.grammar.plain import plain_program

    found = plain_program(text)
    if found is not None:
        return found
    return import_module("sqlml.grammar.parser").parse(text)


__all__ = ["parse"]
