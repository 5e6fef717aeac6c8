"""Attribute schemas: every WITH attribute an estimator takes, with its type, default and range.

The schemas are the single source for checking WITH clauses, for completion and for the
reference documentation. An attribute may also be written under another library's name
(``aliases``: SQLFlow's, XGBoost's scikit-learn names), or under an old name SQLFlow took
(``former``: taken with a warning naming the current spelling), its values under their old
names (``renamed``); an attribute sqlml takes but cannot honour (``ignored``: what it does instead)
is checked, left out, and reported with a warning on standard error naming where it is.
Names only hinted at (``suggested``) are refused with a hint naming sqlml's; an attribute
that applies with some values of another only (``only_with``: an optimizer's arguments) is
refused with the others. A boolean named as XGBoost names its parameters (no prefix:
``one_drop``, ``silent``) takes 1 and 0 for TRUE and FALSE too, as XGBoost does and SQLFlow
passes them (``one_drop = 0``); sqlml's own (``model.*``, ``output.*``...) take TRUE or FALSE.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlml import errors
from sqlml.errors import CheckError
from sqlml.grammar import ast
from sqlml.semantics.quantities import check_quantity

_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "string": "a string",
    "bool": "TRUE or FALSE",
    "int list": "a list of integers",
}
TYPES = tuple(_TYPE_WORDS)


@dataclass(frozen=True)
class Attr:
    """One attribute: ``type`` is one of :data:`TYPES`; bounds are inclusive unless noted."""

    name: str
    type: str
    default: Any
    doc: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[str, ...] | None = None
    architecture: bool = False  # defines the model: under TO TRAIN ... USING, the base model's
    aliases: tuple[str, ...] = ()  # other libraries' names for it, taken as this one
    former: tuple[str, ...] = ()  # SQLFlow's old names of it: taken as this one, warned of
    suggested: tuple[str, ...] = ()  # other names for it, refused with a hint naming it
    renamed: Mapping[str, str] = field(default_factory=dict, hash=False)  # old value -> choice
    ignored: str | None = None  # taken but not honoured: what sqlml does instead (a warning)
    # Another attribute, the values of it this one applies to, and its value when omitted
    # (an optimizer's argument: model.optimizer, the optimizers taking it, Adam).
    only_with: tuple[str, tuple[Any, ...], Any] | None = None
    # A check of the whole value (a list's items together), raising ValueError.
    whole: Callable[[Any], None] | None = field(default=None, compare=False)

    def check(self, value: ast.Value) -> Any:
        """Return ``value`` converted to this attribute's type, or raise ValueError."""
        if self.type == "bool" and "." not in self.name and type(value) is int and value in (0, 1):
            value = bool(value)  # XGBoost's own parameter, as SQLFlow passes it
        checked = _convert(self.type, value)
        if isinstance(checked, str):
            checked = self.renamed.get(checked, checked)
        items = checked if isinstance(checked, list) else [checked]
        for item in items:
            self._check_range(item)
        if self.whole is not None:
            self.whole(checked)
        return checked

    def _check_range(self, item: Any) -> None:
        if self.choices is not None and item not in self.choices:
            raise ValueError(f"must be one of {', '.join(map(repr, self.choices))}")
        if self.minimum is not None:
            low_ok = item > self.minimum if self.exclusive_minimum else item >= self.minimum
            if not low_ok:
                relation = ">" if self.exclusive_minimum else ">="
                raise ValueError(f"must be {relation} {self.minimum:g}")
        if self.maximum is not None and item > self.maximum:
            raise ValueError(f"must be <= {self.maximum:g}")


def _convert(kind: str, value: ast.Value) -> Any:
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "float" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int list" and isinstance(value, tuple):
        return [_convert("int", item) for item in value]
    raise ValueError(f"must be {_TYPE_WORDS[kind]}")


def check_attributes(
    given: Iterable[ast.Attribute],
    schema: Mapping[str, Attr],
    owner: str,
    open_prefix: str | None = None,
    related: bool = True,
) -> dict[str, Any]:
    """Check WITH attributes against ``schema`` and fill in defaults.

    Attributes outside the schema whose names start with ``open_prefix`` are taken as
    written (lists as lists). An alias is taken under the attribute's own name (given with
    it too, with the same value: once), a former name too, with a warning naming it; an
    ``ignored`` attribute is checked and left out, with a warning. ``related``: check that
    an attribute that applies with some values of another only (``only_with``) has one
    (off for a candidate checked alone).
    """
    values = {name: attr.default for name, attr in schema.items() if attr.default is not None}
    names = _names(schema)
    seen: dict[str, str] = {}  # the attributes given, by their own name: as written
    for attribute in given:
        pos = attribute.pos
        own = names.get(attribute.name, attribute.name)
        if seen.get(own) == attribute.name:
            raise CheckError(
                f"attribute {attribute.name} is given twice", line=pos.line, column=pos.column
            )
        if isinstance(attribute.value, ast.Candidates):
            raise CheckError(
                f"{attribute.value.function}(...) gives candidates to a hyperparameter search, "
                f"which {owner} does not run",
                line=attribute.value.pos.line,
                column=attribute.value.pos.column,
                hint="only TO TRAIN searches: give one value here",
            )
        spec = schema.get(own)
        if spec is None and open_prefix and attribute.name.startswith(open_prefix):
            seen[own] = attribute.name
            values[attribute.name] = _plain(attribute.value)
            continue
        if spec is None:
            raise CheckError(
                f"{owner} has no attribute {attribute.name}",
                line=pos.line,
                column=pos.column,
                hint=_suggestion(attribute.name, schema),
            )
        checked = _checked(attribute, spec)
        if own in seen and checked != values.get(own):
            raise CheckError(
                f"attribute {own} is given twice, as {seen[own]} and as {attribute.name}, "
                "with different values",
                line=pos.line,
                column=pos.column,
                hint=f"keep one of {seen[own]} and {attribute.name}",
            )
        seen.setdefault(own, attribute.name)
        if attribute.name in spec.former:
            warn(pos, f"{attribute.name}: an old SQLFlow spelling, taken as {own} (write {own})")
        if spec.ignored is None:
            values[own] = checked
        else:
            warn(pos, f"{owner} takes {attribute.name} but does not apply it: {spec.ignored}")
    for attribute in given if related else ():
        check_related(attribute, schema, values, seen)
    return values


def _checked(attribute: ast.Attribute, spec: Attr) -> Any:
    """The attribute's value, checked against ``spec``; a CheckError at it if it is not one."""
    try:
        return spec.check(attribute.value)
    except ValueError as error:
        raise CheckError(
            f"attribute {attribute.name} {error} (got {attribute.value!r})",
            line=attribute.pos.line,
            column=attribute.pos.column,
            hint=spec.doc,
        ) from None


def check_related(
    attribute: ast.Attribute,
    schema: Mapping[str, Attr],
    values: Mapping[str, Any],
    seen: Mapping[str, str] | None = None,
) -> None:
    """A CheckError unless the attribute ``attribute`` applies with (``only_with``) has one of
    the values it applies to in ``values``; ``seen``: the names given, as written."""
    spec = schema.get(own_name(attribute.name, schema))
    seen = seen or {}
    if spec is None or spec.only_with is None:
        return
    other, allowed, omitted = spec.only_with
    value = values.get(other, omitted)
    if value in allowed:
        return
    written = seen.get(other, other)
    raise CheckError(
        f"attribute {attribute.name} applies to {written} = {' or '.join(map(str, allowed))}, "
        f"not {written} = {value}" + ("" if other in values else " (when omitted)"),
        line=attribute.pos.line,
        column=attribute.pos.column,
        hint=f"remove it, or set {written} = {allowed[0]}",
    )


def not_applied(name: str, kind: str, doc: str, instead: str, **checks: Any) -> Attr:
    """An attribute sqlml takes (another library's, SQLFlow's) but does not apply: checked,
    then left out with a warning saying what sqlml does ``instead``."""
    return Attr(name, kind, None, f"{doc}; not applied: {instead}", ignored=instead, **checks)


def pod_resources(prefix: str) -> dict[str, Attr]:
    """The attributes of a statement kind (``prefix``: ``train``, ``predict``...) that set
    the requests and limits of its pods on Kubernetes, instead of the Argo backend's
    ``--cpu``, ``--memory``, ``--cpu-limit`` and ``--memory-limit``."""

    attrs = (
        Attr(
            f"{prefix}.{name}",
            "string",
            None,
            f"on Kubernetes, the {doc} of this statement's pods (its step's; a TO TRAIN's job "
            f"replicas and search trials too), a Kubernetes quantity, e.g. {example}, instead "
            f"of the Argo backend's --{name.replace('_', '-')}",
            whole=check_quantity,
        )
        for name, doc, example in (
            ("cpu", "CPU request", '"2" or "500m"'),
            ("memory", "memory request", '"2Gi"'),
            ("cpu_limit", "CPU limit", '"4"'),
            ("memory_limit", "memory limit (a larger memory request raises it)", '"8Gi"'),
        )
    )
    return {attr.name: attr for attr in attrs}


def warn(pos: ast.Position, message: str) -> None:
    """Say ``file:line:column: warning: MESSAGE`` on standard error (:func:`sqlml.errors.warn`)."""
    errors.warn(message, pos.line, pos.column)


def own_name(name: str, schema: Mapping[str, Attr]) -> str:
    """The name of the attribute of ``schema`` written ``name`` (an alias: its attribute's)."""
    return _names(schema).get(name, name)


def is_architecture(name: str, schema: Mapping[str, Attr]) -> bool:
    """Whether the attribute written ``name`` defines the model: an alias as its attribute;
    one outside ``schema`` (a user model's own ``model.*``) does."""
    spec = schema.get(own_name(name, schema))
    return spec is None or spec.architecture


def _names(schema: Mapping[str, Attr]) -> dict[str, str]:
    """Every name an attribute of ``schema`` is written under (its own, its aliases, its
    former names): its own."""
    aliases = {
        alias: attr.name for attr in schema.values() for alias in (*attr.aliases, *attr.former)
    }
    return {**aliases, **{name: name for name in schema}}


def _plain(value: ast.Value) -> Any:
    """A WITH value as JSON-like Python: lists for lists."""
    return [_plain(item) for item in value] if isinstance(value, tuple) else value


def _suggestion(name: str, schema: Mapping[str, Attr]) -> str:
    """A "did you mean" hint for an attribute ``schema`` lacks: the name (or alias) closest to
    ``name``, else the names it takes."""
    named = next((attr.name for attr in schema.values() if name in attr.suggested), None)
    if named:
        return f"sqlml calls it {named}"
    former = {old for attr in schema.values() for old in attr.former}
    names = {written: own for written, own in _names(schema).items() if written not in former}
    close = _closest(name, names)
    if close:
        own = names[close]
        return f"did you mean {close}?" + ("" if own == close else f" (sqlml's {own})")
    if not schema:
        return "it takes no attributes"
    prefix = name.rpartition(".")[0]
    applied = [known for known, attr in schema.items() if attr.ignored is None]
    same = [known for known in applied if known.rpartition(".")[0] == prefix]
    return "it takes " + ", ".join(sorted(same or applied))


def _closest(name: str, names: Iterable[str]) -> str | None:
    """The name closest to ``name``: by what follows the prefix among the names of the same
    prefix (``model.optimizer`` is not ``model.dropout``), else by the whole name."""
    import difflib  # here: only a misspelt name loads it

    prefix, _, rest = name.rpartition(".")
    split = {known: known.rpartition(".") for known in names}
    same = {parts[2]: known for known, parts in split.items() if parts[0] == prefix}
    close = difflib.get_close_matches(rest, same, n=1, cutoff=0.6)
    if close:
        return same[close[0]]
    others = [known for known in names if known not in same.values()]
    close = difflib.get_close_matches(name, others, n=1, cutoff=0.8)
    if close:
        return close[0]
    # The same name (or a close one) under another prefix: optimizer.learning_rate for
    # learning_rate, model.n_classes for n_class.
    rests: dict[str, str] = {}
    for known in others:
        rests.setdefault(known.rpartition(".")[2], known)
    close = difflib.get_close_matches(rest, rests, n=1, cutoff=0.8)
    return rests[close[0]] if close else None
