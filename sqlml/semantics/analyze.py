"""Check a parsed program and lower it to IR statements, with each kind's analysis."""

from __future__ import annotations

from sqlml import ir
from sqlml.grammar import ast
from sqlml.statements import for_syntax, resolve


def analyze(program: ast.Program, dialect: str = "duckdb") -> list[ir.Statement]:
    """Check every statement (SQL in sqlglot's ``dialect``) and return their IR, in order.

    A kind's analysis (its declaration in :mod:`sqlml.statements` names it) takes the AST
    node, the prefix of its step id and sqlglot's dialect, and returns the IR.
    """
    width = len(str(len(program.statements)))
    return [
        resolve(for_syntax(statement).analysis)(statement, f"s{index:0{width}d}", dialect)
        for index, statement in enumerate(program.statements, 1)
    ]
