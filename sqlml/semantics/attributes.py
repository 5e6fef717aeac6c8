"""Attribute schemas: every WITH attribute an estimator takes, with its type, default and range.

The schemas are the single source for checking WITH clauses, for completion and for the
reference documentation.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlml.errors import CheckError
from sqlml.grammar import ast

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
    aliases: tuple[str, ...] = ()  # other libraries' names for it, suggested when used

    def check(self, value: ast.Value) -> Any:
        """Return ``value`` converted to this attribute's type, or raise ValueError."""
        checked = _convert(self.type, value)
        items = checked if isinstance(checked, list) else [checked]
        for item in items:
            self._check_range(item)
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
) -> dict[str, Any]:
    """Check WITH attributes against ``schema`` and fill in defaults.

    Attributes outside the schema whose names start with ``open_prefix`` are taken as
    written (lists as lists).
    """
    values = {name: attr.default for name, attr in schema.items() if attr.default is not None}
    seen: set[str] = set()
    for attribute in given:
        pos = attribute.pos
        if attribute.name in seen:
            raise CheckError(
                f"attribute {attribute.name} is given twice", line=pos.line, column=pos.column
            )
        seen.add(attribute.name)
        if isinstance(attribute.value, ast.Candidates):
            raise CheckError(
                f"{attribute.value.function}(...) gives candidates to a hyperparameter search, "
                f"which {owner} does not run",
                line=attribute.value.pos.line,
                column=attribute.value.pos.column,
                hint="only TO TRAIN searches: give one value here",
            )
        spec = schema.get(attribute.name)
        if spec is None and open_prefix and attribute.name.startswith(open_prefix):
            values[attribute.name] = _plain(attribute.value)
            continue
        if spec is None:
            raise CheckError(
                f"{owner} has no attribute {attribute.name}",
                line=pos.line,
                column=pos.column,
                hint=_suggestion(attribute.name, schema),
            )
        try:
            values[attribute.name] = spec.check(attribute.value)
        except ValueError as error:
            raise CheckError(
                f"attribute {attribute.name} {error} (got {attribute.value!r})",
                line=pos.line,
                column=pos.column,
                hint=spec.doc,
            ) from None
    return values


def _plain(value: ast.Value) -> Any:
    """A WITH value as JSON-like Python: lists for lists."""
    return [_plain(item) for item in value] if isinstance(value, tuple) else value


def _suggestion(name: str, schema: Mapping[str, Attr]) -> str:
    alias = next((attr.name for attr in schema.values() if name in attr.aliases), None)
    if alias:
        return f"sqlml calls it {alias}"
    close = difflib.get_close_matches(name, schema, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]}?"
    if not schema:
        return "it takes no attributes"
    return "it takes " + ", ".join(sorted(schema))
