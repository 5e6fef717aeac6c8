"""Completion: keywords, tables, columns, models, estimators and their WITH attributes.

What is offered depends on where the cursor is, the likeliest first: the columns of the
statement's own tables after ``WHERE``, ``LABEL``..., the statement kinds after ``TO``. Names
that start with the word typed come first, in that order; then those holding its characters
in order (``sepwid`` finds ``sepal_width``), the closest to their start and tightest first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples

from sqlml.grammar.recovery import statement_ends
from sqlml.models.registry import families
from sqlml.repl.catalog import Catalog
from sqlml.repl.keywords import FEATURE_FUNCTIONS, KEYWORDS
from sqlml.repl.meta_commands import COMMANDS, FILE_COMMANDS
from sqlml.repl.statements import current_statement, is_meta_command
from sqlml.semantics.attributes import Attr
from sqlml.semantics.estimators import ESTIMATORS, find_estimator
from sqlml.semantics.predict_calls import FUNCTIONS
from sqlml.statements import KINDS, StatementKind, resolve

Candidates = Iterable[tuple[str, str]]  # (text, its one-line description)

_WORD = re.compile(r"[\w$.:/]*$")  # a name, dotted name or attribute value being typed
_NAME = re.compile(r"[A-Za-z_]\w*")
# Tokens of a statement: strings, quoted names and comments (skipped), words, symbols.
_TOKENS = re.compile(
    r"'(?:[^'\\]|\\.|'')*'?|\"(?:[^\"]|\"\")*\"?|`(?:[^`]|``)*`?|--[^\n]*|/\*.*?(?:\*/|$)"
    r"|[\w$.:/]+|\S",
    re.DOTALL,
)
_TABLE_WORDS = ("FROM", "JOIN", "INTO", "TABLE", "UPDATE")
# Words after which an expression starts: its columns are likelier than keywords there.
_EXPRESSION_WORDS = {
    "SELECT", "WHERE", "AND", "OR", "NOT", "ON", "BY", "HAVING", "DISTINCT", "CASE", "WHEN",
    "THEN", "ELSE", "SET", "(", "=", "<", ">", "+", "-", "/", "%",
}  # fmt: skip
# The SQL clauses a "," continues: a list of tables after FROM and JOIN, else of expressions.
_SQL_CLAUSES = {"SELECT", "FROM", "JOIN", "WHERE", "BY", "HAVING", "ON", "SET", "VALUES", "INTO"}
_FIRST_CLAUSES = ("TRAIN", "PREDICT", "EVALUATE", "EXPLAIN")  # after TO, the likeliest first


class SqlmlCompleter(Completer):
    """Completes from sqlml's grammar and schemas and the ``catalog`` of the database.

    While typing (prompt_toolkit's ``complete_while_typing``), a blank offers completions only
    where a name is expected (a table after ``FROM``, a column after ``LABEL``, an estimator
    after ``TO TRAIN``...), never a menu of every keyword after each space; Tab always does.
    """

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        word = _WORD.search(text).group()  # type: ignore[union-attr] (it matches empty)
        if is_meta_command(text):
            yield from self._meta(text.lstrip(), word, event)
            return
        statement = current_statement(text[: len(text) - len(word)])
        if statement_ends(statement)[1]:  # inside a string, quoted name or comment
            return
        tokens, later = _tokens(statement), _sql_after(document.text_after_cursor)
        found = self._expected(tokens, word, later)
        if found is None:
            if not word and event.text_inserted:
                return
            found = self._anything(tokens, word, later)
        yield from _matching(word, found)

    def _meta(self, line: str, word: str, event: CompleteEvent) -> Iterator[Completion]:
        if " " not in line:
            name = line.rstrip()
            for command, (args, doc) in COMMANDS.items():
                if command.startswith(name):
                    meta = f"{args}  {doc}" if args else doc
                    yield Completion(command, -len(name), display_meta=meta)
        elif line.split()[0] in ("\\d", "\\dt", "\\d+", "\\dt+"):
            yield from _matching(word, self._tables())
        elif line.split()[0] in FILE_COMMANDS:
            typed = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
            yield from PathCompleter(expanduser=True).get_completions(Document(typed), event)

    def _expected(self, tokens: list[str], word: str, later: list[str]) -> Candidates | None:
        """What is expected at the cursor, the likeliest first; None: nothing in particular.
        ``later``: the tokens of the statement's SQL after the cursor (its FROM, say)."""
        upper = [token.upper() for token in tokens]
        last = upper[-1] if upper else ""
        clause = _clause_start(upper)
        if clause is not None:
            return self._in_clause(tokens, upper, clause)
        if len(upper) > 1 and upper[-2] in FUNCTIONS and last == "(":  # standard SQL's call
            return self._models()
        if any(list(words) == upper for k in KINDS.values() for words in k.completion.models_after):
            return self._models()
        if last == "TO":
            return _statement_kinds(word)
        listed_in = _sql_clause(upper) if last == "," else ""  # the clause a "," continues
        if last in _TABLE_WORDS or listed_in in ("FROM", "JOIN"):
            return self._tables()
        prefix, dot, _ = word.rpartition(".")
        if dot:
            return self._qualified(tokens, prefix)
        if last in _EXPRESSION_WORDS or listed_in:
            return [*self._columns(tokens + later), *_keywords(word), *self._tables()]
        return None

    def _anything(self, tokens: list[str], word: str, later: list[str]) -> Candidates:
        """Every keyword and name, where nothing in particular is expected: the keywords first
        (a clause's own sections before the others), then tables and columns."""
        upper = [token.upper() for token in tokens]
        clause = _clause_start(upper)
        if clause is not None:
            grammar = _clauses()[upper[clause]].grammar
            return _keywords(word, grammar.sections if grammar else ())
        return [*_keywords(word), *self._tables(), *self._columns(tokens + later)]

    def _in_clause(self, tokens: list[str], upper: list[str], start: int) -> Candidates | None:
        """After ``TO <clause>``, whose word is ``tokens[start]``."""
        kind, last, words = _clauses()[upper[start]], upper[-1], upper[start:]
        if len(words) == 1:
            return self._following(kind, words[0])
        sections = {w for k in _clauses().values() if k.grammar for w in k.grammar.sections}
        section = next((word for word in reversed(words) if word in sections), None)
        if section == "WITH" and last in ("WITH", ","):
            schema = _attributes(kind, tokens[start + 1])  # those sqlml applies
            return ((name, attr.doc) for name, attr in schema.items() if attr.ignored is None)
        if section == "WITH" and last == "=":
            attr = _attributes(kind, tokens[start + 1]).get(tokens[-2])
            return _values(attr) if attr is not None else ()
        if last in ("USING", "INTO"):
            return self._following(kind, last)
        if section in ("COLUMN", "LABEL") and last in ("COLUMN", "LABEL", ",", "("):
            columns = self._columns(tokens[: start - 1], of_result=True)
            if section == "COLUMN" and last != "(":
                return [*columns, *((name, "feature column") for name in FEATURE_FUNCTIONS)]
            return columns
        return None

    def _following(self, kind: StatementKind, word: str) -> Candidates | None:
        """What follows ``word`` in a statement of ``kind``, as the kind declares it."""
        what = kind.completion.after.get(word)
        if isinstance(what, tuple):
            meta, words = what
            return ((name, meta) for name in words)
        if what == "estimator":
            return ((name, e.doc) for name, e in ESTIMATORS.items())
        if what == "model":
            return self._models()
        return self._tables() if what == "table" else None

    def _tables(self) -> Candidates:
        return ((name, "table") for name in self.catalog.tables)

    def _models(self) -> Candidates:
        return ((name, "model") for name in self.catalog.models)

    def _columns(self, tokens: list[str], of_result: bool = False) -> list[tuple[str, str]]:
        """The columns of the tables ``tokens`` name, in the order they name them; of every
        table if they name none the catalog knows (a file, a CTE, another schema's table).

        Other tables' columns are left out when the statement's tables are known, as pgcli
        does: after ``LABEL`` or in a ``WHERE``, another table's column can only end in an
        error, and would push the right ones down the menu (the columns of the catalog's first
        tables came first before). With ``of_result`` (after ``COLUMN`` and ``LABEL``), the
        names the SELECT list gives with ``AS`` come first: they are columns of the result too.
        """
        columns = self.catalog.columns(self.catalog.named(tokens) or None)
        found = [(name, f"column of {', '.join(tables)}") for name, tables in columns.items()]
        aliases = _aliases(tokens) if of_result else []
        return [*((name, "column of the SELECT") for name in aliases), *found]

    def _qualified(self, tokens: list[str], prefix: str) -> Candidates | None:
        """``prefix.column`` for the columns of the table ``prefix`` names, or is an alias of."""
        table = _table_aliases(tokens, self.catalog).get(prefix.lower())
        found = self.catalog.named([prefix]) if table is None else [table]
        if not found:
            return None
        return ((f"{prefix}.{column}", "column") for column in self.catalog.columns(found))


def _tokens(statement: str) -> list[str]:
    """The words and symbols of ``statement``, without its strings, quoted names, comments."""
    return [
        token
        for token in _TOKENS.findall(statement)
        if token[0] not in "'\"`" and not token.startswith(("--", "/*"))
    ]


def _sql_after(text: str) -> list[str]:
    """The tokens after the cursor up to the end of the statement or of its SQL (``TO``)."""
    ends, _ = statement_ends(text)
    tokens = _tokens(text[: ends[0]] if ends else text)
    upper = [token.upper() for token in tokens]
    return tokens[: upper.index("TO")] if "TO" in upper else tokens


def _clauses() -> dict[str, StatementKind]:
    """The kinds of ``<select> TO <clause>`` statements, by their clause's word."""
    return {clause: k for k in KINDS.values() if k.grammar for clause in k.grammar.clauses}


def _statement_kinds(word: str) -> Candidates:
    """The clause words that may follow ``TO``, in the case of ``word``: TRAIN, PREDICT,
    EVALUATE, EXPLAIN first."""
    clauses, lower = _clauses(), bool(word) and word.islower()
    ranked = [clause for clause in dict.fromkeys([*_FIRST_CLAUSES, *clauses]) if clause in clauses]
    return ((c.lower() if lower else c, f"{clauses[c].name} statement") for c in ranked)


def _clause_start(upper: list[str]) -> int | None:
    """Where the last ``TO <clause>`` names its clause, if anywhere."""
    clauses = _clauses()
    starts = [i for i in range(1, len(upper)) if upper[i - 1] == "TO" and upper[i] in clauses]
    return starts[-1] if starts else None


def _sql_clause(upper: list[str]) -> str:
    """The SQL clause the cursor is in (FROM, WHERE...), or "" before any."""
    return next((word for word in reversed(upper) if word in _SQL_CLAUSES), "")


def _aliases(tokens: list[str]) -> list[str]:
    """The names the outermost SELECT list gives with ``AS``."""
    depth, names = 0, []
    for i, token in enumerate(tokens[:-1]):
        depth += (token == "(") - (token == ")")
        if depth == 0 and token.upper() == "FROM":
            break
        following = tokens[i + 1]  # not FROM: in AS "quoted name" FROM, quotes were dropped
        if depth == 0 and token.upper() == "AS" and following.upper() != "FROM":
            names += [following] if _NAME.fullmatch(following) else []
    return names


def _table_aliases(tokens: list[str], catalog: Catalog) -> dict[str, str]:
    """Alias (lower case) -> the table it names, as in ``FROM iris_train [AS] t``."""
    spelled, found = catalog.spelling(), {}
    for i, token in enumerate(tokens):
        following = tokens[i + 1 : i + 3]
        if following[:1] and following[0].upper() == "AS":
            following = following[1:]
        alias = following[0] if following else ""
        table = spelled.get(token.lower())
        if table and _NAME.fullmatch(alias) and alias.upper() not in KEYWORDS:
            found[alias.lower()] = table
    return found


def _attributes(kind: StatementKind, estimator: str) -> dict[str, Attr]:
    """The WITH attributes of a kind: its schema, or its estimator's (TO TRAIN)."""
    if kind.attributes is not None:
        return resolve(kind.attributes)  # type: ignore[return-value]
    found = find_estimator(estimator)
    if found is not None:
        return found.attributes
    if "." in estimator:  # a user's model builder, module.function: its family's attributes
        offered = (known.builder_attributes() for known in families().values())
        builders = next(filter(None, offered), None)
        if builders is not None:
            return dict(builders)
    return {name: a for e in ESTIMATORS.values() for name, a in e.attributes.items()}


def _values(attr: Attr) -> Candidates:
    if attr.choices:
        return ((choice, attr.name) for choice in attr.choices)
    if attr.type == "bool":
        return (("TRUE", attr.name), ("FALSE", attr.name))
    return ()


def _keywords(word: str, first: Iterable[str] = ()) -> Candidates:
    """Keywords in the case the user types them in, those of ``first`` first."""
    lower = bool(word) and word.islower()
    ranked = dict.fromkeys([*first, *KEYWORDS])
    return ((keyword.lower() if lower else keyword, "keyword") for keyword in ranked)


def _matching(word: str, candidates: Candidates) -> Iterator[Completion]:
    """The candidates ``word`` starts, in their order; then those holding its characters in
    order from two characters on, ranked by where and how tightly they match."""
    prefix = word.lower()
    fuzzy = _fuzzy(word) if len(word) > 1 else None
    seen: set[str] = set()
    loose: list[tuple[tuple[int, int], Completion]] = []
    for text, meta in candidates:
        if text in seen:
            continue
        if text.lower().startswith(prefix):
            seen.add(text)
            yield Completion(text, -len(word), display_meta=meta)
        elif fuzzy is not None and (spans := [m.span(1) for m in fuzzy.finditer(text)]):
            seen.add(text)
            start, end = min(spans, key=lambda span: (span[0], span[1] - span[0]))
            shown = _highlighted(text, word, start, end)
            loose.append(((start, end - start), Completion(text, -len(word), shown, meta)))
    loose.sort(key=lambda rank_completion: rank_completion[0])
    yield from (completion for _, completion in loose)


def _fuzzy(word: str) -> re.Pattern[str]:
    """Matches where ``word``'s characters come in order (the lookahead finds overlaps)."""
    return re.compile(f"(?=({'.*?'.join(map(re.escape, word))}))", re.IGNORECASE)


def _highlighted(text: str, word: str, start: int, end: int) -> StyleAndTextTuples:
    """``text`` with its span matching ``word`` and the matched characters marked, as
    prompt_toolkit's fuzzy completer shows them."""
    shown: StyleAndTextTuples = [("class:fuzzymatch.outside", text[:start])]
    wanted = list(word.lower())
    for char in text[start:end]:
        hit = bool(wanted) and char.lower() == wanted[0]
        wanted = wanted[1:] if hit else wanted
        shown.append(("class:fuzzymatch.inside" + (".character" if hit else ""), char))
    shown.append(("class:fuzzymatch.outside", text[end:]))
    return shown
