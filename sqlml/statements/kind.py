"""The declaration of a statement kind: what every part of sqlml needs to know about it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import MISSING, dataclass, field
from functools import cache
from typing import Any

from sqlml import imports, ir


@dataclass(frozen=True)
class Effects:
    """What a statement reads and writes, named by the IR fields that hold it.

    A field is an attribute of the IR statement, or ``field.key`` for a key of a dict field
    (``attributes.validation.select``), or ``field[]`` for each item of a list field (TO RUN's
    INTO ``tables[]``); a field that is None or missing names nothing.
    """

    queries: tuple[str, ...] = ()  # SQL queries it runs: it reads their tables
    reads_models: tuple[str, ...] = ()
    writes_models: tuple[str, ...] = ()  # models it (re)creates
    drops_models: tuple[str, ...] = ()  # models it deletes
    alters_models: tuple[str, ...] = ()  # models it changes but keeps (aliases, retention)
    writes_tables: tuple[str, ...] = ()  # tables (lists of name parts) it writes
    writes_files: tuple[str, ...] = ()  # files (paths, relative: from the program) it writes
    # files it reads from the machine running it (``sqlml ui --no-file-access`` refuses it)
    reads_files: tuple[str, ...] = ()
    replace: str | None = None  # the flag letting it replace a table sqlml did not write
    reads_all_models: bool = False
    standard_sql: bool = False  # its text is SQL: sqlglot tells what it reads and writes

    def values(self, statement: ir.Statement, fields: tuple[str, ...]) -> Iterator[Any]:
        """The values of ``fields`` (one of this object's tuples) in ``statement``."""
        for name in fields:
            if name.endswith("[]"):
                yield from _field(statement, name[:-2]) or ()
                continue
            value = _field(statement, name)
            if value is not None:
                yield value

    def may_replace(self, statement: ir.Statement) -> bool:
        """Whether the statement may replace a table sqlml did not write."""
        return bool(self.replace and _field(statement, self.replace))

    def target(self, statement: ir.Statement) -> str:
        """The first model or table ``statement`` writes (its name's parts joined by dots),
        else ``""``: what its progress is named for."""
        for value in self.values(statement, (*self.writes_models, *self.writes_tables)):
            return value if isinstance(value, str) else ".".join(value)
        return ""

    @property
    def writes(self) -> bool:
        """Whether statements of this kind may create, change or drop a table or model."""
        return bool(
            self.writes_models or self.drops_models or self.alters_models or self.writes_tables
        )


@dataclass(frozen=True)
class Completion:
    """What the REPL completes in a statement of the kind.

    ``after``: a keyword of its clause (the clause's word itself: right after it) -> what
    follows it: ``"model"``, ``"table"`` or ``"estimator"`` (names from the database or the
    estimators), or ``(what, words)`` for words of its own. ``models_after``: the words that
    open a statement followed by a model's name (``DROP MODEL``).
    """

    after: Mapping[str, str | tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    models_after: tuple[tuple[str, ...], ...] = ()


class _Declared:
    """A declaration's field given as the object itself or as its ``module:name`` path,
    imported when first read: a kind's declaration loads neither its AST node, its IR class
    nor its grammar until something asks for them."""

    def __init__(self, default: Any = MISSING) -> None:
        self.default = default

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, kind: StatementKind | None, owner: type | None = None) -> Any:
        if kind is None:  # the dataclass asks for the field's default
            if self.default is MISSING:
                raise AttributeError(self.name)
            return self.default
        value = kind.__dict__[self.name]
        if isinstance(value, str):
            value = kind.__dict__[self.name] = resolve(value)
        return value

    def __set__(self, kind: StatementKind, value: Any) -> None:
        kind.__dict__[self.name] = value


@dataclass(frozen=True)
class StatementKind:
    """One kind of statement, declared once; everything else reads this declaration.

    ``analysis``, ``handler`` and ``attributes`` are ``module:name`` paths, imported when first
    used, so that reading the table loads neither the checks nor the runtime's libraries;
    ``ir``, ``syntax`` and ``grammar`` may be given as such paths too (the built-in kinds' are),
    imported when first read.
    """

    name: str  # the IR kind, as in ``ir.Statement.kind``
    ir: _Declared = _Declared()  # type[ir.Statement]
    handler: str  # runs it: (statement, context) -> sqlml.runtime.outcome.Outcome
    step: str | None  # the step zoo function (sqlml.steps.<step>) making its workflow step
    # The AST node it lowers (type); None: another kind's analysis makes it.
    syntax: _Declared = _Declared(None)
    grammar: _Declared = _Declared(None)  # its Fragment: rules and builders (may be shared)
    analysis: str | None = None  # (AST node, step id prefix, sqlglot dialect) -> IR statement
    attributes: str | None = None  # its WITH clause's schema (name -> Attr), if fixed
    effects: Effects = field(default_factory=Effects)
    # (statement, datasource) -> bool, by its module:name path: whether what a step of the
    # kind did is kept though the outputs its effects name are gone, so that a resumed run
    # need not run it again (a search's trials: their models, until the search keeps the
    # best). None: the outputs alone tell.
    kept: str | None = None
    # (statement, datasource) -> str, by its module:name path: undoes what a step of the kind
    # leaves behind when the run's cancellation stops it (a search's trials, the search never
    # ending), saying what it did for the step's log ("" for nothing). None: nothing to undo.
    on_cancel: str | None = None
    fans_out: bool = False  # the step function takes the workflow and adds several steps
    completion: Completion = field(default_factory=Completion)
    # Words of which every statement of the kind holds one (TO TRAIN's TRAIN), as the grammar
    # reads them, case aside: a program holding none of any kind's is standard SQL, which
    # sqlml.grammar.plain splits without building the grammar. A kind with a grammar and no
    # keywords makes every program go through the grammar.
    keywords: tuple[str, ...] = ()

    def declared(self, name: str) -> Any:
        """The field ``name`` as declared: its object, its ``module:name`` path, or None."""
        return self.__dict__[name]

    def lowers(self, node: object) -> bool:
        """Whether ``node`` is this kind's AST node (without importing the kind's syntax)."""
        declared = self.declared("syntax")
        if isinstance(declared, str):
            module, _, name = declared.partition(":")
            return type(node).__module__ == module and type(node).__qualname__ == name
        return declared is type(node)


@cache
def resolve(path: str) -> Callable[..., Any]:
    """The function a ``module:function`` path names."""
    module, _, name = path.partition(":")
    return getattr(imports.load(module), name)


def _field(statement: ir.Statement, name: str) -> Any:
    attribute, _, key = name.partition(".")
    value = getattr(statement, attribute, None)
    return value.get(key) if key and value is not None else value
