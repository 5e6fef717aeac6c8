"""``PREDICT(model)``, ``PREDICT_PROBA(model, 'class')`` and ``PREDICT_CONTRIBUTION(model,
'feature' [, 'class'])`` in standard SQL: where each call is in a statement's text and what
it names (a model, optionally ``VERSION n``), and the text
with each call stood in for by ``NULL`` of the same length, for sqlglot and the database
check, which know no such function. The handler of standard SQL puts each model's compiled
expression in its place before the statement runs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlml.errors import CheckError
from sqlml.grammar import ast

if TYPE_CHECKING:
    from sqlglot.tokens import Token

_CALL = re.compile(r"\bPREDICT(?:_PROBA|_CONTRIBUTION)?\s*\(", re.IGNORECASE)
FUNCTIONS = ("PREDICT", "PREDICT_PROBA", "PREDICT_CONTRIBUTION")
_NAME = re.compile(r"[^\W\d]")  # how an unquoted name's token starts


@dataclass(frozen=True)
class PredictCall:
    """One call: its offsets in the statement's text (``end`` excluded), the model's name,
    its version (a number or an alias; None: the newest), the class (``PREDICT_PROBA``'s, and
    ``PREDICT_CONTRIBUTION``'s if given) and the feature (``PREDICT_CONTRIBUTION``'s)."""

    start: int
    end: int
    model: str
    version: int | str | None = None
    label: str | None = None
    feature: str | None = None


def predict_calls(text: str, dialect: str, pos: ast.Position) -> list[PredictCall]:
    """The calls in ``text`` (a statement starting at ``pos`` in the program), in order; a
    :class:`CheckError` at a call that is not written ``PREDICT(m [VERSION v])``,
    ``PREDICT_PROBA(m [VERSION v], 'class')`` or ``PREDICT_CONTRIBUTION(m [VERSION v],
    'feature' [, 'class'])``. Text sqlglot cannot read holds none (the SQL check says what
    is wrong)."""
    if not _CALL.search(text):  # most SQL: sqlglot's tokenizer stays unused
        return []
    import sqlglot
    from sqlglot.errors import TokenError
    from sqlglot.tokens import TokenType

    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except TokenError:
        return []
    calls = []
    for i, token in enumerate(tokens):
        name = token.text.upper()
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if name not in FUNCTIONS or token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
            continue
        if following is None or following.token_type != TokenType.L_PAREN:
            continue
        if i > 0 and tokens[i - 1].token_type == TokenType.DOT:  # schema.predict(...)
            continue
        calls.append(_call(tokens, i, text, pos))
    return calls


_VERSION = "[VERSION n | alias]"
_FORMS = {
    "PREDICT": f"PREDICT(model {_VERSION})",
    "PREDICT_PROBA": f"PREDICT_PROBA(model {_VERSION}, 'class')",
    "PREDICT_CONTRIBUTION": f"PREDICT_CONTRIBUTION(model {_VERSION}, 'feature' [, 'class'])",
}
_TAKES = {
    "PREDICT": "a model's name",
    "PREDICT_PROBA": "a model's name and a class",
    "PREDICT_CONTRIBUTION": "a model's name, a feature and, for several classes, a class",
}


def _call(tokens: list[Token], at: int, text: str, pos: ast.Position) -> PredictCall:
    """The call whose function name is ``tokens[at]``."""
    from sqlglot.tokens import TokenType

    function = tokens[at].text.upper()

    def wrong(index: int) -> CheckError:
        where = tokens[min(index, len(tokens) - 1)]
        line, column = position(text, where.start, pos)
        return CheckError(
            f"{function} takes {_TAKES[function]}",
            line=line,
            column=column,
            hint=f"write {_FORMS[function]}",
        )

    def string(index: int) -> str:
        """The text of the string ``tokens[index + 1]``, after a comma at ``index``."""
        if index + 1 >= len(tokens) or tokens[index].token_type != TokenType.COMMA:
            raise wrong(index)
        if tokens[index + 1].token_type != TokenType.STRING:
            raise wrong(index + 1)
        return tokens[index + 1].text

    i, parts = at + 2, []
    while True:  # the model's name: names joined by dots
        name = tokens[i] if i < len(tokens) else None
        if name is None or name.token_type == TokenType.STRING or not _NAME.match(name.text):
            raise wrong(i)
        parts.append(tokens[i].text)
        i += 1
        if i >= len(tokens) or tokens[i].token_type != TokenType.DOT:
            break
        i += 1
    version: int | str | None = None
    if i + 1 < len(tokens) and tokens[i].text.upper() == "VERSION":
        given = tokens[i + 1]
        if given.text.isdigit():
            version = int(given.text)
        elif given.token_type == TokenType.IDENTIFIER or (
            given.token_type != TokenType.STRING and _NAME.match(given.text)
        ):
            version = given.text  # an alias
        else:
            raise wrong(i + 1)
        i += 2
    label = feature = None
    if function == "PREDICT_PROBA":
        label, i = string(i), i + 2
    elif function == "PREDICT_CONTRIBUTION":
        feature, i = string(i), i + 2
        if i < len(tokens) and tokens[i].token_type == TokenType.COMMA:
            label, i = string(i), i + 2
    if i >= len(tokens) or tokens[i].token_type != TokenType.R_PAREN:
        raise wrong(i)
    model = ".".join(parts)
    return PredictCall(tokens[at].start, tokens[i].end + 1, model, version, label, feature)


def replaced(text: str, calls: list[PredictCall], sql: Callable[[PredictCall], str]) -> str:
    """``text`` with each of its ``calls`` replaced by ``sql(call)``."""
    pieces, at = [], 0
    for call in calls:
        pieces += [text[at : call.start], sql(call)]
        at = call.end
    return "".join([*pieces, text[at:]])


def stand_in(text: str, call: PredictCall) -> str:
    """``NULL`` padded to the call's length, its lines kept: offsets, lines and columns stay
    those of the text as written."""
    return "NULL" + re.sub(r"[^\n]", " ", text[call.start + 4 : call.end])


def neutral(text: str, calls: list[PredictCall]) -> str:
    """``text`` with each call stood in for by ``NULL`` (:func:`stand_in`)."""
    return replaced(text, calls, lambda call: stand_in(text, call))


def position(text: str, offset: int, pos: ast.Position) -> tuple[int, int]:
    """The line and column in the program of ``offset`` in ``text``, which starts at
    ``pos``."""
    line = text.count("\n", 0, offset)
    column = offset - text.rfind("\n", 0, offset)
    return pos.line + line, column + (pos.column - 1 if line == 0 else 0)


def without_calls(text: str, dialect: str) -> str:
    """``text`` with its calls stood in for (:func:`neutral`); as it is when a call is
    malformed (the check of the statement says where)."""
    try:
        return neutral(text, predict_calls(text, dialect, ast.Position(1, 1, 0)))
    except CheckError:
        return text


_LASTING = ("VIEW", "MACRO", "FUNCTION")  # definitions the database keeps for later queries


def defines_lasting(text: str, dialect: str) -> bool:
    """Whether ``text`` creates what the database keeps and runs later, after sqlml's
    process has ended (a view, a macro): its calls must be SQL of the database's own."""
    import sqlglot
    from sqlglot.errors import TokenError

    try:
        words = [token.text.upper() for token in sqlglot.tokenize(text, read=dialect)[:6]]
    except TokenError:
        return False
    if not words or words[0] != "CREATE":
        return False
    kind = next((w for w in words[1:] if w not in ("OR", "REPLACE", "TEMP", "TEMPORARY")), "")
    return kind in _LASTING


_ITEM_ENDS = {"FROM", "INTO", "WHERE", "GROUP", "ORDER", "LIMIT", "UNION", "EXCEPT", "INTERSECT"}
_CLAUSES = _ITEM_ENDS | {"ON", "HAVING", "WINDOW", "QUALIFY", "SET", "VALUES", "BY", "WHEN"}


@dataclass(frozen=True)
class SelectItem:
    """A call that is a whole item of a SELECT list: the name it is given (None: none), the
    offset where the item ends (after its name), and whether the list is the outermost
    SELECT's, whose rows the statement returns."""

    name: str | None  # as the database reads it (unquoted)
    written: str | None  # the name as written (quoted or not)
    end: int
    outermost: bool


def select_items(
    text: str, dialect: str, calls: list[PredictCall]
) -> dict[PredictCall, SelectItem]:
    """The calls that are a whole item of a SELECT list (``SELECT id, PREDICT(m) [AS p]
    FROM t``)."""
    import sqlglot
    from sqlglot.tokens import TokenType

    if not calls:
        return {}
    tokens = sqlglot.tokenize(text, read=dialect)
    starts = {token.start: i for i, token in enumerate(tokens)}
    ends = {token.end + 1: i for i, token in enumerate(tokens)}
    query = bool(tokens) and tokens[0].text.upper() in ("SELECT", "WITH")
    items = {}
    for call in calls:
        first, last = starts.get(call.start), ends.get(call.end)
        if first is None or last is None or not _in_select_list(tokens, first):
            continue
        name, written, end, at = None, None, call.end, last + 1
        if at < len(tokens) and tokens[at].text.upper() == "AS":
            at += 1
        following = tokens[at] if at < len(tokens) else None
        if following is not None and (
            following.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
            and following.text.upper() not in _ITEM_ENDS
        ):
            name, end, at = following.text, following.end + 1, at + 1
            written = text[following.start : end]
        elif at != last + 1:  # AS and no name
            continue
        after = tokens[at] if at < len(tokens) else None
        if (
            after is None
            or after.token_type
            in (
                TokenType.COMMA,
                TokenType.R_PAREN,
                TokenType.SEMICOLON,
            )
            or after.text.upper() in _ITEM_ENDS
        ):
            depth = sum(
                (t.token_type == TokenType.L_PAREN) - (t.token_type == TokenType.R_PAREN)
                for t in tokens[:first]
            )
            items[call] = SelectItem(name, written, end, query and depth == 0)
    return items


def _in_select_list(tokens: list[Token], at: int) -> bool:
    """Whether ``tokens[at]`` starts an item of a SELECT list: after the SELECT (or
    DISTINCT) or a comma of the list, at the list's depth of parentheses."""
    from sqlglot.tokens import TokenType

    before = tokens[at - 1] if at else None
    if before is None or (
        before.token_type != TokenType.COMMA and before.text.upper() not in ("SELECT", "DISTINCT")
    ):
        return False
    depth = 0
    for token in reversed(tokens[:at]):
        if token.token_type == TokenType.R_PAREN:
            depth += 1
        elif token.token_type == TokenType.L_PAREN:
            if depth == 0:
                return False  # inside a function's arguments or a list of values
            depth -= 1
        elif depth == 0 and token.text.upper() == "SELECT":
            return True
        elif depth == 0 and token.text.upper() in _CLAUSES:
            return False
    return False
