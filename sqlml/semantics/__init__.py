"""Semantic checks: from the parsed program to IR statements."""

from sqlml.semantics.analyze import analyze

__all__ = ["analyze"]
