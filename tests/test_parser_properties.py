"""Property tests of the parser.

1. Statements composed from the grammar's pieces (queries, estimators, attributes of every value
   type, COLUMN expressions, plain, quoted and qualified names, random keyword case, comments
   between tokens) parse, and the AST gives every piece back.
2. Any text at all (random, token soup, valid programs with characters deleted, inserted or
   swapped, very long) either parses to an ``ast.Program`` or raises ``ParseError`` pointing
   inside the text: never another exception.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sqlml.errors import ParseError
from sqlml.grammar import ast, parse
from sqlml.statements.evaluate.syntax import EvaluateNode
from sqlml.statements.explain.syntax import ExplainNode
from sqlml.statements.model_admin.syntax import (
    DescribeModelNode,
    DropModelNode,
    ShowModelsNode,
    ShowTrainNode,
)
from sqlml.statements.predict.syntax import PredictNode
from sqlml.statements.sql.syntax import SqlNode
from sqlml.statements.train.syntax import TrainNode

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYWORDS = ["to", "train", "predict", "evaluate", "explain", "with", "column", "for", "label"]
KEYWORDS += ["using", "into", "if", "exists", "show", "models", "model", "true", "false"]

# Pieces ------------------------------------------------------------------------------------------
# Strategies are built once, here: building them inside composites on every draw is slow.

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
plain_ident = st.builds(
    str.__add__, st.sampled_from(LETTERS), st.text(LETTERS + "0123456789$", max_size=8)
)
# Names in the extended clauses may be keywords: the contextual lexer reads them as names.
ident = plain_ident | st.sampled_from(KEYWORDS + [k.upper() for k in KEYWORDS])
# Text of a quoted name: an empty name ("") is an error, so is a NUL or a lone surrogate.
quoted_text = st.text(
    st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=8
)


def quote(text: str, mark: str) -> str:
    return mark + text.replace(mark, mark * 2) + mark


# (source text, part) of one part of a name: plain, "double" or `back` quoted.
name_part = ident.map(lambda part: (part, part)) | st.tuples(
    quoted_text, st.sampled_from('"`')
).map(lambda t: (quote(*t), t[0]))
# (source text, parts) of a possibly qualified name.
name = st.lists(name_part, min_size=1, max_size=3).map(
    lambda parts: (".".join(src for src, _ in parts), tuple(p for _, p in parts))
)


@cache
def keyword(word: str) -> st.SearchStrategy[str]:
    """A keyword in random case: TRAIN, train, Train, tRaIn..."""
    flips = st.lists(st.booleans(), min_size=len(word), max_size=len(word))
    return flips.map(
        lambda ups: "".join(c.upper() if up else c.lower() for c, up in zip(word, ups, strict=True))
    )


# Blank space or comments between the tokens of an extended clause.
gap = st.sampled_from(
    [" ", "  ", "\n", "\t", "\r\n", " /* c; TO TRAIN */ ", " -- c; 'x\n", "\n\n  "]
)
space = st.sampled_from([" ", "\n", "\t", "  \n  "])
equals = st.sampled_from(["=", " = ", "\n=\t"])
list_sep = st.sampled_from([",", ", ", " ,\n "])


def sql_string(text: str) -> str:
    return quote(text, "'")


# Strings without backslashes: a backslash escapes the next character in sqlml strings (in
# double-quoted values too, as in SQLFlow).
string_content = st.text(st.characters(codec="utf-8", exclude_characters="\\\x00"), max_size=12)
label_content = string_content.filter(bool)  # an empty name is an error
integers = st.integers(-(10**12), 10**12)
floats = st.floats(allow_nan=False, allow_infinity=False)
word_segment = st.builds(
    str.__add__, st.sampled_from(".:/"), st.text(LETTERS + "0123", min_size=1, max_size=4)
)
bare_words = st.builds(
    lambda first, rest: first + "".join(rest), plain_ident, st.lists(word_segment, max_size=2)
).filter(lambda w: re.split(r"[.:/]", w)[0].lower() not in ("true", "false"))

# Attribute values as (source text, value).
scalar = st.one_of(
    st.tuples(st.sampled_from(["", "+"]), st.integers(0, 10**12)).map(
        lambda t: (t[0] + str(t[1]), t[1])
    ),
    integers.map(lambda i: (str(i), i)),
    floats.map(lambda f: (repr(f), f)),
    string_content.map(lambda s: (sql_string(s), s)),
    string_content.filter(bool).map(lambda s: (quote(s, '"'), s)),
    st.sampled_from([True, False]).flatmap(lambda b: keyword(str(b)).map(lambda k: (k, b))),
    bare_words.map(lambda w: (w, w)),
)


def _value_list(items: st.SearchStrategy) -> st.SearchStrategy:
    return st.tuples(st.lists(items, max_size=4), list_sep).map(
        lambda t: ("[" + t[1].join(src for src, _ in t[0]) + "]", tuple(v for _, v in t[0]))
    )


value = st.recursive(scalar, _value_list, max_leaves=8)
attribute_names = st.lists(
    st.lists(plain_ident, min_size=1, max_size=3).map(".".join),
    min_size=1,
    max_size=5,
    unique_by=str.lower,
)


@st.composite
def with_clause(draw) -> tuple[str, dict]:
    pieces, attrs = [], {}
    for attr in draw(attribute_names):
        src, attrs[attr] = draw(value)
        pieces.append(attr + draw(equals) + src)
    return draw(keyword("WITH")) + draw(gap) + ("," + draw(gap)).join(pieces), attrs


# COLUMN expressions: names, calls, numbers, strings and lists, as (source, expected) where the
# expected form is what `shape` makes of the AST.

leaf_argument = st.one_of(
    name.map(lambda n: (n[0], ("name", n[1]))),
    integers.map(lambda i: (str(i), i)),
    floats.map(lambda f: (repr(f), f)),
    string_content.map(lambda s: (sql_string(s), s)),
)


def _join_call(function: str, args: list) -> tuple:
    return (
        function + "(" + ", ".join(s for s, _ in args) + ")",
        ("call", function.upper(), [e for _, e in args]),
    )


def _nest_arguments(inner: st.SearchStrategy) -> st.SearchStrategy:
    items = st.lists(inner, max_size=3)
    return st.one_of(
        items.map(lambda a: ("[" + ", ".join(s for s, _ in a) + "]", ("list", [e for _, e in a]))),
        st.builds(_join_call, plain_ident, items),
    )


argument = st.recursive(leaf_argument, _nest_arguments, max_leaves=8)
call = st.builds(_join_call, plain_ident, st.lists(argument, max_size=3))
column_expr = name.map(lambda n: (n[0], ("name", n[1]))) | call


def shape(value):
    """An AST column expression in the form the strategies expect."""
    if isinstance(value, ast.Name):
        return ("name", value.parts)
    if isinstance(value, ast.Call):
        return ("call", value.function, [shape(a) for a in value.args])
    if isinstance(value, tuple):
        return ("list", [shape(a) for a in value])
    return value


def same(actual, expected) -> bool:
    """Equal with the same types all the way down (1 is not 1.0 nor True)."""
    if isinstance(expected, tuple | list):
        return (
            type(actual) is type(expected)
            and len(actual) == len(expected)
            and all(same(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, dict):
        return list(actual) == list(expected) and all(same(actual[k], expected[k]) for k in actual)
    return type(actual) is type(expected) and actual == expected


# Statements ------------------------------------------------------------------------------------


@dataclass
class Expected:
    """A generated statement: its text and what the AST must hold."""

    kind: type
    text: str
    fields: dict = field(default_factory=dict)


query_column = st.one_of(
    st.just("*"),
    st.text("abcxyz_0123", max_size=6).map("c_".__add__),
    string_content.map(sql_string),
    quoted_text.map(lambda t: quote(t, '"')),
    st.just("'TO TRAIN m INTO n;'"),
    st.just("count(*) AS n"),
)
query_head = st.sampled_from(["SELECT", "select", "WITH w AS (SELECT 1) SELECT", "(SELECT"])


@st.composite
def query(draw) -> str:
    """A query that holds no extended clause outside strings, quoted names and comments."""
    head = draw(query_head)
    text = head + " " + ", ".join(draw(st.lists(query_column, min_size=1, max_size=4)))
    text += draw(space) + "FROM t_" + draw(plain_ident)
    if draw(st.booleans()):
        text += " /* ; TO PREDICT */ WHERE x > " + str(draw(integers))
    if draw(st.booleans()):
        text += " -- ; TO TRAIN m INTO n\n  AND y = " + sql_string(draw(string_content))
    return text + (")" if head == "(SELECT" else "")


queries = query()
with_clauses = with_clause()
column_lists = st.lists(column_expr, min_size=1, max_size=4)


def clause(draw, word: str, text: str) -> str:
    """`` WORD text`` with random gaps and keyword case."""
    return draw(gap) + draw(keyword(word)) + draw(gap) + text


@st.composite
def train(draw) -> Expected:
    select = draw(queries)
    est_src, estimator = draw(name)
    src = select + draw(space) + draw(keyword("TO")) + draw(space) + draw(keyword("TRAIN"))
    src += draw(gap) + est_src
    fields = {"select": select, "estimator": estimator, "attributes": {}, "columns": []}
    if draw(st.booleans()):
        with_src, fields["attributes"] = draw(with_clauses)
        src += draw(gap) + with_src
    for _ in range(draw(st.integers(0, 2))):
        exprs = draw(column_lists)
        src += clause(draw, "COLUMN", ("," + draw(gap)).join(s for s, _ in exprs))
        target = None
        if draw(st.booleans()):
            target_src, target = draw(name)
            src += clause(draw, "FOR", target_src)
        fields["columns"].append(([e for _, e in exprs], target))
    fields["label"] = fields["using"] = None
    if draw(st.booleans()):
        if draw(st.booleans()):
            label_src, fields["label"] = draw(name)
        else:
            content = draw(label_content)
            label_src, fields["label"] = sql_string(content), (content,)
        src += clause(draw, "LABEL", label_src)
    if draw(st.booleans()):
        using_src, fields["using"] = draw(name)
        src += clause(draw, "USING", using_src)
    into_src, fields["into"] = draw(name)
    src += clause(draw, "INTO", into_src)
    return Expected(TrainNode, src, fields)


@st.composite
def predict(draw) -> Expected:
    select = draw(queries)
    target_src, target = draw(name)
    src = select + draw(space) + draw(keyword("TO")) + " " + draw(keyword("PREDICT"))
    src += draw(gap) + target_src
    attributes = {}
    if draw(st.booleans()):
        with_src, attributes = draw(with_clauses)
        src += draw(gap) + with_src
    using_src, using = draw(name)
    src += clause(draw, "USING", using_src)
    fields = {"select": select, "target": target, "attributes": attributes, "using": using}
    return Expected(PredictNode, src, fields)


@st.composite
def evaluate(draw) -> Expected:
    select = draw(queries)
    model_src, model = draw(name)
    src = select + draw(space) + draw(keyword("TO")) + " " + draw(keyword("EVALUATE"))
    src += draw(gap) + model_src
    attributes = {}
    if draw(st.booleans()):
        with_src, attributes = draw(with_clauses)
        src += draw(gap) + with_src
    label_src, label = draw(name)
    into_src, into = draw(name)
    src += clause(draw, "LABEL", label_src) + clause(draw, "INTO", into_src)
    fields = {"select": select, "model": model, "attributes": attributes}
    fields |= {"label": label, "into": into}
    return Expected(EvaluateNode, src, fields)


@st.composite
def explain(draw) -> Expected:
    select = draw(queries)
    model_src, model = draw(name)
    src = select + draw(space) + draw(keyword("TO")) + " " + draw(keyword("EXPLAIN"))
    src += draw(gap) + model_src
    fields = {"select": select, "model": model, "attributes": {}, "explainer": None, "into": None}
    if draw(st.booleans()):
        with_src, fields["attributes"] = draw(with_clauses)
        src += draw(gap) + with_src
    if draw(st.booleans()):
        using_src, fields["explainer"] = draw(name)
        src += clause(draw, "USING", using_src)
    if draw(st.booleans()):
        into_src, fields["into"] = draw(name)
        src += clause(draw, "INTO", into_src)
    return Expected(ExplainNode, src, fields)


model_kinds = st.sampled_from(["show_train", "show_models", "describe", "drop"])
describe_words = st.sampled_from(["DESCRIBE", "DESC"])


@st.composite
def model_statement(draw) -> Expected:
    model_src, model = draw(name)
    kind = draw(model_kinds)
    if kind == "show_models":
        src = draw(keyword("SHOW")) + draw(space) + draw(keyword("MODELS"))
        return Expected(ShowModelsNode, src)
    if kind == "show_train":
        src = draw(keyword("SHOW")) + draw(space) + draw(keyword("TRAIN")) + draw(gap) + model_src
        return Expected(ShowTrainNode, src, {"model": model})
    if kind == "describe":
        src = draw(keyword(draw(describe_words))) + draw(space) + draw(keyword("MODEL"))
        return Expected(DescribeModelNode, src + draw(space) + model_src, {"model": model})
    src = draw(keyword("DROP")) + draw(space) + draw(keyword("MODEL"))
    if_exists = draw(st.booleans())
    if if_exists:
        src += draw(space) + draw(keyword("IF")) + draw(space) + draw(keyword("EXISTS"))
    src += draw(gap) + model_src
    return Expected(DropModelNode, src, {"model": model, "if_exists": if_exists})


SQL_TEMPLATES = [
    "CREATE TABLE {table} (a INT, b TEXT)",
    "INSERT INTO {table} VALUES (1, {string})",
    "ALTER TABLE {table} RENAME TO train",
    "ALTER TABLE {table} RENAME COLUMN a TO predict",
    "RENAME TABLE {table} TO evaluate",
    "SET x TO explain",
    "DROP TABLE IF EXISTS {table}",
    "SHOW TABLES",
    "DESCRIBE {table}",
    'UPDATE {table} SET a = 1 -- to train\n WHERE b = "x;y" OR c = {string}',
]
sql_templates = st.sampled_from(SQL_TEMPLATES)


@st.composite
def sql_statement(draw) -> Expected:
    if draw(st.booleans()):
        return Expected(SqlNode, draw(queries))
    table, string = "t_" + draw(plain_ident), sql_string(draw(string_content))
    return Expected(SqlNode, draw(sql_templates).format(table=table, string=string))


statement = st.one_of(train(), predict(), evaluate(), explain(), model_statement(), sql_statement())
program_starts = st.sampled_from(["", "\n", "-- start\n", "/* a; */ "])
statement_ends = st.sampled_from([";", " ;", ";\n", "\n;\n\n", "; -- end\n"])


@st.composite
def program(draw) -> tuple[str, list[tuple[int, Expected]]]:
    """A program of 1-4 statements; returns its text and each statement with its offset."""
    statements = draw(st.lists(statement, min_size=1, max_size=4))
    text, placed = draw(program_starts), []
    for i, expected in enumerate(statements):
        placed.append((len(text), expected))
        text += expected.text
        if i < len(statements) - 1 or draw(st.booleans()):
            text += draw(statement_ends)
    return text, placed


programs = program()


def actual_fields(statement: ast.Statement) -> dict:
    found = {}
    for key in ("select", "attributes", "if_exists"):
        if hasattr(statement, key):
            value = getattr(statement, key)
            found[key] = {a.name: a.value for a in value} if key == "attributes" else value
    for key in ("estimator", "target", "model", "label", "using", "into", "explainer"):
        if hasattr(statement, key):
            value = getattr(statement, key)
            found[key] = None if value is None else value.parts
    if isinstance(statement, TrainNode):
        found["columns"] = [
            ([shape(c) for c in clause.columns], clause.target and clause.target.parts)
            for clause in statement.columns
        ]
    return found


# 1. Generated statements parse to their pieces -----------------------------------------------


@FAST
@given(programs)
def test_generated_programs_parse_to_their_pieces(generated):
    text, placed = generated
    statements = parse(text).statements
    assert [type(s) for s in statements] == [e.kind for _, e in placed]
    for statement, (offset, expected) in zip(statements, placed, strict=True):
        assert statement.pos.offset == offset
        assert statement.text == expected.text
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        assert (statement.pos.line, statement.pos.column) == (line, column)
        got = actual_fields(statement)
        for key, value in expected.fields.items():
            assert same(got[key], value), f"{key}: got {got[key]!r}, want {value!r}"


# 2. Any text: a Program or a ParseError inside the text ----------------------------------------


def check_total(text: str) -> None:
    """``parse`` returns a Program or raises a ParseError that points into the text."""
    try:
        result = parse(text)
    except ParseError as error:
        lines = text.split("\n")
        assert error.line is not None and error.column is not None, error
        assert 1 <= error.line <= len(lines), error.render()
        assert 1 <= error.column <= len(lines[error.line - 1]) + 1, error.render()
        assert error.message, error
    else:
        assert isinstance(result, ast.Program)
        for statement in result.statements:
            assert text[statement.pos.offset :].startswith(statement.text)


TOKENS = [
    "SELECT", "select", "*", "FROM", "t", "a.b", "TO", "to", "TRAIN", "PREDICT", "EVALUATE",
    "EXPLAIN", "WITH", "COLUMN", "FOR", "LABEL", "USING", "INTO", "SHOW", "MODELS", "DESCRIBE",
    "DROP", "MODEL", "IF", "EXISTS", "TRUE", "false", ";", ",", "=", ".", "(", ")", "[", "]",
    "'", '"', "`", "''", "--", "/*", "*/", "\\", "-", "+", "1", "-2.5e3", ".5", "'x;y'", '"q"',
    "`b`", "\n", " ", "\t", "é", "日本", "\r", "\u2028", "\x00", "$", ":", "/", "reg:sq",
]  # fmt: skip
token_soup = st.lists(st.sampled_from(TOKENS), max_size=40).map(lambda ts: "".join(ts))
spaced_soup = st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join)
edits = st.sampled_from(["delete", "insert", "swap", "replace"])
inserts = st.sampled_from(TOKENS) | st.characters()


@FAST
@given(st.one_of(st.text(max_size=200), token_soup, spaced_soup))
def test_any_text_parses_or_raises_parse_error(text):
    check_total(text)


@FAST
@given(programs, st.data())
def test_mutated_programs_parse_or_raise_parse_error(generated, data):
    text = generated[0]
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(edits)
        at = data.draw(st.integers(0, max(len(text) - 1, 0)))
        if op == "delete":
            text = text[:at] + text[at + 1 :]
        elif op == "insert":
            text = text[:at] + data.draw(inserts) + text[at:]
        elif op == "swap" and len(text) > at + 1:
            text = text[:at] + text[at + 1] + text[at] + text[at + 2 :]
        elif op == "replace" and text:
            text = text[:at] + data.draw(st.characters()) + text[at + 1 :]
    check_total(text)


def test_very_long_inputs():
    long_select = "SELECT " + ", ".join(f"c{i}" for i in range(20_000)) + " FROM t"
    nested_list = "[" * 3_000 + "1" + "]" * 3_000
    nested_call = "f(" * 3_000 + "x" + ")" * 3_000
    cases = [
        long_select + ";",
        long_select + " TO TRAIN m INTO n;",
        "SELECT 1;" * 10_000,
        ";" * 50_000,
        "SELECT '" + "x" * 200_000 + "';",
        "SELECT '" + "''" * 50_000,  # never closed
        "SELECT 1 /*" + "*" * 50_000,  # never closed
        "SELECT " + "-" * 50_000,
        "SELECT " + "/" * 50_000,
        "SELECT " + "'a'" * 30_000,
        "SELECT * FROM t TO" + " " * 50_000 + "TRAIN m INTO n;",
        "to " * 20_000,
        "SELECT * FROM t TO TRAIN m WITH a = " + nested_list + " INTO n;",
        "SELECT * FROM t TO TRAIN m COLUMN " + nested_call + " INTO n;",
        "SELECT * FROM t TO TRAIN m WITH "
        + ", ".join(f"a{i} = {i}" for i in range(5_000))
        + " INTO n;",
        "SELECT * FROM t TO TRAIN m COLUMN "
        + ", ".join(f"c{i}" for i in range(5_000))
        + " INTO n;",
        "SELECT * FROM t TO TRAIN m WITH a = " + "[" * 3_000,
        "x" * 100_000,
        "\n" * 100_000 + "SELECT * FROM t TO TRAIN m INTO;",
    ]
    for text in cases:
        started = time.process_time()  # this process's: other processes' load left out
        check_total(text)
        assert time.process_time() - started < 5, f"slow on {text[:40]!r}..."


def test_error_positions_on_later_lines_are_exact():
    text = "SELECT 1;\n" * 500 + "SELECT * FROM t\nTO TRAIN m\n  LABEL y INTO ;"
    try:
        parse(text)
    except ParseError as error:
        assert (error.line, error.column) == (503, 16), error.render()
    else:
        raise AssertionError("parsed")
