"""Parse sqlml programs into :mod:`sqlml.grammar.ast`, with the grammar assembled from the
shared rules in ``sqlml.lark`` and the fragments the statement kinds declare."""

from __future__ import annotations

import math
import re
from functools import cache
from importlib.resources import files
from typing import NamedTuple

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from sqlml.errors import ParseError
from sqlml.grammar import ast
from sqlml.grammar.build import (
    Located,
    Unsliced,
    check_not_empty,
    model_version,
    plain,
    pos,
    unquote,
)
from sqlml.grammar.fragment import Fragment
from sqlml.grammar.parser_cache import cached_parser
from sqlml.grammar.plain import UNREADABLE
from sqlml.plugins import KINDS

_INT64 = 2**63

# How terminals are named in error messages.
_TERMINAL_WORDS = {
    "IDENT": "a name",
    "BARE_WORD": "a word",
    "QUOTED_IDENT": "a quoted name",
    "BACKQUOTED_IDENT": "a quoted name",
    "ZOO_NAME": "a name",  # a model zoo's (registry/image:tag/Estimator)
    "STRING": "a string",
    "DQ_STRING": "a string",
    "DQ_ARGUMENT": "a string",
    "SIGNED_NUMBER": "a number",
    "SEARCH_FUNCTION": "candidates like CHOICE(...)",
    "SQL_TEXT": "a SQL statement",
    "SQL_COMMAND": "a SQL statement",
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


@v_args(inline=True)
class _ToAst(Transformer):
    """Turns Lark's parse tree into frozen AST dataclasses as it is built (no tree is made, so
    each callback sees only its rule's tokens and results: values carry where they are).

    The callbacks here are the shared rules'; the kinds' builders are added to an instance.
    """

    def start(self, *statements: Unsliced) -> tuple[Unsliced, ...]:
        return statements

    def with_clause(self, *attributes: Located) -> tuple[str, Located]:
        return "with", Located(tuple(a.value for a in attributes), None, attributes[-1].end)

    def attribute(self, name: ast.Name, value: Located) -> Located:
        return Located(ast.Attribute(str(name), value.value, name.pos), None, value.end)

    def column_clause(self, *children) -> tuple[str, ast.ColumnClause]:
        *columns, target = children
        return "column", ast.ColumnClause(tuple(columns), target, columns[0].pos)

    def label_clause(self, label: ast.Name | Token) -> tuple[str, ast.Name]:
        if isinstance(label, Token):
            check_not_empty(label)
            label = ast.Name((unquote(label),), pos(label), label.end_pos)
        return "label", label

    def using_clause(self, model: ast.Name) -> tuple[str, ast.Name]:
        return "using", model

    def call(self, function: Token, *args) -> ast.Call:
        return ast.Call(
            str(function).upper(), tuple(plain(a) for a in args if a is not None), pos(function)
        )

    def argument_list(self, *items) -> tuple:
        return tuple(plain(item) for item in items if item is not None)

    def list(self, *items) -> Located:
        values = tuple(item.value for item in items if isinstance(item, Located))
        return Located(values, items[0], items[-1].end_pos)  # from "[" to "]"

    def paren(self, _: Token, value: Located, closing: Token) -> Located:
        return Located(value.value, value.start, closing.end_pos)  # to the closing ")"

    def candidates(self, function: Token, *items) -> Located:
        values = [item for item in items if isinstance(item, Located)]
        found = ast.Candidates(
            str(function).upper(),
            tuple(value.value for value in values),
            tuple(pos(value.start) for value in values),
            pos(function),
        )
        return Located(found, function, items[-1].end_pos)  # to the closing ")"

    def name(self, *parts: Token) -> ast.Name:
        for part in parts:
            check_not_empty(part)
        return ast.Name(tuple(unquote(p) for p in parts), pos(parts[0]), parts[-1].end_pos)

    def model_name(self, name: ast.Name, version: Token | None) -> ast.ModelName:
        if version is None:
            return ast.ModelName(name.parts, name.pos, name.end)
        return ast.ModelName(name.parts, name.pos, version.end_pos, model_version(version))

    def version(self, token: Token) -> Token:
        return token

    def published_model(self, token: Token) -> None:
        raise ParseError(
            f"{token} is a published model's name; sqlml uses the models stored in its "
            "database, by name, and fetches none",
            line=token.line,
            column=token.column,
            hint="name a model trained here (TO TRAIN ... INTO m, then m), or bring a model "
            "file in with SELECT ... TO IMPORT 'file' ... INTO m",
        )

    def bare_word(self, *parts: Token) -> Located:
        return Located(".".join(parts), parts[0], parts[-1].end_pos)

    def number(self, token: Token) -> Located:
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
        return Located(value, token, token.end_pos)

    def string(self, token: Token) -> Located:
        return Located(unquote(token), token, token.end_pos)

    def boolean(self, token: Token) -> Located:
        return Located(token.type == "TRUE", token, token.end_pos)


class _Grammar(NamedTuple):
    """The parser of the kinds' fragments and what its error messages need."""

    lark: Lark
    words: dict[str, str]  # terminal -> how error messages name it
    hints: dict[str, tuple[str, str]]  # a clause's terminal -> (terminal it ends with, hint)
    finals: frozenset[str]  # terminals that may end a statement before its ';'


def fragments() -> tuple[Fragment, ...]:
    """The grammar fragments of the declared statement kinds, each once, in their order."""
    return tuple(dict.fromkeys(k.grammar for k in KINDS.values() if k.grammar is not None))


def _parser() -> Lark:
    """The parser of the declared kinds."""
    return _grammar(fragments()).lark


@cache
def _grammar(parts: tuple[Fragment, ...]) -> _Grammar:
    """The parser of the shared rules and ``parts``, built once per set of fragments."""
    shared = files("sqlml.grammar").joinpath("sqlml.lark").read_text()
    clauses = "|".join(clause for part in parts for clause in part.clauses)
    statement = " | ".join(rule for part in parts for rule in part.statements)
    text = "\n".join(
        [shared.replace("<CLAUSES>", clauses), f"?statement: {statement}"]
        + [part.grammar for part in parts]
    )
    transformer = _ToAst()
    for part in parts:
        for rule, builder in part.builders.items():
            setattr(transformer, rule, builder)
    lark = cached_parser(text, transformer)
    words = {**_TERMINAL_WORDS, **{k: v for part in parts for k, v in part.words.items()}}
    hints = {f"_{clause}": part.end for part in parts if part.end for clause in part.clauses}
    finals = frozenset(terminal for part in parts for terminal in part.finals)
    return _Grammar(lark, words, hints, finals)


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
    grammar = _grammar(fragments())
    try:
        statements = grammar.lark.parse(text)
    except UnexpectedInput as error:
        raise _parse_error(text, error, grammar) from None
    except VisitError as error:  # a transformer callback failed: a bug, not a user error
        raise error.orig_exc from error
    return ast.Program(tuple(s.make(text=text[s.start : s.end].rstrip()) for s in statements))


def check_characters(text: str) -> None:
    """A :class:`ParseError` at the first NUL character or lone surrogate in ``text``."""
    found = UNREADABLE.search(text)
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


def _parse_error(text: str, error: UnexpectedInput, grammar: _Grammar) -> ParseError:
    found = _error_at(text, error, grammar)
    offset = error.pos_in_stream if isinstance(error, UnexpectedCharacters) else None
    if isinstance(error, UnexpectedToken):
        offset = error.token.start_pos
    runaway = _runaway_quote(text, offset) if offset is not None else None
    if runaway is None:
        return found
    line = text.count("\n", 0, runaway) + 1
    return ParseError(
        f"this {'string' if text[runaway] == chr(39) else 'quoted text'} runs over the end of "
        f"a statement (a ';' and a line break): is its closing {text[runaway]} missing?",
        line=line,
        column=runaway - text.rfind("\n", 0, runaway),
        hint=f"close it where it ends; the parser stopped later, at line {found.line}, "
        f"column {found.column}: {found.message}",
    )


# A string, quoted name or comment (quotes inside comments are no quotes).
_QUOTED = re.compile(
    r"'(?:[^'\\]|\\.|'')*+'|\"(?:[^\"\\]|\\.|\"\")*+\"|`(?:[^`]|``)*+`|--[^\n]*"
    r"|/\*.*?\*/",
    re.DOTALL,
)
_STATEMENT_END = re.compile(r";[ \t]*(?:--[^\n]*)?\r?\n")


def _runaway_quote(text: str, offset: int) -> int | None:
    """Where the first quote before ``offset`` opens a string (or quoted name) that holds the
    end of a statement, ';' then a line break: the likely missing closing quote that made the
    parser stumble later. None if there is none."""
    for match in _QUOTED.finditer(text, 0, offset):
        if match.group()[0] in "'\"`" and _STATEMENT_END.search(match.group()):
            return match.start()
    return None


def _error_at(text: str, error: UnexpectedInput, grammar: _Grammar) -> ParseError:
    """The parse error where Lark found it."""
    line, column = error.line, error.column
    if isinstance(error, UnexpectedCharacters):
        return ParseError(_unexpected_text(text[error.pos_in_stream :]), line=line, column=column)
    assert isinstance(error, UnexpectedToken)
    expected = _acceptable(error)
    if error.token.type == "$END":  # just past the last token (not a trailing comment)
        line, column = error.token.end_line, error.token.end_column
        if line is None or column is None:
            line, column = _end_position(text)
        message = f"the statement ends too early; expected {_expected(expected, grammar.words)}"
    elif "SQL_TEXT" in expected and error.token.type == "_TO":
        message = f"{_shown(text[error.token.start_pos :], words=2)} needs a SELECT before it"
    else:
        misread = _misread_keyword(error)
        if misread is not None:
            return misread
        shown = _shown(str(error.token))
        message = f"unexpected {shown}; expected {_expected(expected, grammar.words)}"
    hint = _hint(expected, _clause(error, grammar.hints), grammar.hints, grammar.finals)
    return ParseError(message, line=line, column=column, hint=hint)


# The words that start the sections of an extended clause: names where a name is expected,
# so a missing name or value (or a ',' too many) makes the parser read the next one as one.
_SECTION_WORDS = frozenset({"WITH", "COLUMN", "FOR", "LABEL", "USING", "INTO"})


def _misread_keyword(error: UnexpectedToken) -> ParseError | None:
    """The error at a section's word (LABEL) right before the unexpected token, which the
    parser took for the name or value missing before it (a ',' too many, a '=' without a
    value): reported at the word, as SQLFlow's parser, which never takes it for a name, does.
    None if the error is not after such a word."""
    stack = error.interactive_parser.parser_state.value_stack if error.interactive_parser else []
    word = stack[-1] if stack else None
    if not (isinstance(word, Token) and word.type in ("IDENT", "BARE_WORD")):
        return None
    keyword = str(word).upper()
    if keyword not in _SECTION_WORDS:
        return None
    before = stack[-2] if len(stack) > 1 else None
    kind = before.type if isinstance(before, Token) else None
    where = f"{keyword} (line {word.line}, column {word.column})"
    if kind == "_COMMA":
        expected, hint = "a name after ','", f"{where} was read as a name: remove the ',' before it"
    elif kind == "_EQ":
        expected = f"the value of {stack[-3]}"
        hint = f"{where} was read as the value of {stack[-3]}: write the value after '='"
    else:
        expected = "the estimator" if kind == "_TRAIN" else "a name"
        hint = (
            f"{where} was read as {expected}: write {expected} before it "
            f'(a name that is the word {keyword} is written quoted: "{word}")'
        )
    return ParseError(
        f"unexpected {keyword}; expected {expected}", line=word.line, column=word.column, hint=hint
    )


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


def _expected(names: set[str], named: dict[str, str]) -> str:
    if "SIGNED_NUMBER" in names:  # a value: its parentheses (SQLFlow's (0.5)) go unsaid
        names = names - {"_LPAR"}
    words = sorted({named.get(n, n.lstrip("_")) for n in names})
    if len(words) > 8:
        words = [*words[:8], "..."]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _clause(error: UnexpectedToken, hints: dict[str, tuple[str, str]]) -> str | None:
    """The extended clause (_TRAIN, _PREDICT...) of the statement being parsed, if any."""
    if error.interactive_parser is None:
        return None
    for value in reversed(error.interactive_parser.parser_state.value_stack):
        if isinstance(value, Token) and value.type in hints:
            return value.type
    return None


def _hint(
    expected: set[str],
    clause: str | None,
    hints: dict[str, tuple[str, str]],
    finals: frozenset[str],
) -> str | None:
    if clause in hints:
        keyword, hint = hints[clause]
        if keyword in expected or "_INTO" in expected:
            return hint
    if "_SEMI" in expected and expected <= {"_SEMI", "$END", *finals}:
        return "end each statement with ';'"
    return None


def _end_position(text: str) -> tuple[int, int]:
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    column = len(stripped) - (stripped.rfind("\n") + 1) + 1
    return line, column
