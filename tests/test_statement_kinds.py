"""Statement kinds are declared once (sqlml.statements) and every part of sqlml reads the
declarations: a kind declared here, outside sqlml/, is lowered to steps, ordered by its
effects and run by its handler without editing a file under sqlml/."""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import ClassVar

import pytest

from sqlml import ir, statements, steps
from sqlml.codegen.workflow import to_workflow
from sqlml.grammar import parser
from sqlml.plan import dependencies
from sqlml.repl.keywords import KEYWORDS
from sqlml.runtime.context import Context
from sqlml.runtime.execute import execute
from sqlml.runtime.outcome import Outcome
from sqlml.statements import Effects, StatementKind, resolve


@dataclass(frozen=True)
class PingStatement(ir.Statement):
    """A toy kind: it writes a table."""

    kind: ClassVar[str] = "ping"
    table: list[str]


def ping(statement: PingStatement, context: Context) -> Outcome:
    return Outcome(summary=f"pong {'.'.join(statement.table)} on {context.datasource}")


PING = StatementKind(
    name="ping",
    ir=PingStatement,
    handler=f"{__name__}:ping",
    step="statement",
    effects=Effects(writes_tables=("table",)),
)


def test_every_ir_kind_is_declared_with_a_step_and_a_handler():
    kinds = {cls.kind for cls in ir.classes().values() if cls.__module__.startswith("sqlml.")}
    assert kinds == set(statements.KINDS)
    for kind in statements.KINDS.values():
        assert kind.ir.kind == kind.name
        assert kind.step is None or callable(getattr(steps, kind.step))
        assert callable(resolve(kind.handler))
        assert kind.analysis is None or callable(resolve(kind.analysis))


@pytest.fixture
def ping_kind() -> Iterator[None]:
    statements.register(PING)
    try:
        yield
    finally:
        statements.unregister("ping")


def test_a_kind_declared_outside_sqlml_is_ordered_compiled_and_run(ping_kind):
    program = [
        PingStatement(id="s1-ping", text="PING T", line=1, column=1, table=["T"]),
        ir.SqlStatement(id="s2-select", text="SELECT * FROM t", line=2, column=1),
    ]
    assert dependencies(program, "duckdb").after == {"s1-ping": (), "s2-select": ("s1-ping",)}
    workflow = to_workflow(program, "toy")
    assert [(step.name, step.template) for step in workflow.steps] == [
        ("s1-ping", "ping"),
        ("s2-select", "sql"),
    ]
    assert ir.from_dict(program[0].to_dict()) == program[0]
    assert execute(program[0], "ds").summary == "pong T on ds"  # type: ignore[arg-type]


def test_the_shell_knows_every_keyword_of_the_grammar():
    assert {"ASSERT", "MESSAGE", "CHOICE", "LOG_UNIFORM", "TRUE"} <= set(KEYWORDS)
    assert {"SEQ_CATEGORY_ID", "WEIGHTED_CATEGORY", "CROSS"} <= set(KEYWORDS)
    assert {"SHOW", "MODELS", "DESCRIBE", "DROP", "IF", "EXISTS"} <= set(KEYWORDS)
    assert "SQL_TEXT" not in KEYWORDS and "IDENT" not in KEYWORDS


def test_the_parser_keeps_no_state_between_parses():
    assert not [name for name, value in vars(parser).items() if isinstance(value, ContextVar)]
    text = "SELECT 1 TO EXPLAIN m WITH explain.seed = CHOICE(1, /* c */ 2);"
    first = parser.parse(text)
    parser.parse("SELECT 1 TO EXPLAIN m WITH a = [1, 2, 3];")
    assert parser.parse(text) == first
    (statement,) = first.statements
    assert statement.text == text[:-1]
    (attribute,) = statement.attributes
    assert [p.offset for p in attribute.value.positions] == [text.index("1,"), text.index("2)")]
