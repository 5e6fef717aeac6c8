"""The extended-SQL grammar: text in, :class:`~sqlml.grammar.ast.Program` out."""

from sqlml.grammar.parser import parse

__all__ = ["parse"]
