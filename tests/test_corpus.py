"""The grammar's acceptance tests: every program in ``tests/corpus/*.yaml`` and what it parses to.

Each corpus file is a YAML list of entries (``tests/corpus/README.md`` describes the format):

    - name: what the entry shows
      sql: <program text>
      expect: [<statement>, ...]          # the program parses to these statements
    - name: ...
      sql: ...
      error: {line: 1, column: 40, message: <fragment>, hint: <fragment or null>}

A statement is either a kind (``sql``, ``train``, ``predict``, ...) or a mapping with ``kind``
and the statement's fields. Fields left out must be empty (no attributes, no COLUMN, no LABEL,
no USING, no INTO, not IF EXISTS); ``at: [line, column]`` and ``text`` are checked when given.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from sqlml.errors import ParseError
from sqlml.grammar import ast, parse
from sqlml.statements import KINDS as STATEMENT_KINDS
from sqlml.statements.assertion.syntax import AssertNode
from sqlml.statements.explain.syntax import ExplainNode
from sqlml.statements.model_admin.syntax import DropModelNode
from sqlml.statements.train.syntax import TrainNode

CORPUS = Path(__file__).resolve().parent / "corpus"
REQUIRED = object()


def field_defaults(syntax: type) -> dict[str, Any]:
    """A parsed statement's fields as the corpus gives them, each with its default: None for
    an optional part, empty for attributes and COLUMN clauses, false for a flag; REQUIRED for
    the rest (the text and positions are not fields of the corpus)."""
    defaults: dict[str, Any] = {}
    for field in dataclasses.fields(syntax):
        kind = str(field.type)
        if field.name == "text" or "Position" in kind:
            continue
        if "None" in kind:
            defaults[field.name] = None
        elif kind == "bool":
            defaults[field.name] = False
        elif kind.startswith("tuple[Attribute"):
            defaults[field.name] = {}
        elif kind.startswith("tuple["):
            defaults[field.name] = []
        else:
            defaults[field.name] = REQUIRED
    return defaults


# For each kind that a statement parses to (as sqlml.statements declares them): the AST class
# and its fields with their defaults (REQUIRED: must be given).
KINDS: dict[str, tuple[type, dict[str, Any]]] = {
    kind.name: (kind.syntax, field_defaults(kind.syntax))
    for kind in STATEMENT_KINDS.values()
    if kind.syntax is not None
}
OPTIONAL = {"kind", "at", "text"}
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


# Rendering AST values as the corpus writes them -------------------------------------------------


def render_name(name: ast.Name | None) -> str | None:
    """``db.model``; a part that is not a plain name is double-quoted: ``"sepal width"``."""
    if name is None:
        return None
    return ".".join(
        part if _PLAIN_NAME.fullmatch(part) else '"' + part.replace('"', '""') + '"'
        for part in name.parts
    )


def render_argument(arg: ast.Argument) -> str:
    """A COLUMN expression as text: ``CROSS([EMBEDDING(CATEGORY_ID(a, 100), 8)], 64)``."""
    if isinstance(arg, ast.Name):
        return render_name(arg)
    if isinstance(arg, ast.Call):
        return f"{arg.function}({', '.join(render_argument(a) for a in arg.args)})"
    if isinstance(arg, tuple):
        return "[" + ", ".join(render_argument(a) for a in arg) + "]"
    if isinstance(arg, str):
        return "'" + arg.replace("'", "''") + "'"
    return repr(arg)


def plain(value: ast.Value | ast.Candidates) -> Any:
    """An attribute value as YAML reads it: tuples become lists, candidates
    ``{FUNCTION: [values]}``."""
    if isinstance(value, ast.Candidates):
        return {value.function: [plain(v) for v in value.values]}
    return [plain(v) for v in value] if isinstance(value, tuple) else value


def fields(statement: ast.Statement) -> dict[str, Any]:
    """The statement's fields, rendered for comparison with the corpus."""
    found: dict[str, Any] = {}
    for field in ("select", "estimator", "target", "model", "label", "using", "into"):
        if hasattr(statement, field):
            value = getattr(statement, field)
            found[field] = value if field == "select" else render_name(value)
    if isinstance(statement, ExplainNode):
        found["explainer"] = render_name(statement.explainer)
    if hasattr(statement, "attributes"):
        names = [a.name for a in statement.attributes]
        assert len(names) == len(set(names)), f"attribute given twice: {names}"
        found["attributes"] = {a.name: plain(a.value) for a in statement.attributes}
    if isinstance(statement, TrainNode):
        found["columns"] = [
            [render_argument(c) for c in clause.columns]
            if clause.target is None
            else {
                "exprs": [render_argument(c) for c in clause.columns],
                "for": render_name(clause.target),
            }
            for clause in statement.columns
        ]
    if isinstance(statement, TrainNode):
        found.update(image=statement.image, base_image=statement.base_image)
    if isinstance(statement, DropModelNode):
        found["if_exists"] = statement.if_exists
    if isinstance(statement, AssertNode):
        found.update(condition=statement.condition, message=statement.message, warn=statement.warn)
    return found


def same(actual: Any, expected: Any) -> bool:
    """Equal and of the same types all the way down (1 is not 1.0, True is not 1)."""
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and list(actual) == list(expected)
            and all(same(actual[k], expected[k]) for k in expected)
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(same(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return type(actual) is type(expected) and actual == expected


# Loading the corpus ----------------------------------------------------------------------------


def load_corpus() -> list[tuple[str, dict]]:
    entries = []
    for path in sorted(CORPUS.glob("*.yaml")):
        for number, entry in enumerate(yaml.safe_load(path.read_text(encoding="utf-8")), 1):
            entries.append((f"{path.stem}:{number}:{entry.get('name', '?')}", entry))
    return entries


ENTRIES = load_corpus()
VALID = [pytest.param(entry, id=key) for key, entry in ENTRIES if "expect" in entry]
INVALID = [pytest.param(entry, id=key) for key, entry in ENTRIES if "error" in entry]


def check_entry_shape(entry: dict) -> None:
    """A typo in the corpus must fail, not pass silently."""
    assert set(entry) in ({"name", "sql", "expect"}, {"name", "sql", "error"}), sorted(entry)
    assert isinstance(entry["sql"], str)
    if "error" in entry:
        assert set(entry["error"]) <= {"line", "column", "message", "hint"}
        assert {"line", "column", "message"} <= set(entry["error"]), entry["error"]


def expected_statement(item: str | dict) -> dict:
    if isinstance(item, str):
        item = {"kind": item}
    assert item.get("kind") in KINDS, f"unknown kind in {item}"
    _, defaults = KINDS[item["kind"]]
    unknown = set(item) - set(defaults) - OPTIONAL
    assert not unknown, f"unknown fields {sorted(unknown)} for {item['kind']}"
    missing = [f for f, d in defaults.items() if d is REQUIRED and f not in item]
    if len(item) > 1:  # a bare kind checks the kind only
        assert not missing, f"{item['kind']} needs {missing}"
    return item


# The tests -------------------------------------------------------------------------------------


def test_corpus_size():
    assert len(VALID) + len(INVALID) >= 150
    assert len(VALID) >= 100 and len(INVALID) >= 40


@pytest.mark.parametrize("entry", VALID)
def test_valid_program(entry):
    check_entry_shape(entry)
    expected = [expected_statement(item) for item in entry["expect"]]
    statements = parse(entry["sql"]).statements
    kinds = {cls: kind for kind, (cls, _) in KINDS.items()}
    assert [kinds[type(s)] for s in statements] == [e["kind"] for e in expected]
    for statement, want in zip(statements, expected, strict=True):
        if len(want) == 1:
            continue
        _, defaults = KINDS[want["kind"]]
        got = fields(statement)
        for field, default in defaults.items():
            value = want.get(field, default)
            assert same(got[field], value), f"{field}: got {got[field]!r}, want {value!r}"
        if "at" in want:
            assert [statement.pos.line, statement.pos.column] == want["at"]
            lines = entry["sql"].split("\n")
            assert lines[statement.pos.line - 1][statement.pos.column - 1 :].startswith(
                statement.text[:1]
            )
        if "text" in want:
            assert statement.text == want["text"]
        assert entry["sql"][statement.pos.offset :].startswith(statement.text)


@pytest.mark.parametrize("entry", INVALID)
def test_invalid_program(entry):
    check_entry_shape(entry)
    want = entry["error"]
    with pytest.raises(ParseError) as caught:
        parse(entry["sql"])
    error = caught.value
    assert (error.line, error.column) == (want["line"], want["column"]), error.render()
    assert want["message"] in error.message, error.render()
    if "hint" in want:
        if want["hint"] is None:
            assert error.hint is None, error.render()
        else:
            assert want["hint"] in (error.hint or ""), error.render()
