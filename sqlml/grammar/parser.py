"""Parse sqlml programs with the Lark grammar in ``sqlml.lark`` into :mod:`sqlml.grammar.ast`."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import cache, partial
from importlib.resources import files
from typing import Any, NamedTuple

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from sqlml.errors import ParseError
from sqlml.grammar import ast

_INT64 = 2**63

# How terminals are named in error messages.
_TERMINAL_WORDS = {
    "IDENT": "a name",
    "BARE_WORD": "a word",
    "QUOTED_IDENT": "a quoted name",
    "BACKQUOTED_IDENT": "a quoted name",
    "STRING": "a string",
    "SIGNED_NUMBER": "a number",
    "SEARCH_FUNCTION": "candidates like CHOICE(...)",
    "SQL_TEXT": "a SQL statement",
    "SQL_COMMAND": "a SQL statement",
    "ASSERT_CONDITION": "a condition",
    "_MESSAGE": "MESSAGE",
    "TRUE": "TRUE",
    "FALSE": "FALSE",
    "_SEMI": "';'",
    "_COMMA": "','",
    "_EQ": "'='",
    "_DOT": "'.'",
    "_LPAR": "'('",
    "_RPAR": "')'",
    "_LBRACKET": "'['",
    "_RBRACKET": "']'",
    "$END": "the end of the program",
}


def _pos(token: Token) -> ast.Position:
    return ast.Position(token.line, token.column, token.start_pos)


def _unquote(token: Token) -> str:
    text = str(token)
    if token.type == "QUOTED_IDENT":
        return text[1:-1].replace('""', '"')
    if token.type == "BACKQUOTED_IDENT":
        return text[1:-1].replace("``", "`")
    if token.type == "STRING":
        return text[1:-1].replace("''", "'").replace("\\'", "'")
    return text


def _check_not_empty(part: Token) -> None:
    """A :class:`ParseError` if ``part`` is a quoted name (or LABEL string) with nothing inside."""
    if len(part) == 2 and part.type in ("QUOTED_IDENT", "BACKQUOTED_IDENT", "STRING"):
        raise ParseError(
            f"the name {part} is empty",
            line=part.line,
            column=part.column,
            hint="write the name between the quotes",
        )


class _Located(NamedTuple):
    """A value of the WITH clause, with its first token and the offset just past it (a TO
    EXPLAIN statement may end with its WITH clause)."""

    value: Any
    start: Token | None
    end: int


class _Unsliced(NamedTuple):
    """A statement but its text, which :func:`parse` slices from the program: ``make(text)``."""

    make: Callable[..., ast.Statement]
    start: int
    end: int


def _plain(item: Any) -> Any:
    return item.value if isinstance(item, _Located) else item


@v_args(inline=True)
class _ToAst(Transformer):
    """Turns Lark's parse tree into frozen AST dataclasses as it is built (no tree is made, so
    each callback sees only its rule's tokens and results: values carry where they are)."""

    def start(self, *statements: _Unsliced) -> tuple[_Unsliced, ...]:
        return statements

    def sql(self, text: Token) -> _Unsliced:
        return _Unsliced(partial(ast.SqlStatement, pos=_pos(text)), text.start_pos, text.end_pos)

    @v_args(inline=False)
    def train(self, children: list) -> _Unsliced:
        select, estimator, *clauses, into = children
        attributes: tuple[ast.Attribute, ...] = ()
        columns: list[ast.ColumnClause] = []
        label = using = None
        for kind, value in clauses:
            if kind == "with":
                attributes = value.value
            elif kind == "column":
                columns.append(value)
            elif kind == "label":
                label = value
            else:
                using = value
        make = partial(
            ast.TrainStatement,
            pos=_pos(select),
            select=str(select).rstrip(),
            estimator=estimator,
            attributes=attributes,
            columns=tuple(columns),
            label=label,
            using=using,
            into=into,
        )
        return _Unsliced(make, select.start_pos, into.end)

    @v_args(inline=False)
    def predict(self, children: list) -> _Unsliced:
        select, target, *with_clause, using = children
        make = partial(
            ast.PredictStatement,
            pos=_pos(select),
            select=str(select).rstrip(),
            target=target,
            attributes=with_clause[0][1].value if with_clause else (),
            using=using,
        )
        return _Unsliced(make, select.start_pos, using.end)

    @v_args(inline=False)
    def evaluate(self, children: list) -> _Unsliced:
        select, model, *with_clause, (_, label), into = children
        make = partial(
            ast.EvaluateStatement,
            pos=_pos(select),
            select=str(select).rstrip(),
            model=model,
            attributes=with_clause[0][1].value if with_clause else (),
            label=label,
            into=into,
        )
        return _Unsliced(make, select.start_pos, into.end)

    @v_args(inline=False)
    def explain(self, children: list) -> _Unsliced:
        select, model, *clauses = children
        clause = dict(clauses)
        attributes = clause.get("with")
        last = clause.get("into") or clause.get("using")
        end = last.end if last else attributes.end if attributes else model.end
        make = partial(
            ast.ExplainStatement,
            pos=_pos(select),
            select=str(select).rstrip(),
            model=model,
            attributes=attributes.value if attributes else (),
            explainer=clause.get("using"),
            into=clause.get("into"),
        )
        return _Unsliced(make, select.start_pos, end)

    def into_clause(self, table: ast.Name) -> tuple[str, ast.Name]:
        return "into", table

    def show_train(self, keyword: Token, model: ast.Name) -> _Unsliced:
        make = partial(ast.ShowTrainStatement, pos=_pos(keyword), model=model)
        return _Unsliced(make, keyword.start_pos, model.end)

    def show_models(self, keyword: Token) -> _Unsliced:
        make = partial(ast.ShowModelsStatement, pos=_pos(keyword))
        return _Unsliced(make, keyword.start_pos, keyword.end_pos)

    def describe_model(self, keyword: Token, model: ast.Name) -> _Unsliced:
        make = partial(ast.DescribeModelStatement, pos=_pos(keyword), model=model)
        return _Unsliced(make, keyword.start_pos, model.end)

    def drop_model(self, keyword: Token, if_exists: Token | None, model: ast.Name) -> _Unsliced:
        make = partial(
            ast.DropModelStatement, pos=_pos(keyword), model=model, if_exists=if_exists is not None
        )
        return _Unsliced(make, keyword.start_pos, model.end)

    def assertion(self, keyword: Token, condition: Token, message: Token | None) -> _Unsliced:
        make = partial(
            ast.AssertStatement,
            pos=_pos(keyword),
            condition=str(condition).rstrip(),
            condition_pos=_pos(condition),
            message=_unquote(message) if message is not None else None,
        )
        end = message.end_pos if message is not None else condition.end_pos
        return _Unsliced(make, keyword.start_pos, end)

    def with_clause(self, *attributes: _Located) -> tuple[str, _Located]:
        return "with", _Located(tuple(a.value for a in attributes), None, attributes[-1].end)

    def attribute(self, name: ast.Name, value: _Located) -> _Located:
        return _Located(ast.Attribute(str(name), value.value, name.pos), None, value.end)

    def column_clause(self, *children) -> tuple[str, ast.ColumnClause]:
        *columns, target = children
        return "column", ast.ColumnClause(tuple(columns), target, columns[0].pos)

    def label_clause(self, label: ast.Name | Token) -> tuple[str, ast.Name]:
        if isinstance(label, Token):
            _check_not_empty(label)
            label = ast.Name((_unquote(label),), _pos(label), label.end_pos)
        return "label", label

    def using_clause(self, model: ast.Name) -> tuple[str, ast.Name]:
        return "using", model

    def call(self, function: Token, *args) -> ast.Call:
        return ast.Call(
            str(function).upper(), tuple(_plain(a) for a in args if a is not None), _pos(function)
        )

    def argument_list(self, *items) -> tuple:
        return tuple(_plain(item) for item in items if item is not None)

    def list(self, *items) -> _Located:
        values = tuple(item.value for item in items if isinstance(item, _Located))
        return _Located(values, items[0], items[-1].end_pos)  # from "[" to "]"

    def candidates(self, function: Token, *items) -> _Located:
        values = [item for item in items if isinstance(item, _Located)]
        found = ast.Candidates(
            str(function).upper(),
            tuple(value.value for value in values),
            tuple(_pos(value.start) for value in values),
            _pos(function),
        )
        return _Located(found, function, items[-1].end_pos)  # to the closing ")"

    def name(self, *parts: Token) -> ast.Name:
        for part in parts:
            _check_not_empty(part)
        return ast.Name(tuple(_unquote(p) for p in parts), _pos(parts[0]), parts[-1].end_pos)

    def bare_word(self, *parts: Token) -> _Located:
        return _Located(".".join(parts), parts[0], parts[-1].end_pos)

    def number(self, token: Token) -> _Located:
        text = str(token)
        value: int | float
        try:
            value = int(text)
        except ValueError:  # a fraction, an exponent, or more digits than int() takes
            value = float(text)
        in_range = math.isfinite(value) if isinstance(value, float) else -_INT64 <= value < _INT64
        if not in_range:
            shown = text if len(text) <= 24 else text[:20] + "..."
            raise ParseError(
                f"the number {shown} is out of range",
                line=token.line,
                column=token.column,
                hint="integers take at most 64 bits, other numbers up to about 1.8e308",
            )
        return _Located(value, token, token.end_pos)

    def string(self, token: Token) -> _Located:
        return _Located(_unquote(token), token, token.end_pos)

    def boolean(self, token: Token) -> _Located:
        return _Located(token.type == "TRUE", token, token.end_pos)


@cache
def _parser() -> Lark:
    grammar = files("sqlml.grammar").joinpath("sqlml.lark").read_text()
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        maybe_placeholders=True,
        transformer=_ToAst(),
    )


def keywords() -> tuple[str, ...]:
    """The grammar's keywords, upper-cased, in the order its terminals are declared: the
    words of its case-insensitive terminals that match words only (``TO``, ``SHOW TRAIN``,
    ``CHOICE(``; not ``SQL_TEXT``)."""
    found: dict[str, None] = {}
    for terminal in _parser().terminals:
        if "i" not in terminal.pattern.flags:
            continue
        bare = _LOOKAROUND.sub("", terminal.pattern.value).replace(r"\s+", " ")
        if _WORDS_ONLY.fullmatch(bare):
            found.update(dict.fromkeys(word.upper() for word in _WORD.findall(bare)))
    return tuple(found)


# Lookarounds (one level of parentheses inside), word boundaries; what is left of a keyword.
_LOOKAROUND = re.compile(r"\(\?<?[=!](?:\\.|[^()\\]|\((?:\\.|[^()\\])*\))*\)|\\b")
_WORDS_ONLY = re.compile(r"(?:[A-Za-z_ |)]|\(\?:)+")
_WORD = re.compile(r"[A-Za-z_]+")


def parse(text: str) -> ast.Program:
    """Parse a program; raises :class:`~sqlml.errors.ParseError` with line and column."""
    check_characters(text)
    try:
        statements = _parser().parse(text)
    except UnexpectedInput as error:
        raise _parse_error(text, error) from None
    except VisitError as error:  # a transformer callback failed: a bug, not a user error
        raise error.orig_exc from error
    return ast.Program(tuple(s.make(text=text[s.start : s.end].rstrip()) for s in statements))


# Characters no statement may hold: NUL, which ends a statement's text in the C libraries of the
# databases (libpq would run what comes before it alone), and lone surrogates, which stand for
# bytes that are not UTF-8 (Python decodes undecodable command-line bytes to them).
_UNREADABLE = re.compile("[\x00\ud800-\udfff]")


def check_characters(text: str) -> None:
    """A :class:`ParseError` at the first NUL character or lone surrogate in ``text``."""
    found = _UNREADABLE.search(text)
    if found is None:
        return
    offset, code = found.start(), ord(found.group())
    line = text.count("\n", 0, offset) + 1
    column = offset - text.rfind("\n", 0, offset)
    if code == 0:
        raise ParseError(
            "the program holds a NUL character (code 0), which would cut its statement short "
            "in the database",
            line=line,
            column=column,
            hint="remove it; a file of text with NULs between the letters is UTF-16: save it "
            "as UTF-8",
        )
    if 0xDC80 <= code <= 0xDCFF:  # Python's surrogateescape: the undecodable byte code - 0xDC00
        what = f"the byte 0x{code - 0xDC00:02x}, which is not part of a UTF-8 character"
    else:
        what = f"a lone surrogate (U+{code:04X}), which is not a character"
    raise ParseError(
        f"the program is not valid UTF-8: it holds {what}",
        line=line,
        column=column,
        hint="write the program in UTF-8 (check the encoding of the file or terminal)",
    )


def _parse_error(text: str, error: UnexpectedInput) -> ParseError:
    line, column = error.line, error.column
    if isinstance(error, UnexpectedCharacters):
        return ParseError(_unexpected_text(text[error.pos_in_stream :]), line=line, column=column)
    assert isinstance(error, UnexpectedToken)
    expected = _acceptable(error)
    if error.token.type == "$END":  # just past the last token (not a trailing comment)
        line, column = error.token.end_line, error.token.end_column
        if line is None or column is None:
            line, column = _end_position(text)
        message = f"the statement ends too early; expected {_expected(expected)}"
    elif "SQL_TEXT" in expected and error.token.type == "_TO":
        message = f"{_shown(text[error.token.start_pos :], words=2)} needs a SELECT before it"
    else:
        message = f"unexpected {_shown(str(error.token))}; expected {_expected(expected)}"
    return ParseError(message, line=line, column=column, hint=_hint(expected, _clause(error)))


def _acceptable(error: UnexpectedToken) -> set[str]:
    """The terminals the parser could take here (LALR's own sets are too wide)."""
    if error.interactive_parser is None:
        return set(error.expected)
    return set(error.interactive_parser.accepts()) or set(error.expected)


def _unexpected_text(rest: str) -> str:
    if rest.startswith("'"):
        return "this string is never closed: add the closing '"
    if rest.startswith(('"', "`")):
        return f"this quoted name is never closed: add the closing {rest[0]}"
    if rest.startswith("/*"):
        return "this comment is never closed: add */"
    return f"unexpected {_shown(rest)}"


def _shown(text: str, words: int = 1) -> str:
    """The first word(s) or symbol of ``text``, quoted for a message."""
    found = re.findall(r"[\w$]+|\S", text)[:words]
    return repr(" ".join(found)) if found else "end of line"


def _expected(names: set[str]) -> str:
    words = sorted({_TERMINAL_WORDS.get(n, n.lstrip("_")) for n in names})
    if len(words) > 8:
        words = [*words[:8], "..."]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _clause(error: UnexpectedToken) -> str | None:
    """The extended clause (_TRAIN, _PREDICT...) of the statement being parsed, if any."""
    if error.interactive_parser is None:
        return None
    for value in reversed(error.interactive_parser.parser_state.value_stack):
        if isinstance(value, Token) and value.type in _CLAUSE_HINTS:
            return value.type
    return None


_CLAUSE_HINTS = {
    "_TRAIN": ("_INTO", "a TO TRAIN statement ends with INTO <model name>"),
    "_PREDICT": ("_USING", "a TO PREDICT statement ends with USING <model name>"),
    "_EVALUATE": ("_LABEL", "a TO EVALUATE statement ends with LABEL <column> INTO <table>"),
}


def _hint(expected: set[str], clause: str | None) -> str | None:
    if clause in _CLAUSE_HINTS:
        keyword, hint = _CLAUSE_HINTS[clause]
        if keyword in expected or "_INTO" in expected:
            return hint
    if expected == {"_SEMI"} or expected == {"_SEMI", "$END"}:
        return "end each statement with ';'"
    return None


def _end_position(text: str) -> tuple[int, int]:
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    column = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return line, column
