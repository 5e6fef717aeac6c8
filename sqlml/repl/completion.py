"""Tab completion: keywords, tables, columns, models, estimators and their WITH attributes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from sqlml.grammar.recovery import statement_ends
from sqlml.repl.catalog import Catalog
from sqlml.repl.keywords import KEYWORDS
from sqlml.repl.meta_commands import COMMANDS
from sqlml.repl.statements import current_statement, is_meta_command
from sqlml.semantics.attributes import Attr
from sqlml.semantics.estimators import ESTIMATORS, USER_MODEL_ATTRIBUTES, find_estimator
from sqlml.statements import KINDS, StatementKind, resolve

_WORD = re.compile(r"[\w$.:/]*$")  # a name, dotted name or attribute value being typed
# Tokens of a statement: strings, quoted names and comments (skipped), words, symbols.
_TOKENS = re.compile(
    r"'(?:[^'\\]|\\.|'')*'?|\"(?:[^\"]|\"\")*\"?|`(?:[^`]|``)*`?|--[^\n]*|/\*.*?(?:\*/|$)"
    r"|[\w$.:/]+|\S",
    re.DOTALL,
)
_TABLE_WORDS = ("FROM", "JOIN", "INTO", "TABLE", "UPDATE")


class SqlmlCompleter(Completer):
    """Completes from sqlml's grammar and schemas and the ``catalog`` of the database."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def get_completions(self, document: Document, _: CompleteEvent) -> Iterator[Completion]:
        text = document.text_before_cursor
        word = _WORD.search(text).group()  # type: ignore[union-attr] (it matches empty)
        if is_meta_command(text):
            yield from self._meta(text.lstrip(), word)
            return
        statement = current_statement(text[: len(text) - len(word)])
        if statement_ends(statement)[1]:  # inside a string, quoted name or comment
            return
        tokens = [
            token
            for token in _TOKENS.findall(statement)
            if token[0] not in "'\"`" and not token.startswith(("--", "/*"))
        ]
        yield from _matching(word, self._candidates(tokens, word))

    def _meta(self, line: str, word: str) -> Iterator[Completion]:
        if " " not in line:
            name = line.rstrip()
            for command, (args, doc) in COMMANDS.items():
                if command.startswith(name):
                    meta = f"{args}  {doc}" if args else doc
                    yield Completion(command, -len(name), display_meta=meta)
        elif line.split()[0] in ("\\d", "\\dt"):
            yield from _matching(word, self._tables())

    def _candidates(self, tokens: list[str], word: str) -> Iterable[tuple[str, str]]:
        upper = [token.upper() for token in tokens]
        last = upper[-1] if upper else ""
        clause = _clause_start(upper)
        if clause is not None:
            return self._in_clause(tokens[clause:], upper[clause:])
        if any(list(words) == upper for k in KINDS.values() for words in k.completion.models_after):
            return self._models()
        if last in _TABLE_WORDS:
            return self._tables()
        table, dot, _ = word.rpartition(".")
        if dot and table.lower() in {name.lower() for name in self.catalog.tables}:
            return ((f"{table}.{c}", "column") for c in self.catalog.columns({table.lower()}))
        return [*_keywords(word), *self._tables(), *self._columns(tokens)]

    def _in_clause(self, tokens: list[str], upper: list[str]) -> Iterable[tuple[str, str]]:
        """After ``TO <clause>``: ``tokens`` start at the clause's word."""
        kind, last = _clauses()[upper[0]], upper[-1]
        if len(upper) == 1:
            return self._following(kind, upper[0])
        sections = {w for k in _clauses().values() if k.grammar for w in k.grammar.sections}
        section = next((word for word in reversed(upper) if word in sections), None)
        if section == "WITH" and last in ("WITH", ","):
            schema = _attributes(kind, tokens[1])
            return ((name, attr.doc) for name, attr in schema.items())
        if section == "WITH" and last == "=":
            attr = _attributes(kind, tokens[1]).get(tokens[-2])
            return _values(attr) if attr is not None else ()
        if last in ("USING", "INTO"):
            return self._following(kind, last)
        if section in ("COLUMN", "LABEL") and last in ("COLUMN", "LABEL", ",", "("):
            return self._columns(tokens)
        return _keywords("")

    def _following(self, kind: StatementKind, word: str) -> Iterable[tuple[str, str]]:
        """What follows ``word`` in a statement of ``kind``, as the kind declares it."""
        what = kind.completion.after.get(word)
        if isinstance(what, tuple):
            meta, words = what
            return ((name, meta) for name in words)
        if what == "estimator":
            return ((name, e.doc) for name, e in ESTIMATORS.items())
        if what == "model":
            return self._models()
        return self._tables() if what == "table" else _keywords("")

    def _tables(self) -> Iterable[tuple[str, str]]:
        return ((name, "table") for name in self.catalog.tables)

    def _models(self) -> Iterable[tuple[str, str]]:
        return ((name, "model") for name in self.catalog.models)

    def _columns(self, tokens: list[str]) -> Iterable[tuple[str, str]]:
        """The columns of the tables ``tokens`` name, or of every table if they name none."""
        named = {token.lower() for token in tokens} & {t.lower() for t in self.catalog.tables}
        columns = self.catalog.columns(named or None)
        return ((name, f"column of {', '.join(tables)}") for name, tables in columns.items())


def _clauses() -> dict[str, StatementKind]:
    """The kinds of ``<select> TO <clause>`` statements, by their clause's word."""
    return {clause: k for k in KINDS.values() if k.grammar for clause in k.grammar.clauses}


def _clause_start(upper: list[str]) -> int | None:
    """Where the last ``TO <clause>`` names its clause, if anywhere."""
    clauses = _clauses()
    starts = [i for i in range(1, len(upper)) if upper[i - 1] == "TO" and upper[i] in clauses]
    return starts[-1] if starts else None


def _attributes(kind: StatementKind, estimator: str) -> dict[str, Attr]:
    """The WITH attributes of a kind: its schema, or its estimator's (TO TRAIN)."""
    if kind.attributes is not None:
        return resolve(kind.attributes)  # type: ignore[return-value]
    found = find_estimator(estimator)
    if found is not None:
        return found.attributes
    if "." in estimator:  # a user's model builder, module.function
        return USER_MODEL_ATTRIBUTES
    return {name: a for e in ESTIMATORS.values() for name, a in e.attributes.items()}


def _values(attr: Attr) -> Iterable[tuple[str, str]]:
    if attr.choices:
        return ((choice, attr.name) for choice in attr.choices)
    if attr.type == "bool":
        return (("TRUE", attr.name), ("FALSE", attr.name))
    return ()


def _keywords(word: str) -> Iterable[tuple[str, str]]:
    """Keywords in the case the user types them in."""
    lower = bool(word) and word.islower()
    return ((keyword.lower() if lower else keyword, "keyword") for keyword in KEYWORDS)


def _matching(word: str, candidates: Iterable[tuple[str, str]]) -> Iterator[Completion]:
    prefix = word.lower()
    seen: set[str] = set()
    for text, meta in candidates:
        if text.lower().startswith(prefix) and text not in seen:
            seen.add(text)
            yield Completion(text, -len(word), display_meta=meta)
