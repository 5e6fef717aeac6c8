"""Standard SQL split without the grammar (sqlml.grammar.plain): exactly what the parser makes
of the same text, or nothing (the parser reads it); and every kind's keywords are in every
statement of the kind, which is what makes leaving the grammar out sound."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlml.errors import ParseError
from sqlml.grammar import parser
from sqlml.grammar.plain import plain_program
from sqlml.statements import KINDS, StatementKind, for_syntax, register, unregister
from tests.test_corpus import load_corpus

CORPUS = load_corpus()


def parsed(text: str):
    try:
        return parser.parse(text)
    except ParseError:
        return None


@pytest.mark.parametrize(("key", "entry"), CORPUS, ids=[key for key, _ in CORPUS])
def test_a_corpus_program_splits_as_the_parser_parses_it_or_is_left_to_it(key, entry):
    program = entry["sql"]
    split = plain_program(program)
    if split is not None:
        assert split == parser.parse(program)
    kinds = {for_syntax(node).name for node in (parsed(program) or parser.parse("")).statements}
    if kinds - {"sql"}:
        assert split is None


def test_the_corpus_has_plain_programs_and_others():
    plain = [name for name, entry in CORPUS if plain_program(entry["sql"]) is not None]
    assert 20 < len(plain) < len(CORPUS) - 100


@pytest.mark.parametrize(("key", "entry"), CORPUS, ids=[key for key, _ in CORPUS])
def test_each_extended_statement_holds_one_of_its_kinds_keywords(key, entry):
    program = parsed(entry["sql"])
    for node in program.statements if program else ():
        kind = for_syntax(node)
        if kind.name != "sql":
            words = "|".join(kind.keywords)
            assert re.search(rf"\b(?:{words})\b", node.text, re.IGNORECASE), (kind.name, node.text)


@pytest.mark.parametrize(
    "program",
    [
        "SELECT 'TO TRAIN' AS words;",  # a keyword in a string: the parser reads it
        "SELECT 1 AS model;",
        "SELECT 'open;",  # a quote left open: the parser's error, with its position
        "SELECT 1;\x00",
        "SELECT * FROM t TO PREDICT p.y USING m;",
    ],
)
def test_what_the_split_leaves_to_the_parser(program):
    assert plain_program(program) is None


def test_a_kind_declared_without_keywords_sends_every_program_to_the_parser():
    assert plain_program("SELECT 1;") is not None
    sql = KINDS["sql"]
    register(
        StatementKind(name="other", ir=sql.ir, handler=sql.handler, step=None, grammar=sql.grammar)
    )
    try:
        assert plain_program("SELECT 1;") is None
    finally:
        unregister("other")


# Programs of pieces that strain a split: quotes of each kind with ';' and keywords inside,
# comments, blank space, commands (ALTER...), and statements of the extended kinds.
PIECES = [
    "SELECT 1", "select a, b FROM t", "ALTER TABLE t RENAME TO u", "COPY t TO 'f.csv'",
    "'a;b'", '"x;""y"', "`q;`", "'it''s'", "'\\';'", "-- c; TO TRAIN\n", "/* ; */", "/* * / */",
    ";", ";", " ", "\n", "\ufeff", "-", "/", "'open", "TO", "TO TRAIN m", "model", "train_x",
    "SELECT * FROM t TO PREDICT p.y USING m", "SHOW MODELS", "ASSERT 1 = 1", "to trainer",
    "Ünïcode", "$1", "E'\\n'",
]  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join))
def test_any_program_of_pieces_splits_as_the_parser_parses_it_or_is_left_to_it(program):
    split = plain_program(program)
    if split is not None:
        assert split == parser.parse(program)
