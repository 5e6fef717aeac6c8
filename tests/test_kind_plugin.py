"""A statement kind declared from outside sqlml: ``<select> TO COUNT USING <column>``, the
number of distinct values of a column. Its grammar fragment, builder, AST node, IR class,
analysis and handler are all here; registering it is enough for the parser (its clause
word ends the SQL text before it), ``sqlml check``, the REPL's completion and execution."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from sqlml import ir, statements
from sqlml.checking import check_program
from sqlml.cli import main
from sqlml.errors import ParseError
from sqlml.grammar import ast, parse
from sqlml.grammar.build import Unsliced, pos
from sqlml.grammar.fragment import Fragment
from sqlml.repl.catalog import Catalog
from sqlml.repl.completion import SqlmlCompleter
from sqlml.runtime.outcome import Outcome
from sqlml.semantics import analyze
from sqlml.semantics.lowering import lower_selecting, single_part, where
from sqlml.statements import Completion, Effects, StatementKind

GRAMMAR = r"""
count: SQL_TEXT _TO _COUNT _USING name
_COUNT: /COUNT(?![\w$])/i
"""


@dataclass(frozen=True)
class CountNode(ast.Statement):
    """``<select> TO COUNT USING <column>``."""

    select: str
    column: ast.Name
    attributes: tuple[ast.Attribute, ...] = ()


def build(children: list) -> Unsliced:
    select, column = children
    make = partial(CountNode, pos=pos(select), select=str(select).rstrip(), column=column)
    return Unsliced(make, select.start_pos, column.end)


@dataclass(frozen=True)
class CountStatement(ir.Statement):
    """Count the distinct values of ``column`` in the rows of ``select``."""

    kind: ClassVar[str] = "count"
    select: str
    counted: str  # the column


def lower(statement: CountNode, prefix: str, dialect: str) -> CountStatement:
    def make(node: CountNode, step_id: str, dialect: str) -> CountStatement:
        counted = single_part(node.column, "TO COUNT USING")
        return CountStatement(
            step_id, node.text, **where(node.pos), select=node.select, counted=counted
        )

    return lower_selecting(
        statement, prefix, dialect, "TO COUNT", statement.column, make, lambda *_: None
    )


def handle(statement: CountStatement, context) -> Outcome:
    query = f"SELECT count(DISTINCT {statement.counted}) AS n FROM ({statement.select}) AS q"
    (count,) = context.datasource.read(query)["n"]
    return Outcome(summary=f"{count} distinct values of {statement.counted}")


COUNT = StatementKind(
    name="count",
    ir=CountStatement,
    syntax=CountNode,
    grammar=Fragment(
        GRAMMAR,
        statements=("count",),
        builders={"count": build},
        clauses=("COUNT",),
        end=("_USING", "a TO COUNT statement ends with USING <column>"),
        sections=("USING",),
    ),
    analysis=f"{__name__}:lower",
    step="statement",
    handler=f"{__name__}:handle",
    effects=Effects(queries=("select",)),
    completion=Completion(after={"USING": ("column", ("y",))}),
)
PROGRAM = """CREATE TABLE t AS SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (3, 'a')) AS v(x, y);
SELECT * FROM t WHERE x > 0 TO COUNT USING y;
"""


@pytest.fixture
def count_kind():
    statements.register(COUNT)
    yield COUNT
    statements.unregister(COUNT.name)


def test_a_registered_kind_parses_checks_and_runs(count_kind, tmp_path, capsys):
    (_, count) = analyze(parse(PROGRAM))
    assert type(count) is CountStatement
    assert (count.id, count.select, count.counted) == (
        "s2-count-y",
        "SELECT * FROM t WHERE x > 0",
        "y",
    )
    assert ir.from_dict(count.to_dict()) == count
    assert check_program(PROGRAM, "duckdb") == []
    program = tmp_path / "count.sql"
    program.write_text(PROGRAM)
    url = f"duckdb:///{tmp_path / 'count.db'}"
    assert main(["check", str(program), "--datasource", url]) == 0, capsys.readouterr().err
    assert main(["run", str(program), "--datasource", url]) == 0, capsys.readouterr().err
    assert "2 distinct values of y" in capsys.readouterr().err


def test_its_errors_and_hints_come_from_its_declaration(count_kind):
    with pytest.raises(ParseError) as raised:
        parse("SELECT * FROM t TO COUNT y;")
    assert raised.value.hint == "a TO COUNT statement ends with USING <column>"
    (error,) = check_program("SELECT * FROM t TO COUNT USING a.b;", "duckdb")
    assert "TO COUNT USING takes a column name" in str(error)


def test_the_repl_completes_it(count_kind):
    completer = SqlmlCompleter(Catalog())
    found = completer.get_completions(Document("SELECT * FROM t TO COUNT USING "), CompleteEvent())
    assert [c.text for c in found] == ["y"]


def test_without_it_the_text_is_plain_sql():
    (statement,) = parse("SELECT * FROM t TO COUNT USING y").statements
    assert isinstance(statement, ast.Statement) and type(statement).__name__ == "SqlNode"
