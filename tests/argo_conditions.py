"""How Argo's executor decides a resource step's outcome, for tests.

Argo v4.1.2 (``workflow/executor/resource.go``: ``WaitResource``, ``matchConditions``) parses
``successCondition`` and ``failureCondition`` with Kubernetes' label selector parser
(``k8s.io/apimachinery/pkg/labels``: keys must be qualified names, values label values) and
looks each key up as a gjson path in the object's JSON. On every read of the object: if ANY
failure requirement matches, the step fails; else if ALL success requirements match, it
succeeds; else it waits. The gjson paths a label key can spell are dotted keys and list
indices (no queries: ``#``, ``(`` and ``=`` are not allowed in a key).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_VALUE = re.compile(rf"({_NAME})?")
_REQUIREMENT = re.compile(
    r"\s*(?P<not>!)?\s*(?P<key>[^\s!=<>(),]+)\s*"
    r"(?:(?P<op>==|=|!=|>|<)\s*(?P<value>[^\s,()]*)|\s(?P<set>in|notin)\s*\((?P<values>[^)]*)\))?\s*$"
)


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # exists, !, =, !=, in, notin, >, <
    values: tuple[str, ...]


def parse(selector: str) -> list[Requirement]:
    """The requirements of a label selector; ValueError where Kubernetes' parser fails."""
    requirements = []
    for part in _split(selector):
        match = _REQUIREMENT.fullmatch(part)
        if not match:
            raise ValueError(f"cannot parse requirement {part!r}")
        key = match["key"]
        _check_key(key)
        if match["not"]:
            if match["op"] or match["set"]:
                raise ValueError(f"'!' takes a key alone: {part!r}")
            requirements.append(Requirement(key, "!", ()))
        elif match["set"]:
            values = tuple(value.strip() for value in match["values"].split(","))
            requirements.append(Requirement(key, match["set"], tuple(map(_value, values))))
        elif match["op"]:
            operator = "=" if match["op"] == "==" else match["op"]
            value = _value(match["value"])
            if operator in "<>":
                int(value)  # Gt and Lt take one integer
            requirements.append(Requirement(key, operator, (value,)))
        else:
            requirements.append(Requirement(key, "exists", ()))
    return requirements


def outcome(success: str, failure: str, obj: Mapping[str, Any]) -> str | None:
    """``"failed"``, ``"succeeded"`` or None (Argo waits and reads the object again)."""
    document = json.loads(json.dumps(obj))
    if any(_matches(r, document) for r in parse(failure)):
        return "failed"
    required = parse(success)
    if sum(_matches(r, document) for r in required) >= len(required):
        return "succeeded"
    return None


def _split(selector: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if current.strip() or parts:
        parts.append(current)
    return [part for part in parts if part.strip()] if selector.strip() else []


def _check_key(key: str) -> None:
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not re.fullmatch(_PREFIX, prefix)):
        raise ValueError(f"invalid label key prefix {prefix!r}")
    if len(name) > 63 or not re.fullmatch(_NAME, name):
        raise ValueError(f"invalid label key {key!r}: not a qualified name")


def _value(value: str) -> str:
    if len(value) > 63 or not _VALUE.fullmatch(value):
        raise ValueError(f"invalid label value {value!r}")
    return value


def _lookup(document: Any, path: str) -> tuple[bool, str]:
    """gjson's ``Exists`` and ``String`` for a path of keys and list indices."""
    current = document
    for component in path.split("."):
        if isinstance(current, dict) and component in current:
            current = current[component]
        elif isinstance(current, list) and component.isdigit() and int(component) < len(current):
            current = current[int(component)]
        else:
            return False, ""
    if isinstance(current, str):
        return True, current
    if isinstance(current, bool):
        return True, "true" if current else "false"
    if current is None:
        return True, ""
    return True, json.dumps(current, separators=(",", ":"))


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
    if not exists:
        return False
    try:
        number = int(value)
    except ValueError:
        return False
    bound = int(requirement.values[0])
    return number > bound if operator == ">" else number < bound
