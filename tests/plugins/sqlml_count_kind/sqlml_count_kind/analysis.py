"""The analysis of TO COUNT: its SELECT checked, the column one name, the IR made."""

from __future__ import annotations

from sqlml.semantics.lowering import Output, lower_selecting, single_part, where
from sqlml_count_kind.ir import CountStatement
from sqlml_count_kind.syntax import CountNode


def lower(statement: CountNode, prefix: str, dialect: str) -> CountStatement:
    """The IR of a TO COUNT (its SELECT in sqlglot's ``dialect``)."""
    return lower_selecting(
        statement, prefix, dialect, "TO COUNT", statement.column, _lower, _output
    )


def _lower(node: CountNode, step_id: str, dialect: str) -> CountStatement:
    return CountStatement(
        step_id,
        node.text,
        **where(node.pos),
        select=node.select,
        counted=single_part(node.column, "TO COUNT USING"),
        table=list(node.into.parts),
    )


def _output(node: CountNode, lowered: CountStatement) -> Output:
    return Output(lowered.table, node.into.pos, False, "TO COUNT")
