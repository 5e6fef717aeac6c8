"""How Argo's executor decides a resource step's outcome, for tests.

Argo v4.1.2 (``workflow/executor/resource.go``: ``WaitResource``, ``checkResourceState``,
``matchConditions``) parses ``successCondition`` and ``failureCondition`` with Kubernetes'
label selector parser (``labels.Parse``, k8s.io/apimachinery v0.35: keys must be qualified
names, values label values; the port is ``tests.k8s_validation``'s) and looks each key up as
a gjson (v1.19) path in the object's JSON as the API server sent it (``gjsonLabels``: ``Has``
is ``Exists``, ``Get`` and ``Lookup`` are ``String``). On every read of the object: if ANY
failure requirement matches, the step fails; else if ALL success requirements match, it
succeeds; else it waits and reads the object again.

gjson's rules, which decide what a requirement sees: a JSON ``null`` EXISTS and its string is
``""`` (as is a missing field's); ``true``/``false`` are ``"true"``/``"false"``; an integer is
its text, any other number Go's shortest ``'f'`` format (``3.0`` is ``"3"``, ``1e+20`` is
``"100000000000000000000"``); an object or list is its JSON text. ``in``/``=`` need the key
to exist; ``notin``/``!=`` hold when it is missing; ``>``/``<`` need an integer (Go's
``ParseInt``). The paths a label key can spell are dotted keys and list indices (no queries:
``#``, ``(`` and ``=`` are not allowed in a key).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tests.k8s_validation import _selector_tokens, label_selector_errors

_INT64 = re.compile(r"[+-]?[0-9]+")
_OPERATORS = {
    "Equals": "=",
    "DoubleEquals": "=",
    "NotEquals": "!=",
    "In": "in",
    "NotIn": "notin",
    "GreaterThan": ">",
    "LessThan": "<",
}


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # exists, !, =, !=, in, notin, >, <
    values: tuple[str, ...]


class _Number(str):
    """A JSON number as its text (gjson keeps a number's raw text)."""


def parse(selector: str) -> list[Requirement]:
    """The requirements of a label selector; ValueError where ``labels.Parse`` fails."""
    if errors := label_selector_errors(selector):
        raise ValueError(errors[0])
    tokens = [token for token in _selector_tokens(selector) if token[0] != "End"]
    requirements, position = [], 0
    while position < len(tokens):
        kind, key = tokens[position]
        if kind == "DoesNotExist":
            requirements.append(Requirement(tokens[position + 1][1], "!", ()))
            position += 2
        elif position + 1 == len(tokens) or tokens[position + 1][0] == "Comma":
            requirements.append(Requirement(key, "exists", ()))
            position += 1
        else:
            operator = _OPERATORS[tokens[position + 1][0]]
            position += 2
            values: list[str] = []
            if operator in ("in", "notin"):  # ( [value] {, [value]} )
                position += 1
                while tokens[position][0] != "ClosedPar":
                    kind, literal = tokens[position]
                    following = tokens[position + 1][0]
                    if kind != "Comma":
                        values.append(literal)
                    elif not values or following in ("Comma", "ClosedPar"):
                        values.append("")  # "(,", ",,", ",)" hold an empty value
                    position += 1
                position += 1
                values = values or [""]  # "()" holds the empty value
            elif position < len(tokens) and tokens[position][0] not in ("Comma",):
                values.append(tokens[position][1])
                position += 1
            else:
                values.append("")  # "key=" and "key!=": the empty value
            requirements.append(Requirement(key, operator, tuple(values)))
        position += 1  # the comma between requirements
    return requirements


def outcome(success: str, failure: str, obj: Mapping[str, Any] | str | bytes) -> str | None:
    """``"failed"``, ``"succeeded"`` or None (Argo waits and reads the object again), for
    ``obj`` as the API server sends it (JSON text, or a value the stand-in would send)."""
    text = obj if isinstance(obj, str | bytes) else json.dumps(obj)
    document = json.loads(text, parse_int=_Number, parse_float=_Number)
    if any(_matches(r, document) for r in parse(failure)):
        return "failed"
    required = parse(success)
    if sum(_matches(r, document) for r in required) >= len(required):
        return "succeeded"
    return None


def wait_resource(
    read: Callable[[], Mapping[str, Any] | str | bytes], success: str, failure: str, reads: int
) -> tuple[str, int]:
    """Argo's ``WaitResource``: read the object (``read``, one GET) until a condition decides;
    ``(outcome, reads it took)``. AssertionError if neither decides within ``reads`` reads
    (where Argo would wait on)."""
    parse(success), parse(failure)  # Argo parses both before the first read
    for done in range(1, reads + 1):
        if ended := outcome(success, failure, read()):
            return ended, done
    raise AssertionError(f"neither condition held in {reads} reads: the step would still wait")


def _lookup(document: Any, path: str) -> tuple[bool, str]:
    """gjson's ``Exists`` and ``String`` for a path of keys and list indices."""
    current = document
    for component in path.split("."):
        if isinstance(current, dict) and component in current:
            current = current[component]
        elif (
            isinstance(current, list)
            and component.isascii()
            and component.isdigit()
            and int(component) < len(current)
        ):
            current = current[int(component)]
        else:
            return False, ""
    return True, _string(current)


def _string(value: Any) -> str:
    """gjson's ``Result.String``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _Number):
        if re.fullmatch(r"-?[0-9]+", value):
            return str(value)
        text = format(Decimal(repr(float(value))), "f")  # Go's FormatFloat(x, 'f', -1, 64)
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, str):
        return value
    return _text(value)


def _text(value: Any) -> str:
    """The JSON text of a value as read (numbers as they were written)."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(_text, value)) + "]"
    return str(value) if isinstance(value, _Number) else json.dumps(value)


def _int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``, None where it fails."""
    if not _INT64.fullmatch(text) or not -(2**63) <= int(text) < 2**63:
        return None
    return int(text)


def _matches(requirement: Requirement, document: Any) -> bool:
    """``labels.Requirement.Matches`` over gjson lookups."""
    exists, value = _lookup(document, requirement.key)
    operator = requirement.operator
    if operator == "exists":
        return exists
    if operator == "!":
        return not exists
    if operator in ("=", "in"):
        return exists and value in requirement.values
    if operator in ("!=", "notin"):
        return not exists or value not in requirement.values
    number, bound = _int64(value), _int64(requirement.values[0])
    if not exists or number is None or bound is None:
        return False
    return number > bound if operator == ">" else number < bound
