"""TO RUN's node and its builders (the rules are in ``grammar.lark`` beside)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from lark import Token

from sqlml.errors import ParseError
from sqlml.grammar import ast
from sqlml.grammar.ast import Attribute, Name, Position
from sqlml.grammar.build import Located, Unsliced, check_not_empty, pos, unquote
from sqlml.grammar.fragment import Fragment


@dataclass(frozen=True)
class RunNode(ast.Statement):
    """``<select> TO RUN <program> [CMD "...", ...] [WITH ...] [INTO <table>, ...]``."""

    select: str
    program: Name  # as written, one part: a.b.c, path/to/script.py, registry/image:tag
    command: tuple[str, ...]  # CMD's arguments
    attributes: tuple[Attribute, ...]
    into: tuple[Name, ...]
    into_pos: Position | None  # where INTO is written


def build(children: list) -> Unsliced:
    select, program, *clauses = children
    clause = dict(clauses)
    attributes = clause.get("with")
    into_pos, tables = clause.get("into", (None, ()))
    command: Located | None = clause.get("cmd")
    ends = [program.end_pos]
    ends += [item.end for item in (command, attributes) if item is not None]
    ends += [table.end for table in tables]
    make = partial(
        RunNode,
        pos=pos(select),
        select=str(select).rstrip(),
        program=Name((str(program),), pos(program), program.end_pos),
        command=command.value if command else (),
        attributes=attributes.value if attributes else (),
        into=tables,
        into_pos=into_pos,
    )
    return Unsliced(make, select.start_pos, max(ends))


def run_command(children: list[Located]) -> tuple[str, Located]:
    """``CMD "a", "b"``: the strings, and the offset past the last."""
    return "cmd", Located(tuple(item.value for item in children), None, children[-1].end)


def run_into(children: list) -> tuple[str, tuple[Position, tuple[Name, ...]]]:
    word, *rest = children  # "!" keeps INTO and the commas
    return "into", (pos(word), tuple(item for item in rest if isinstance(item, Name)))


def run_table(parts: list[Token]) -> Name:
    """A table of INTO, named without quotes as in SQLFlow (whose CMD strings are quoted)."""
    for part in parts:
        check_not_empty(part)
        if part.type != "IDENT":
            raise ParseError(
                f"TO RUN's INTO names its tables without quotes, not {part}",
                line=part.line,
                column=part.column,
                hint=f"write INTO {unquote(part)}: the names of TO RUN's tables are plain words, "
                "as in SQLFlow",
            )
    return Name(tuple(str(p) for p in parts), pos(parts[0]), parts[-1].end_pos)


FRAGMENT = Fragment.load(
    __package__,
    statements=("run",),
    builders={"run": build, "run_command": run_command, "run_into": run_into,
              "run_table": run_table},
    clauses=("RUN",),
    sections=("CMD", "WITH", "INTO"),
    words={
        "RUN_PROGRAM": "the program (package.module.function, path/to/script.py or "
        "registry/image:tag)",
        "_CMD": "CMD",
    },
)  # fmt: skip
