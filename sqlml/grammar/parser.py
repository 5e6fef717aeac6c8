"""Parse sqlml programs with the Lark grammar in ``sqlml.lark`` into :mod:`sqlml.grammar.ast`."""

from __future__ import annotations

import math
import re
from contextvars import ContextVar
from functools import cache
from importlib.resources import files

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from sqlml.errors import ParseError
from sqlml.grammar import ast

_source: ContextVar[str] = ContextVar("sqlml_source")
# Where the last attribute value ended: a TO EXPLAIN statement may end with its WITH clause.
_value_end: ContextVar[int] = ContextVar("sqlml_value_end", default=0)
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


def _position_after(offset: int) -> ast.Position:
    """Where the first token at or after ``offset`` starts (blanks and comments skipped)."""
    text = _source.get()
    start = _BLANKS.match(text, offset).end()
    line = text.count("\n", 0, start) + 1
    return ast.Position(line, start - text.rfind("\n", 0, start), start)


_BLANKS = re.compile(r"(?:[\s\ufeff]+|--[^\n]*|/\*(?:[^*]|\*+[^*/])*\*+/)*")


def _text(start: Token, end_pos: int) -> str:
    return _source.get()[start.start_pos : end_pos]


@v_args(inline=True)
class _ToAst(Transformer):
    """Turns Lark's parse tree into frozen AST dataclasses as it is built."""

    def start(self, *statements: ast.Statement) -> ast.Program:
        return ast.Program(tuple(statements))

    def sql(self, text: Token) -> ast.SqlStatement:
        return ast.SqlStatement(_text(text, text.end_pos).rstrip(), _pos(text))

    @v_args(inline=False)
    def train(self, children: list) -> ast.TrainStatement:
        select, estimator, *clauses, into = children
        attributes: tuple[ast.Attribute, ...] = ()
        columns: list[ast.ColumnClause] = []
        label = using = None
        for kind, value in clauses:
            if kind == "with":
                attributes = value
            elif kind == "column":
                columns.append(value)
            elif kind == "label":
                label = value
            else:
                using = value
        return ast.TrainStatement(
            text=_text(select, into.end),
            pos=_pos(select),
            select=str(select).rstrip(),
            estimator=estimator,
            attributes=attributes,
            columns=tuple(columns),
            label=label,
            using=using,
            into=into,
        )

    @v_args(inline=False)
    def predict(self, children: list) -> ast.PredictStatement:
        select, target, *with_clause, using = children
        return ast.PredictStatement(
            text=_text(select, using.end),
            pos=_pos(select),
            select=str(select).rstrip(),
            target=target,
            attributes=with_clause[0][1] if with_clause else (),
            using=using,
        )

    @v_args(inline=False)
    def evaluate(self, children: list) -> ast.EvaluateStatement:
        select, model, *with_clause, (_, label), into = children
        return ast.EvaluateStatement(
            text=_text(select, into.end),
            pos=_pos(select),
            select=str(select).rstrip(),
            model=model,
            attributes=with_clause[0][1] if with_clause else (),
            label=label,
            into=into,
        )

    @v_args(inline=False)
    def explain(self, children: list) -> ast.ExplainStatement:
        select, model, *clauses = children
        clause = dict(clauses)
        last = clause.get("into") or clause.get("using")
        end = last.end if last else _value_end.get() if "with" in clause else model.end
        return ast.ExplainStatement(
            text=_text(select, end),
            pos=_pos(select),
            select=str(select).rstrip(),
            model=model,
            attributes=clause.get("with", ()),
            explainer=clause.get("using"),
            into=clause.get("into"),
        )

    def into_clause(self, table: ast.Name) -> tuple[str, ast.Name]:
        return "into", table

    def show_train(self, keyword: Token, model: ast.Name) -> ast.ShowTrainStatement:
        return ast.ShowTrainStatement(_text(keyword, model.end), _pos(keyword), model)

    def show_models(self, keyword: Token) -> ast.ShowModelsStatement:
        return ast.ShowModelsStatement(_text(keyword, keyword.end_pos), _pos(keyword))

    def describe_model(self, keyword: Token, model: ast.Name) -> ast.DescribeModelStatement:
        return ast.DescribeModelStatement(_text(keyword, model.end), _pos(keyword), model)

    def drop_model(
        self, keyword: Token, if_exists: Token | None, model: ast.Name
    ) -> ast.DropModelStatement:
        return ast.DropModelStatement(
            _text(keyword, model.end), _pos(keyword), model, if_exists is not None
        )

    def assertion(
        self, keyword: Token, condition: Token, message: Token | None
    ) -> ast.AssertStatement:
        end = message.end_pos if message is not None else condition.end_pos
        return ast.AssertStatement(
            _text(keyword, end).rstrip(),
            _pos(keyword),
            str(condition).rstrip(),
            _pos(condition),
            _unquote(message) if message is not None else None,
        )

    def with_clause(self, *attributes: ast.Attribute) -> tuple[str, tuple]:
        return "with", attributes

    def attribute(self, name: ast.Name, value: ast.Value) -> ast.Attribute:
        return ast.Attribute(str(name), value, name.pos)

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
            str(function).upper(), tuple(a for a in args if a is not None), _pos(function)
        )

    def argument_list(self, *items) -> tuple:
        return tuple(item for item in items if item is not None)

    def list(self, *items) -> tuple:
        _value_end.set(items[-1].end_pos)  # the closing "]"
        return tuple(item for item in items if item is not None and not isinstance(item, Token))

    def candidates(self, function: Token, *items) -> ast.Candidates:
        _value_end.set(items[-1].end_pos)  # the closing ")"
        items = tuple(item for item in items if item is not None)
        values, positions = [], []
        for separator, value in zip(items[:-1:2], items[1:-1:2], strict=False):
            values.append(value)
            positions.append(_position_after(separator.end_pos))
        return ast.Candidates(
            str(function).upper(), tuple(values), tuple(positions), _pos(function)
        )

    def name(self, *parts: Token) -> ast.Name:
        for part in parts:
            _check_not_empty(part)
        return ast.Name(tuple(_unquote(p) for p in parts), _pos(parts[0]), parts[-1].end_pos)

    def bare_word(self, *parts: Token) -> str:
        _value_end.set(parts[-1].end_pos)
        return ".".join(parts)

    def number(self, token: Token) -> int | float:
        _value_end.set(token.end_pos)
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
        return value

    def string(self, token: Token) -> str:
        _value_end.set(token.end_pos)
        return _unquote(token)

    def boolean(self, token: Token) -> bool:
        _value_end.set(token.end_pos)
        return token.type == "TRUE"


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


def parse(text: str) -> ast.Program:
    """Parse a program; raises :class:`~sqlml.errors.ParseError` with line and column."""
    check_characters(text)
    token, end_token = _source.set(text), _value_end.set(0)
    try:
        return _parser().parse(text)
    except UnexpectedInput as error:
        raise _parse_error(text, error) from None
    except VisitError as error:  # a transformer callback failed: a bug, not a user error
        raise error.orig_exc from error
    finally:
        _source.reset(token)
        _value_end.reset(end_token)


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
