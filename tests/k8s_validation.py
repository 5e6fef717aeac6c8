"""Would the API server, the admission webhooks and the controllers accept this object?

``validate(obj)`` checks one Kubernetes object the way a cluster would, without a cluster:

- against the published schemas vendored in ``tests/k8s_schemas/`` (see its README for
  provenance): Argo Workflows v4.1.2's full Workflow CRD, the training operator v1.9's
  TFJob/PyTorchJob/XGBoostJob/MPIJob CRDs, mpi-operator's v2beta1 MPIJob CRD, and Katib's
  OpenAPI (the Go types of Experiments, and of core/v1 and meta/v1 objects), as structural
  schemas with strict field validation: unknown fields are errors, and so are wrong types,
  missing ``required`` fields, values outside ``enum``, ``pattern``, length, item and
  range limits, and violated ``x-kubernetes-validations`` CEL rules;
- against the rules no schema encodes, read from the source of Argo's validation, the
  training operator's and Katib's webhooks and the controllers (each cited where written):
  object names, the names of the Services and pods a controller derives from them, Argo's
  template, task, dependency and ``{{variable}}`` rules, label-selector conditions, and
  the parts of Kubernetes' own pod validation that schemas do not say.

It returns a list of violations, each ``"<Kind> <path>: <message>"``; empty means accepted.
Objects embedded in others (the manifest a Workflow's resource template creates, the trial
Job of a Katib Experiment) are validated recursively, their messages prefixed with the path
of the string or field that holds them.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import copy
import datetime
import decimal
import functools
import gzip
import inspect
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

SCHEMAS = Path(__file__).resolve().parent / "k8s_schemas"
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Set to True (or SQLML_K8S_CEL_CROSSCHECK=1) to also evaluate every CEL rule with cel-python
# and fail on any disagreement with the translation table (slow; the tests turn it on).
CEL_CROSSCHECK = os.environ.get("SQLML_K8S_CEL_CROSSCHECK") == "1"


class SchemaError(Exception):
    """A schema holds something this validator cannot evaluate: it refuses to guess."""


Violations = list[tuple[str, str]]  # (path, message)


# ---------------------------------------------------------------------------------------
# Paths and Kubernetes name rules (k8s.io/apimachinery/pkg/util/validation/validation.go)
# ---------------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _key(path: str, key: Any) -> str:
    if isinstance(key, str) and _IDENTIFIER.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _index(path: str, i: int) -> str:
    return f"{path}[{i}]"


_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME_PART = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_CONFIG_MAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")
_C_IDENTIFIER_ENV = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")  # env var names before 1.34
_IANA_SVC_NAME = re.compile(r"[-a-z0-9]+")


def dns1123_label(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append(f"must be no more than 63 characters (is {len(value)})")
    if not _DNS1123_LABEL.fullmatch(value):
        errors.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
            "or '-', and must start and end with an alphanumeric character"
        )
    return errors


def dns1123_subdomain(value: str) -> list[str]:
    errors = []
    if len(value) > 253:
        errors.append(f"must be no more than 253 characters (is {len(value)})")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errors.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character"
        )
    return errors


def dns1035_label(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append(f"must be no more than 63 characters (is {len(value)})")
    if not _DNS1035_LABEL.fullmatch(value):
        errors.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
            "start with an alphabetic character, and end with an alphanumeric character"
        )
    return errors


def qualified_name(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        errors = dns1123_subdomain(prefix)
        if errors:
            return [f"prefix part {e}" for e in errors]
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character, with an optional DNS "
            "subdomain prefix and '/'"
        ]
    if not name:
        return ["name part must be non-empty"]
    errors = []
    if len(name) > 63:
        errors.append(f"name part must be no more than 63 characters (is {len(name)})")
    if not _QUALIFIED_NAME_PART.fullmatch(name):
        errors.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character"
        )
    return errors


def label_value(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append(f"must be no more than 63 characters (is {len(value)})")
    if not _LABEL_VALUE.fullmatch(value):
        errors.append(
            "a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return errors


def config_map_key(value: str) -> list[str]:
    errors = []
    if len(value) > 253:
        errors.append(f"must be no more than 253 characters (is {len(value)})")
    if not _CONFIG_MAP_KEY.fullmatch(value):
        errors.append("a valid key must consist of alphanumeric characters, '-', '_' or '.'")
    if value in (".", "..") or value.startswith(".."):
        errors.append("must not be '.' or '..' and must not start with '..'")
    return errors


# The API server truncates generateName to 58 characters and appends 5 random characters
# (k8s.io/apiserver/pkg/storage/names/generate.go: maxNameLength 63, randomLength 5).
_GENERATED_SUFFIX = "xxxxx"


def generated_name(prefix: str) -> str:
    """The longest name the API server can generate from ``prefix``."""
    return prefix[:58] + _GENERATED_SUFFIX


# ---------------------------------------------------------------------------------------
# Label selectors: k8s.io/apimachinery/pkg/labels/selector.go (Parse), which Argo uses for
# resource templates' successCondition/failureCondition (workflow/executor/resource.go)
# ---------------------------------------------------------------------------------------

_SPECIAL = set("=!(),><")
_WHITESPACE = set(" \t\r\n")
_SELECTOR_TOKENS = {
    ")": "ClosedPar",
    ",": "Comma",
    "!": "DoesNotExist",
    "==": "DoubleEquals",
    "=": "Equals",
    ">": "GreaterThan",
    "in": "In",
    "<": "LessThan",
    "!=": "NotEquals",
    "notin": "NotIn",
    "(": "OpenPar",
}


def _selector_tokens(s: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(s)
    while True:
        while i < n and s[i] in _WHITESPACE:
            i += 1
        if i >= n or s[i] == "\0":
            tokens.append(("End", ""))
            return tokens
        if s[i] in _SPECIAL:
            buffer, last = "", None
            while i < n and s[i] in _SPECIAL:
                buffer += s[i]
                if buffer in _SELECTOR_TOKENS:
                    last = (_SELECTOR_TOKENS[buffer], buffer)
                    i += 1
                elif last is not None:
                    break
                else:
                    i += 1
            if last is None:
                tokens.append(("Error", f"error expected: keyword found '{buffer}'"))
            else:
                tokens.append(last)
            continue
        start = i
        while i < n and s[i] not in _SPECIAL and s[i] not in _WHITESPACE and s[i] != "\0":
            i += 1
        word = s[start:i]
        tokens.append((_SELECTOR_TOKENS.get(word, "Identifier"), word))


def label_selector_errors(selector: str) -> list[str]:
    """Why labels.Parse would reject ``selector`` (empty: it parses)."""
    tokens = _selector_tokens(selector)
    pos = 0

    def look(values: bool) -> tuple[str, str]:
        tok, lit = tokens[pos]
        if values and tok in ("In", "NotIn"):
            tok = "Identifier"
        return tok, lit

    def take(values: bool) -> tuple[str, str]:
        nonlocal pos
        result = look(values)
        pos += 1
        return result

    def requirement() -> list[str]:
        tok, lit = take(True)
        operator = None
        if tok == "DoesNotExist":
            operator = "!"
            tok, lit = take(True)
        if tok != "Identifier":
            return [f"found '{lit}', expected: identifier"]
        key = lit
        errors = [f"key {key!r}: {e}" for e in qualified_name(key)]
        if errors:
            return errors
        if operator == "!" or look(True)[0] in ("End", "Comma"):
            return []  # exists / does not exist (what follows '!key' is the caller's)
        tok, lit = take(False)
        ops = {
            "In": "in",
            "Equals": "=",
            "DoubleEquals": "==",
            "GreaterThan": ">",
            "LessThan": "<",
            "NotIn": "notin",
            "NotEquals": "!=",
        }
        if tok not in ops:
            return [f"found '{lit}', expected: in, notin, =, ==, !=, gt, lt"]
        op = ops[tok]
        values: list[str] = []
        if op in ("in", "notin"):
            tok, lit = take(True)
            if tok != "OpenPar":
                return [f"found '{lit}' expected: '('"]
            tok, lit = look(True)
            if tok == "ClosedPar":
                take(True)
                values = [""]
            elif tok in ("Identifier", "Comma"):
                while True:
                    tok, lit = take(True)
                    if tok == "Identifier":
                        values.append(lit)
                        tok2, lit2 = look(True)
                        if tok2 == "Comma":
                            continue
                        if tok2 == "ClosedPar":
                            break
                        return [f"found '{lit2}', expected: ',' or ')'"]
                    if tok == "Comma":
                        if not values:
                            values.append("")
                        tok2, _ = look(True)
                        if tok2 == "ClosedPar":
                            values.append("")
                            break
                        if tok2 == "Comma":
                            take(True)
                            values.append("")
                        continue
                    return [f"found '{lit}', expected: ',', or identifier"]
                tok, lit = take(True)
                if tok != "ClosedPar":
                    return [f"found '{lit}', expected: ')'"]
            else:
                return [f"found '{lit}', expected: ',', ')' or identifier"]
        else:
            tok, lit = look(True)
            if tok in ("End", "Comma"):
                values = [""]
            else:
                tok, lit = take(True)
                if tok != "Identifier":
                    return [f"found '{lit}', expected: identifier"]
                values = [lit]
        errors = []
        if op in (">", "<"):
            for v in values:
                if not re.fullmatch(r"[+-]?[0-9]+", v) or not -(2**63) <= int(v) < 2**63:
                    errors.append(f"for 'Gt', 'Lt' operators, the value must be an integer: {v!r}")
        for v in values:
            errors += [f"value {v!r} of {key!r}: {e}" for e in label_value(v)]
        return errors

    while True:
        tok, lit = look(True)
        if tok in ("Identifier", "DoesNotExist"):
            errors = requirement()
            if errors:
                return [f"unable to parse requirement: {e}" for e in errors]
            tok, lit = take(True)
            if tok == "End":
                return []
            if tok == "Comma":
                tok2, lit2 = look(True)
                if tok2 not in ("Identifier", "DoesNotExist"):
                    return [f"found '{lit2}', expected: identifier after ','"]
                continue
            return [f"found '{lit}', expected: ',' or 'end of string'"]
        if tok == "End":
            return []
        return [f"found '{lit}', expected: !, identifier, or 'end of string'"]


# ---------------------------------------------------------------------------------------
# Quantities (k8s.io/apimachinery/pkg/api/resource), as the CRDs' pattern writes them
# ---------------------------------------------------------------------------------------

_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_QUANTITY = re.compile(rf"([+-]?{_NUMBER})((?:[KMGTPE]i)|[numkMGTPE]|(?:[eE][+-]?{_NUMBER}))?")
_SUFFIX = {
    "": 1,
    "n": decimal.Decimal("1e-9"),
    "u": decimal.Decimal("1e-6"),
    "m": decimal.Decimal("1e-3"),
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}


def quantity(value: Any) -> decimal.Decimal | None:
    """The amount a quantity stands for, or None when it does not parse."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return decimal.Decimal(str(value))
    if not isinstance(value, str):
        return None
    match = _QUANTITY.fullmatch(value)
    if not match:
        return None
    number, suffix = decimal.Decimal(match[1]), match[2] or ""
    if suffix[:1] in ("e", "E"):
        return number * decimal.Decimal(10) ** decimal.Decimal(suffix[1:])
    return number * decimal.Decimal(_SUFFIX[suffix])


# ---------------------------------------------------------------------------------------
# CEL rules (x-kubernetes-validations): a translation table keyed by the exact rule text
# ---------------------------------------------------------------------------------------
#
# cel-python evaluates every rule in the vendored schemas correctly (the tests check it
# rule by rule against this table, and CEL_CROSSCHECK compares them on every evaluation),
# but at 0.5-2.5 ms an evaluation it would take seconds on a Workflow of a thousand tasks.
# Each rule here is evaluated as the API server does on create: `has(x)` is presence of a
# non-null field (the server prunes nulls first); a missing field read is an evaluation
# error, which the server reports as a violation; transition rules (those reading
# oldSelf) only run on update, never on create. A rule missing from the table raises.


class _CelEvalError(Exception):
    pass


def _has(obj: Any, field: str) -> bool:
    return isinstance(obj, Mapping) and obj.get(field) is not None


def _get(obj: Any, field: str) -> Any:
    if not _has(obj, field):
        raise _CelEvalError(f"no such key: {field}")
    return obj[field]


_ARTIFACT_LOCATIONS = ("s3", "git", "http", "artifactory", "hdfs", "raw", "oss", "gcs", "azure")
_ARTIFACT_LOCATION_RULE = (
    " + ".join(f"(has(self.{k}) ? 1 : 0)" for k in (*_ARTIFACT_LOCATIONS, "plugin")) + " <= 1"
)
_TEMPLATE_TYPES = (
    "container",
    "script",
    "dag",
    "steps",
    "resource",
    "suspend",
    "containerSet",
    "data",
    "http",
    "plugin",
)
_TEMPLATE_TYPE_RULE = (
    "self.all(t, " + " + ".join(f"(has(t.{k}) ? 1 : 0)" for k in _TEMPLATE_TYPES) + " <= 1)"
)
_TRANSITION = object()  # a transition rule: evaluated on update only


def _cel_go_regex_search(pattern: str, text: str) -> bool:
    # CEL's matches() is RE2 with search semantics; these patterns mean the same in Python.
    return re.search(pattern, text) is not None


CEL_RULES: dict[str, Any] = {
    _ARTIFACT_LOCATION_RULE: lambda s: (
        sum(_has(s, k) for k in (*_ARTIFACT_LOCATIONS, "plugin")) <= 1
    ),
    "!has(self.realtime) || !self.realtime || !self.value.contains('resourcesDuration.')": (
        lambda s: (
            not _has(s, "realtime")
            or not _get(s, "realtime")
            or "resourcesDuration." not in _get(s, "value")
        )
    ),
    "!has(self.depends) || !has(self.dependencies)": lambda s: (
        not _has(s, "depends") or not _has(s, "dependencies")
    ),
    "!has(self.depends) || !has(self.continueOn)": lambda s: (
        not _has(s, "depends") or not _has(s, "continueOn")
    ),
    "!(has(self.depends) || has(self.dependencies)) || !self.name.matches('^[0-9]')": lambda s: (
        not (_has(s, "depends") or _has(s, "dependencies"))
        or not _cel_go_regex_search("^[0-9]", _get(s, "name"))
    ),
    "!(has(self.count) && has(self.end))": lambda s: not (_has(s, "count") and _has(s, "end")),
    "(has(self.manifest) && !has(self.manifestFrom)) || (!has(self.manifest) && "
    "has(self.manifestFrom)) || (!has(self.manifest) && !has(self.manifestFrom))": lambda s: (
        not (_has(s, "manifest") and _has(s, "manifestFrom"))
    ),
    _TEMPLATE_TYPE_RULE: lambda s: all(sum(_has(t, k) for k in _TEMPLATE_TYPES) <= 1 for t in s),
    'self.all(t, !(has(t.timeout) && t.timeout != "" && (has(t.steps) || has(t.dag))))': (
        lambda s: all(
            not (
                _has(t, "timeout")
                and _get(t, "timeout") != ""
                and (_has(t, "steps") or _has(t, "dag"))
            )
            for t in s
        )
    ),
    "self.all(t, !(has(t.activeDeadlineSeconds) && (has(t.steps) || has(t.dag))))": lambda s: all(
        not (_has(t, "activeDeadlineSeconds") and (_has(t, "steps") or _has(t, "dag"))) for t in s
    ),
    "self == oldSelf": _TRANSITION,
}


def _prune_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value]
    return value


@functools.cache
def _celpy_program(rule: str) -> Any:
    import celpy  # cel-python

    environment = celpy.Environment()
    return environment.program(environment.compile(rule))


def celpy_evaluate(rule: str, value: Any) -> bool | str:
    """``rule`` on ``value`` by cel-python: True/False, or "error" for an evaluation error."""
    import celpy

    try:
        result = _celpy_program(rule).evaluate({"self": celpy.json_to_cel(_prune_nulls(value))})
    except celpy.CELEvalError:
        return "error"
    if isinstance(result, celpy.CELEvalError):
        return "error"
    return bool(result)


def cel_evaluate(rule: str, value: Any) -> bool | str:
    """``rule`` on ``value`` by the translation table: True/False, or "error"."""
    function = CEL_RULES[rule]
    try:
        result: bool | str = bool(function(value))
    except (_CelEvalError, TypeError, AttributeError):
        result = "error"
    if CEL_CROSSCHECK:
        other = celpy_evaluate(rule, value)
        if other != result:
            raise AssertionError(
                f"CEL rule {rule!r} on {value!r}: table {result}, cel-python {other}"
            )
    return result


# ---------------------------------------------------------------------------------------
# Structural schemas, compiled once
# ---------------------------------------------------------------------------------------

_KNOWN_KEYWORDS = {
    "type",
    "description",
    "properties",
    "additionalProperties",
    "items",
    "required",
    "enum",
    "pattern",
    "maxItems",
    "minItems",
    "maxLength",
    "minLength",
    "maxProperties",
    "minProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "format",
    "nullable",
    "default",
    "example",
    "title",
    "anyOf",
    "allOf",
    "oneOf",
    "$ref",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-unions",
    "x-kubernetes-v2-schema",
}
_FORMATS = {"int32", "int64", "date-time", "byte", "double", "float", "int-or-string"}
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
_QUANTITY_REF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING_REF = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"


class Node:
    """A compiled schema node."""

    __slots__ = (
        "additional",
        "any",
        "enum",
        "exclusive_maximum",
        "exclusive_minimum",
        "format",
        "go_typed",
        "int_or_string",
        "items",
        "list_type",
        "map_keys",
        "max_items",
        "max_length",
        "max_properties",
        "maximum",
        "min_items",
        "min_length",
        "min_properties",
        "minimum",
        "multiple_of",
        "nullable",
        "pattern",
        "preserve",
        "props",
        "quantity",
        "required",
        "rules",
        "types",
    )

    def __init__(self) -> None:
        for slot in self.__slots__:
            setattr(self, slot, None)


class _Compiler:
    def __init__(self, definitions: Mapping[str, Any] | None, go_typed: bool) -> None:
        self.definitions = definitions or {}
        self.go_typed = go_typed
        self.memo: dict[int, Node] = {}

    def ref(self, ref: str) -> Node:
        name = ref.rsplit("/", 1)[-1]
        if name not in self.definitions:
            raise SchemaError(f"unresolved $ref {ref!r}")
        schema = self.definitions[name]
        if name == _QUANTITY_REF:
            return self.quantity_node(schema)
        if name == _INT_OR_STRING_REF:
            return self.int_or_string_node(schema)
        return self.compile(schema)

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """The schema a $ref or a single-$ref allOf stands for (the dict itself otherwise)."""
        while True:
            if "$ref" in schema:
                ref = schema["$ref"]
            elif "allOf" in schema and len(schema["allOf"]) == 1 and "$ref" in schema["allOf"][0]:
                ref = schema["allOf"][0]["$ref"]
            else:
                return schema
            schema = self.definitions[ref.rsplit("/", 1)[-1]]

    def quantity_node(self, schema: Mapping[str, Any]) -> Node:
        key = id(schema)
        if key not in self.memo:
            node = Node()
            node.quantity = True
            node.go_typed = self.go_typed
            self.memo[key] = node
        return self.memo[key]

    def int_or_string_node(self, schema: Mapping[str, Any]) -> Node:
        key = id(schema)
        if key not in self.memo:
            node = Node()
            node.int_or_string = True
            node.go_typed = self.go_typed
            self.memo[key] = node
        return self.memo[key]

    def compile(self, schema: Mapping[str, Any]) -> Node:
        key = id(schema)
        if key in self.memo:
            return self.memo[key]
        unknown = set(schema) - _KNOWN_KEYWORDS
        if unknown:
            raise SchemaError(f"schema keywords this validator does not know: {sorted(unknown)}")
        if "$ref" in schema:
            node = self.ref(schema["$ref"])
            self.memo[key] = node
            return node
        if "allOf" in schema:
            parts = schema["allOf"]
            extra = set(schema) - {"allOf", "description", "default", "example", "title"}
            if len(parts) != 1 or set(parts[0]) != {"$ref"} or extra:
                raise SchemaError(f"allOf other than a single $ref: {dict(schema)!r:.200}")
            node = self.ref(parts[0]["$ref"])
            self.memo[key] = node
            return node
        node = Node()
        node.go_typed = self.go_typed
        self.memo[key] = node
        if schema.get("x-kubernetes-embedded-resource"):
            raise SchemaError("x-kubernetes-embedded-resource is not supported")
        if "oneOf" in schema:
            raise SchemaError(f"oneOf outside Quantity/IntOrString: {dict(schema)!r:.200}")
        if schema.get("x-kubernetes-int-or-string"):
            if schema.get("anyOf", _INT_OR_STRING) != _INT_OR_STRING:
                raise SchemaError(f"int-or-string with anyOf {schema.get('anyOf')!r}")
            node.int_or_string = True
        elif "anyOf" in schema:
            raise SchemaError(f"anyOf other than int-or-string: {dict(schema)!r:.200}")
        if "type" in schema:
            node.types = schema["type"]
            if node.types not in ("string", "integer", "number", "boolean", "array", "object"):
                raise SchemaError(f"unknown type {node.types!r}")
        node.preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        node.nullable = bool(schema.get("nullable"))
        if "properties" in schema:
            node.props = {k: self.compile(v) for k, v in schema["properties"].items()}
        additional = schema.get("additionalProperties")
        if isinstance(additional, Mapping):
            node.additional = self.compile(additional)
        elif additional is not None:
            node.additional = bool(additional)
        if "items" in schema:
            if not isinstance(schema["items"], Mapping):
                raise SchemaError("tuple items are not supported")
            node.items = self.compile(schema["items"])
        required = schema.get("required") or ()
        if required:
            # For custom resources the API server applies a structural schema's defaults
            # before it validates: a defaulted field is never missing. The defaults of the
            # Go types' OpenAPI are the zero values, which the validation rejects.
            defaults = set()
            if not self.go_typed:
                defaults = {k for k, v in schema.get("properties", {}).items() if "default" in v}
            node.required = tuple(k for k in required if k not in defaults)
        if "enum" in schema:
            node.enum = tuple(schema["enum"])
        if "pattern" in schema:
            pattern = schema["pattern"]
            # Go's $ is the end of the text; Python's also matches before a final newline
            if pattern.endswith("$") and not pattern.endswith("\\$"):
                pattern = pattern[:-1] + r"\Z"
            node.pattern = (re.compile(pattern), schema["pattern"])
        for name, slot in (
            ("maxItems", "max_items"),
            ("minItems", "min_items"),
            ("maxLength", "max_length"),
            ("minLength", "min_length"),
            ("maxProperties", "max_properties"),
            ("minProperties", "min_properties"),
            ("minimum", "minimum"),
            ("maximum", "maximum"),
            ("multipleOf", "multiple_of"),
        ):
            if name in schema:
                setattr(node, slot, schema[name])
        for name, slot, base in (
            ("exclusiveMinimum", "exclusive_minimum", "minimum"),
            ("exclusiveMaximum", "exclusive_maximum", "maximum"),
        ):
            if name in schema:
                if not isinstance(schema[name], bool):
                    setattr(node, base, None)
                    setattr(node, slot, schema[name])
                elif schema[name]:
                    setattr(node, slot, schema[base])
                    setattr(node, base, None)
        if "format" in schema:
            if schema["format"] not in _FORMATS:
                raise SchemaError(f"unknown format {schema['format']!r}")
            node.format = schema["format"]
        list_type = schema.get("x-kubernetes-list-type")
        if list_type is not None:
            if list_type not in ("atomic", "set", "map"):
                raise SchemaError(f"unknown x-kubernetes-list-type {list_type!r}")
            node.list_type = list_type
            if list_type == "map":
                keys = schema.get("x-kubernetes-list-map-keys") or ()
                item_props = self.resolve(schema["items"]).get("properties", {})
                # a key left out takes its default before the server compares keys
                node.map_keys = tuple((k, item_props.get(k, {}).get("default")) for k in keys)
        rules = []
        for rule in schema.get("x-kubernetes-validations") or ():
            text = rule["rule"]
            if text not in CEL_RULES:
                raise SchemaError(f"CEL rule with no evaluation in CEL_RULES: {text!r}")
            unknown_keys = set(rule) - {"rule", "message", "reason", "fieldPath"}
            if unknown_keys:
                raise SchemaError(f"CEL rule keys this validator does not know: {unknown_keys}")
            if CEL_RULES[text] is _TRANSITION:
                if "oldSelf" not in text:
                    raise SchemaError(f"rule {text!r} marked transition but reads no oldSelf")
                continue
            if "oldSelf" in text:
                raise SchemaError(f"transition rule {text!r} not marked as such")
            rules.append(
                (text, rule.get("message") or f"failed rule: {text}", rule.get("fieldPath"))
            )
        node.rules = tuple(rules) or None
        node.any = node.types is None and not node.int_or_string
        return node


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _is_integer(value: Any, go_typed: bool) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return not go_typed and isinstance(value, float) and value.is_integer()


_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _check_date_time(value: str) -> bool:
    try:
        datetime.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return bool(
        re.fullmatch(
            r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", value
        )
    )


def _hashable(value: Any) -> Any:
    return json.dumps(value, sort_keys=True)


def check(value: Any, node: Node, path: str, out: Violations) -> None:
    """Validate ``value`` against the compiled schema ``node``, appending to ``out``."""
    if value is None:
        if not node.nullable:
            out.append((path, "must not be null"))
        return
    if node.int_or_string:
        if not (isinstance(value, str) or _is_integer(value, node.go_typed)):
            out.append((path, f"must be an integer or a string, not {_type_name(value)}"))
            return
    elif node.quantity:
        if quantity(value) is None:
            out.append(
                (path, f"must be a quantity (a number or a string like 500m, 2Gi): {value!r}")
            )
        return
    elif node.types is not None:
        kind = node.types
        ok = (
            (kind == "string" and isinstance(value, str))
            or (kind == "integer" and _is_integer(value, node.go_typed))
            or (kind == "number" and isinstance(value, int | float) and not isinstance(value, bool))
            or (kind == "boolean" and isinstance(value, bool))
            or (kind == "array" and isinstance(value, list))
            or (kind == "object" and isinstance(value, Mapping))
        )
        if not ok:
            out.append((path, f"must be of type {kind}, not {_type_name(value)}"))
            return
    if node.enum is not None and not any(type(value) is type(e) and value == e for e in node.enum):
        supported = ", ".join(json.dumps(e) for e in node.enum)
        out.append((path, f"Unsupported value: {json.dumps(value)}: supported values: {supported}"))
    if isinstance(value, str):
        if node.pattern is not None and not node.pattern[0].search(value):
            out.append((path, f"must match the pattern {node.pattern[1]!r}: {value!r}"))
        if node.max_length is not None and len(value) > node.max_length:
            out.append(
                (path, f"must be no more than {node.max_length} characters (is {len(value)})")
            )
        if node.min_length is not None and len(value) < node.min_length:
            out.append((path, f"must be at least {node.min_length} characters"))
        if node.format == "byte":
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                out.append((path, "must be base64-encoded (format byte)"))
        elif node.format == "date-time" and not _check_date_time(value):
            out.append((path, f"must be an RFC 3339 date-time: {value!r}"))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if node.format in _INT_RANGES and (node.types == "integer" or node.int_or_string):
            low, high = _INT_RANGES[node.format]
            if not low <= value <= high:
                out.append((path, f"must be an {node.format} ({low} to {high}): {value}"))
        if node.minimum is not None and value < node.minimum:
            out.append((path, f"must be greater than or equal to {node.minimum}"))
        if node.maximum is not None and value > node.maximum:
            out.append((path, f"must be less than or equal to {node.maximum}"))
        if node.exclusive_minimum is not None and value <= node.exclusive_minimum:
            out.append((path, f"must be greater than {node.exclusive_minimum}"))
        if node.exclusive_maximum is not None and value >= node.exclusive_maximum:
            out.append((path, f"must be less than {node.exclusive_maximum}"))
        if node.multiple_of and value % node.multiple_of:
            out.append((path, f"must be a multiple of {node.multiple_of}"))
    elif isinstance(value, list):
        if node.max_items is not None and len(value) > node.max_items:
            out.append((path, f"must have at most {node.max_items} items"))
        if node.min_items is not None and len(value) < node.min_items:
            out.append((path, f"must have at least {node.min_items} items"))
        items = node.items
        for i, item in enumerate(value):
            if items is not None:
                check(item, items, _index(path, i), out)
            elif item is None:
                out.append((_index(path, i), "must not be null"))
        if node.list_type == "set":
            seen: set[Any] = set()
            for i, item in enumerate(value):
                marker = _hashable(item)
                if marker in seen:
                    out.append((_index(path, i), f"Duplicate value: {json.dumps(item)}"))
                seen.add(marker)
        elif node.list_type == "map" and node.map_keys:
            seen = set()
            for i, item in enumerate(value):
                if not isinstance(item, Mapping):
                    continue
                marker = _hashable(
                    [item.get(k) if item.get(k) is not None else d for k, d in node.map_keys]
                )
                if marker in seen:
                    keys = {k: item.get(k) for k, _ in node.map_keys}
                    out.append((_index(path, i), f"Duplicate value: {json.dumps(keys)}"))
                seen.add(marker)
    elif isinstance(value, Mapping):
        props = node.props
        additional = node.additional
        for key, item in value.items():
            child = props.get(key) if props is not None else None
            if child is None:
                if isinstance(additional, Node):
                    child = additional
                elif additional is True or node.preserve or (node.any and props is None):
                    continue
                else:
                    out.append((_key(path, key), "unknown field"))
                    continue
            if item is None and not child.nullable:
                continue  # pruned (CRDs) or the zero value (Go types): as if absent
            check(item, child, _key(path, key), out)
        if node.required:
            for key in node.required:
                if value.get(key) is None:
                    out.append((_key(path, key), "Required value"))
        if node.max_properties is not None and len(value) > node.max_properties:
            out.append((path, f"must have at most {node.max_properties} properties"))
        if node.min_properties is not None and len(value) < node.min_properties:
            out.append((path, f"must have at least {node.min_properties} properties"))
    if node.rules:
        for rule, message, field_path in node.rules:
            result = cel_evaluate(rule, value)
            where = path + field_path if field_path else path
            if result == "error":
                out.append((where, f"{message} (the rule could not be evaluated: {rule})"))
            elif not result:
                out.append((where, message))


# ---------------------------------------------------------------------------------------
# The vendored schemas
# ---------------------------------------------------------------------------------------


def _read(relative: str) -> bytes:
    path = SCHEMAS / relative
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes())
    return path.read_bytes()


@functools.cache
def crd_document(relative: str) -> dict[str, Any]:
    return yaml.load(_read(relative), Loader=_YAML_LOADER)


@functools.cache
def crd_schema(relative: str, version: str) -> Node:
    document = crd_document(relative)
    for entry in document["spec"]["versions"]:
        if entry["name"] == version:
            return _Compiler(None, go_typed=False).compile(entry["schema"]["openAPIV3Schema"])
    raise SchemaError(f"{relative} has no version {version}")


@functools.cache
def swagger_definitions() -> dict[str, Any]:
    return json.loads(_read("katib/swagger.json.gz"))["components"]["schemas"]


@functools.cache
def _swagger_compiler() -> _Compiler:
    return _Compiler(swagger_definitions(), go_typed=True)


@functools.cache
def swagger_schema(name: str) -> Node:
    return _swagger_compiler().ref(name)


CRD_FILES = (
    "argo/workflows-full.yaml.gz",
    "training/tfjobs.yaml.gz",
    "training/pytorchjobs.yaml.gz",
    "training/xgboostjobs.yaml.gz",
    "training/mpijobs.yaml.gz",
    "mpi/mpijobs-v2beta1.yaml.gz",
    "katib/experiment.yaml",
)


def schema_cel_rules() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every x-kubernetes-validations rule in the vendored schemas: (file, path, rule)."""

    def walk(schema: Any, path: str, relative: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
        if isinstance(schema, Mapping):
            for rule in schema.get("x-kubernetes-validations") or ():
                yield relative, path, rule
            for key, value in schema.items():
                if key != "x-kubernetes-validations":
                    yield from walk(value, f"{path}/{key}", relative)
        elif isinstance(schema, list):
            for i, value in enumerate(schema):
                yield from walk(value, f"{path}[{i}]", relative)

    for relative in CRD_FILES:
        yield from walk(crd_document(relative), "", relative)
    yield from walk(swagger_definitions(), "", "katib/swagger.json.gz")


# The batch/v1 Job, from the kubernetes Python client's models (openapi_types and
# attribute_map), its pod template and object metadata from the core/v1 and meta/v1 types
# in Katib's OpenAPI. Required fields are those the model's setters refuse as None.

_CLIENT_TO_SWAGGER = {
    "V1PodTemplateSpec": "io.k8s.api.core.v1.PodTemplateSpec",
    "V1ObjectMeta": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    "V1LabelSelector": "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
}


@functools.cache
def client_model_schema(model: str) -> Node:
    import kubernetes.client.models as models

    if model in _CLIENT_TO_SWAGGER:
        return swagger_schema(_CLIENT_TO_SWAGGER[model])
    klass = getattr(models, model)
    node = Node()
    node.go_typed = True
    node.types = "object"
    node.props = {}
    source = inspect.getsource(klass)
    required = re.findall(r"Invalid value for `(\w+)`, must not be `None`", source)
    node.required = tuple(klass.attribute_map[name] for name in dict.fromkeys(required))
    for attribute, kind in klass.openapi_types.items():
        node.props[klass.attribute_map[attribute]] = _client_type(kind)
    return node


def _client_type(kind: str) -> Node:
    node = Node()
    node.go_typed = True
    if kind.startswith("list["):
        node.types = "array"
        node.items = _client_type(kind[5:-1])
    elif kind.startswith("dict("):
        node.types = "object"
        node.additional = _client_type(kind[5:-1].split(",", 1)[1].strip())
    elif kind in ("str", "int", "bool", "float", "datetime", "date"):
        node.types = {"str": "string", "int": "integer", "bool": "boolean", "float": "number"}.get(
            kind, "string"
        )
        if kind == "datetime":
            node.format = "date-time"
    elif kind == "object":
        raise SchemaError("an untyped field in a client model")
    else:
        return client_model_schema(kind)
    return node


# ---------------------------------------------------------------------------------------
# Object metadata (the API server: apimachinery/pkg/api/validation/objectmeta.go)
# ---------------------------------------------------------------------------------------

NameRule = Callable[[str], list[str]]


def _check_labels(labels: Any, path: str, out: Violations) -> None:
    if not isinstance(labels, Mapping):
        return
    for key, value in labels.items():
        for error in qualified_name(str(key)):
            out.append((_key(path, key), f"Invalid label key {key!r}: {error}"))
        if isinstance(value, str):
            for error in label_value(value):
                out.append((_key(path, key), f"Invalid label value {value!r}: {error}"))


def _check_annotations(annotations: Any, path: str, out: Violations) -> None:
    if not isinstance(annotations, Mapping):
        return
    total = 0
    for key, value in annotations.items():
        for error in qualified_name(str(key).lower()):
            out.append((_key(path, key), f"Invalid annotation key {key!r}: {error}"))
        total += len(str(key)) + (len(value) if isinstance(value, str) else 0)
    if total > 256 * 1024:
        out.append((path, f"annotations may not exceed 262144 bytes (are {total})"))


def check_metadata(
    metadata: Any,
    path: str,
    out: Violations,
    name_rule: NameRule | None,
    *,
    require_name: bool = True,
    assumed_name: str | None = None,
) -> str | None:
    """Check object metadata; return the (worst-case generated) name, if any.

    ``assumed_name``: the name the object gets when it has none (a Katib trial's)."""
    if metadata is None:
        if require_name and assumed_name is None:
            out.append((path, "Required value: metadata"))
        if assumed_name is not None and name_rule is not None:
            for error in name_rule(assumed_name):
                out.append(
                    (
                        path,
                        f"Invalid name {assumed_name!r} (the name Katib gives the trial): {error}",
                    )
                )
        return assumed_name
    check(metadata, swagger_schema("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"), path, out)
    if not isinstance(metadata, Mapping):
        return None
    name, prefix = metadata.get("name"), metadata.get("generateName")
    effective = None
    if isinstance(name, str) and name:
        effective, where = name, _key(path, "name")
    elif isinstance(prefix, str) and prefix:
        effective, where = generated_name(prefix), _key(path, "generateName")
        # apimachinery validates the prefix with its trailing dash masked
        masked = prefix[:-1] + "a" if prefix.endswith("-") else prefix
        for error in dns1123_subdomain(masked):
            out.append((where, f"Invalid value {prefix!r}: {error}"))
    elif assumed_name is not None:
        effective, where = assumed_name, path
        prefix = f"Katib's trial name {assumed_name!r}"
    elif require_name:
        out.append((_key(path, "name"), "Required value: name or generateName is required"))
    if effective is not None and name_rule is not None:
        if effective == name:
            described = repr(effective)
        elif assumed_name is not None and effective == assumed_name:
            described = f"{effective!r} (the name Katib gives the trial)"
        else:
            described = f"{effective!r} (generated from {prefix!r})"
        for error in name_rule(effective):
            out.append((where, f"Invalid name {described}: {error}"))
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace:
        for error in dns1123_label(namespace):
            out.append((_key(path, "namespace"), f"Invalid namespace {namespace!r}: {error}"))
    _check_labels(metadata.get("labels"), _key(path, "labels"), out)
    _check_annotations(metadata.get("annotations"), _key(path, "annotations"), out)
    return effective


# ---------------------------------------------------------------------------------------
# Pods (k8s.io/kubernetes/pkg/apis/core/validation/validation.go: ValidatePodSpec and
# validateContainers), the parts the schemas do not say
# ---------------------------------------------------------------------------------------

# IsStandardContainerResourceName; any other must be fully qualified (example.com/gpu)
_STANDARD_RESOURCES = {"cpu", "memory", "ephemeral-storage"}


def _check_resource_requirements(resources: Any, path: str, out: Violations) -> None:
    if not isinstance(resources, Mapping):
        return
    amounts: dict[str, dict[str, decimal.Decimal]] = {}
    for part in ("limits", "requests"):
        values = resources.get(part)
        if not isinstance(values, Mapping):
            continue
        amounts[part] = {}
        for name, value in values.items():
            where = _key(_key(path, part), name)
            if name not in _STANDARD_RESOURCES and not name.startswith("hugepages-"):
                errors = qualified_name(name)
                if not errors and "/" not in name:
                    errors = ["must be a standard resource name or fully qualified (domain/name)"]
                for error in errors:
                    out.append((where, f"Invalid resource name {name!r}: {error}"))
            amount = quantity(value)
            if amount is None:
                continue  # reported by the schema
            if amount < 0:
                out.append((where, f"must be greater than or equal to 0: {value!r}"))
            amounts[part][name] = amount
    for name, request in amounts.get("requests", {}).items():
        limit = amounts.get("limits", {}).get(name)
        if limit is not None and request > limit:
            out.append(
                (
                    _key(_key(path, "requests"), name),
                    f"must be less than or equal to {name} limit of {resources['limits'][name]}",
                )
            )


def check_container(container: Any, path: str, out: Violations, *, argo: bool = False) -> None:
    """Kubernetes' container rules (argo: an Argo template's container, named by Argo)."""
    if not isinstance(container, Mapping):
        return
    name = container.get("name")
    if isinstance(name, str) and (name or not argo):
        for error in dns1123_label(name):
            out.append((_key(path, "name"), f"Invalid container name {name!r}: {error}"))
    image = container.get("image")
    if not argo and (not isinstance(image, str) or not image.strip()):
        out.append((_key(path, "image"), "Required value: image"))
    env = container.get("env")
    if isinstance(env, list):
        for i, variable in enumerate(env):
            if not isinstance(variable, Mapping):
                continue
            where = _index(_key(path, "env"), i)
            variable_name = variable.get("name")
            if isinstance(variable_name, str) and not _C_IDENTIFIER_ENV.fullmatch(variable_name):
                out.append(
                    (
                        _key(where, "name"),
                        f"Invalid environment variable name {variable_name!r}: must consist of "
                        "alphabetic characters, digits, '_', '-' or '.', and must not start "
                        "with a digit",
                    )
                )
            source = variable.get("valueFrom")
            if isinstance(source, Mapping):
                if variable.get("value") not in (None, ""):
                    out.append((where, "may not have both value and valueFrom"))
                given = [k for k, v in source.items() if v is not None]
                if len(given) != 1:
                    out.append((_key(where, "valueFrom"), "must specify exactly one source"))
                for reference in ("secretKeyRef", "configMapKeyRef"):
                    selector = source.get(reference)
                    if isinstance(selector, Mapping):
                        at = _key(_key(where, "valueFrom"), reference)
                        key = selector.get("key")
                        if isinstance(key, str):
                            for error in config_map_key(key):
                                out.append((_key(at, "key"), f"Invalid key {key!r}: {error}"))
                        ref_name = selector.get("name")
                        if not ref_name:
                            out.append((_key(at, "name"), "Required value"))
                        elif isinstance(ref_name, str):
                            for error in dns1123_subdomain(ref_name):
                                out.append(
                                    (_key(at, "name"), f"Invalid name {ref_name!r}: {error}")
                                )
    ports = container.get("ports")
    if isinstance(ports, list):
        names = set()
        for i, port in enumerate(ports):
            if not isinstance(port, Mapping):
                continue
            where = _index(_key(path, "ports"), i)
            number = port.get("containerPort")
            if isinstance(number, int) and not 1 <= number <= 65535:
                out.append((_key(where, "containerPort"), "must be between 1 and 65535"))
            port_name = port.get("name")
            if isinstance(port_name, str) and port_name:
                if (
                    len(port_name) > 15
                    or not _IANA_SVC_NAME.fullmatch(port_name)
                    or not re.search("[a-z]", port_name)
                    or "--" in port_name
                    or port_name.startswith("-")
                    or port_name.endswith("-")
                ):
                    out.append((_key(where, "name"), f"Invalid port name {port_name!r}"))
                if port_name in names:
                    out.append((_key(where, "name"), f"Duplicate value: {port_name!r}"))
                names.add(port_name)
    _check_resource_requirements(container.get("resources"), _key(path, "resources"), out)
    security = container.get("securityContext")
    if isinstance(security, Mapping):
        if security.get("privileged") is True and security.get("allowPrivilegeEscalation") is False:
            out.append(
                (
                    _key(_key(path, "securityContext"), "allowPrivilegeEscalation"),
                    "cannot set allowPrivilegeEscalation to false and privileged to true",
                )
            )
        _check_ids(security, _key(path, "securityContext"), out)
    mounts = container.get("volumeMounts")
    if isinstance(mounts, list):
        seen = set()
        for i, mount in enumerate(mounts):
            if isinstance(mount, Mapping):
                mount_path = mount.get("mountPath")
                if mount_path in seen:
                    out.append(
                        (
                            _key(_index(_key(path, "volumeMounts"), i), "mountPath"),
                            f"must be unique: {mount_path!r}",
                        )
                    )
                seen.add(mount_path)


def _check_ids(security: Mapping[str, Any], path: str, out: Violations) -> None:
    for field in ("runAsUser", "runAsGroup"):
        value = security.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            out.append((_key(path, field), "must be between 0 and 2147483647, inclusive"))
    seccomp = security.get("seccompProfile")
    if isinstance(seccomp, Mapping):
        if seccomp.get("type") == "Localhost" and not seccomp.get("localhostProfile"):
            out.append(
                (
                    _key(_key(path, "seccompProfile"), "localhostProfile"),
                    "Required value for Localhost",
                )
            )
        if seccomp.get("type") != "Localhost" and seccomp.get("localhostProfile"):
            out.append(
                (
                    _key(_key(path, "seccompProfile"), "localhostProfile"),
                    "can only be set if type is Localhost",
                )
            )


def check_pod_spec(
    spec: Any, path: str, out: Violations, *, restart_policies: tuple[str, ...] | None = None
) -> None:
    """Kubernetes' pod rules on the spec of a pod template."""
    if not isinstance(spec, Mapping):
        return
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        out.append((_key(path, "containers"), "Required value: at least one container"))
        containers = []
    volumes = spec.get("volumes") if isinstance(spec.get("volumes"), list) else []
    volume_names = set()
    for i, volume in enumerate(volumes):
        if isinstance(volume, Mapping) and isinstance(volume.get("name"), str):
            vname = volume["name"]
            for error in dns1123_label(vname):
                out.append(
                    (
                        _key(_index(_key(path, "volumes"), i), "name"),
                        f"Invalid volume name: {error}",
                    )
                )
            if vname in volume_names:
                out.append(
                    (_key(_index(_key(path, "volumes"), i), "name"), f"Duplicate value: {vname!r}")
                )
            volume_names.add(vname)
    names = set()
    for field in ("initContainers", "containers"):
        group = spec.get(field)
        if not isinstance(group, list):
            continue
        for i, container in enumerate(group):
            where = _index(_key(path, field), i)
            check_container(container, where, out)
            if not isinstance(container, Mapping):
                continue
            name = container.get("name")
            if name in names:
                out.append((_key(where, "name"), f"Duplicate value: {name!r}"))
            names.add(name)
            for j, mount in enumerate(container.get("volumeMounts") or ()):
                if isinstance(mount, Mapping) and mount.get("name") not in volume_names:
                    out.append(
                        (
                            _key(_index(_key(where, "volumeMounts"), j), "name"),
                            f"Not found: {mount.get('name')!r} (no such volume)",
                        )
                    )
    policy = spec.get("restartPolicy")
    if restart_policies is not None:
        effective = policy if policy else "Always"  # the API server's default
        if effective not in restart_policies:
            out.append(
                (
                    _key(path, "restartPolicy"),
                    f"Unsupported value: {effective!r}: supported values: "
                    + ", ".join(repr(p) for p in restart_policies),
                )
            )
    elif policy not in (None, "Always", "OnFailure", "Never"):
        out.append((_key(path, "restartPolicy"), f"Unsupported value: {policy!r}"))
    account = spec.get("serviceAccountName")
    if isinstance(account, str) and account:
        for error in dns1123_subdomain(account):
            out.append((_key(path, "serviceAccountName"), f"Invalid value {account!r}: {error}"))
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool) and deadline < 1:
        out.append((_key(path, "activeDeadlineSeconds"), "must be greater than or equal to 1"))
    grace = spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
        out.append(
            (_key(path, "terminationGracePeriodSeconds"), "must be greater than or equal to 0")
        )
    security = spec.get("securityContext")
    if isinstance(security, Mapping):
        _check_ids(security, _key(path, "securityContext"), out)
    _check_labels(spec.get("nodeSelector"), _key(path, "nodeSelector"), out)


def check_pod_template(
    template: Any, path: str, out: Violations, *, restart_policies: tuple[str, ...] | None = None
) -> None:
    if not isinstance(template, Mapping):
        return
    metadata = template.get("metadata")
    if isinstance(metadata, Mapping):
        _check_labels(metadata.get("labels"), _key(_key(path, "metadata"), "labels"), out)
        _check_annotations(
            metadata.get("annotations"), _key(_key(path, "metadata"), "annotations"), out
        )
    check_pod_spec(template.get("spec"), _key(path, "spec"), out, restart_policies=restart_policies)


# ---------------------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------------------


class _Context:
    """Where an object is validated from: on its own, or as a Katib trial template (which
    has no name of its own: Katib gives it the trial's, ``trial_name`` at worst)."""

    def __init__(self, *, trial_name: str | None = None, trial: bool = False) -> None:
        self.trial = trial or trial_name is not None
        self.trial_name = trial_name


def validate(obj: Mapping[str, Any]) -> list[str]:
    """Violations of ``obj`` ("<Kind> <path>: <message>"); empty if a cluster would accept it."""
    return _validate(obj, _Context())


def _validate(obj: Any, context: _Context) -> list[str]:
    if not isinstance(obj, Mapping):
        return [f"object: must be a mapping, not {_type_name(obj)}"]
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    known = isinstance(api_version, str) and isinstance(kind, str)
    validator = _VALIDATORS.get((api_version, kind)) if known else None
    if validator is None:
        return [f"no schema for {api_version} {kind}"]
    out: Violations = []
    try:
        validator(obj, out, context)
    except (TypeError, AttributeError, KeyError, ValueError):
        # The rules beyond the schema assume an object of the schema's shape: one that is
        # not has violations already, which are the answer. Otherwise it is a bug here.
        if not out:
            raise
    seen = set()
    messages = []
    for path, message in out:
        text = f"{kind} {path}: {message}" if path else f"{kind}: {message}"
        if text not in seen:
            seen.add(text)
            messages.append(text)
    return messages


def _validate_embedded(obj: Any, path: str, out: Violations, context: _Context) -> None:
    for message in _validate(obj, context):
        out.append((path, message))


def _parse_manifest(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    documents = list(yaml.load_all(text, Loader=_YAML_LOADER))
    if len(documents) != 1:
        raise ValueError(f"expected one YAML document, found {len(documents)}")
    return documents[0]


def _check_root(obj: Mapping[str, Any], node: Node, out: Violations) -> None:
    """The schema on everything but metadata, which the API server checks as ObjectMeta."""
    body = dict(obj)
    if "metadata" in body:
        body["metadata"] = {}
    check(body, node, "", out)


# ---------------------------------------------------------------------------------------
# Argo Workflows (argoproj/argo-workflows v4.1.2: workflow/validate/validate.go,
# workflow/common/ancestry.go, util/template/, workflow/executor/resource.go)
# ---------------------------------------------------------------------------------------

ARGO_CRD = "argo/workflows-full.yaml.gz"
# validate.go: workflowFieldNameFmt, workflowFieldMaxLength, paramOrArtifactNameRegex
_ARGO_FIELD_NAME = re.compile(r"[a-zA-Z0-9][-a-zA-Z0-9]*")
_ARGO_PARAM_NAME = re.compile(r"[-a-zA-Z0-9_]+")
SAMPLE_WORKFLOW_UID = "0b6f5c1e-7d2a-4c3b-9e8f-1a2b3c4d5e6f"  # what {{workflow.uid}} becomes
_ARGO_PARAMETER = re.compile(r"{{[-a-zA-Z0-9]+(\.[-a-zA-Z0-9_]+)*}}")  # paramRegex
# common.GlobalVarValidWorkflowVariablePrefix: only tags with these prefixes are checked
_ARGO_PREFIXES = ("item.", "steps.", "inputs.", "outputs.", "pod.", "workflow.", "tasks.")
# ancestry.go: taskNameRegex, taskResultRegex
_ARGO_TASK_NAME = re.compile(
    r"([a-zA-Z0-9][-a-zA-Z0-9]*?\.[A-Z][a-zA-Z]+)|([a-zA-Z0-9][-a-zA-Z0-9]*)"
)
_ARGO_TASK_RESULT = re.compile(r"([a-zA-Z0-9][-a-zA-Z0-9]*?\.[A-Z][a-zA-Z]+)")
_ARGO_TASK_RESULTS = {
    "Succeeded",
    "Failed",
    "Errored",
    "Skipped",
    "Omitted",
    "Daemoned",
    "AnySucceeded",
    "AllFailed",
}
_ARGO_TYPES = (  # Template.GetType's order
    "container",
    "containerSet",
    "steps",
    "dag",
    "script",
    "resource",
    "data",
    "suspend",
    "http",
    "plugin",
)
_ARGO_LEAF = {"container", "containerSet", "script", "resource", "data", "http", "plugin"}
_ARGO_POD = {"container", "containerSet", "script", "resource", "data"}
_ARGO_RESOURCE_ACTIONS = ("get", "create", "apply", "delete", "replace", "patch")
_ARGO_RETRY_POLICIES = ("Always", "OnError", "OnFailure", "OnTransientError", "")
_PROMETHEUS_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")  # metrics.IsValidMetricName


def argo_field_name(name: str) -> list[str]:
    """validate.go isValidWorkflowFieldName: template, step and DAG task names."""
    errors = []
    if len(name) > 128:
        errors.append("must be no more than 128 characters")
    if not _ARGO_FIELD_NAME.fullmatch(name):
        errors.append(
            "name must consist of alpha-numeric characters or '-', and must start with an "
            "alpha-numeric character (e.g. My-name1-2, 123-NAME)"
        )
    return errors


def argo_tags(text: str) -> list[str]:
    """The {{tags}} of ``text`` as fasttemplate finds them; ValueError if one is unclosed."""
    tags, i = [], 0
    while True:
        start = text.find("{{", i)
        if start < 0:
            return tags
        end = text.find("}}", start + 2)
        if end < 0:
            raise ValueError(f"cannot find end tag '}}}}' after {text[start : start + 60]!r}")
        tags.append(text[start + 2 : end])
        i = end + 2


def _argo_type(template: Mapping[str, Any]) -> str | None:
    for kind in _ARGO_TYPES:
        if template.get(kind) is not None:
            return kind
    return None


def _argo_has_output(template: Mapping[str, Any]) -> bool:
    container_set = template.get("containerSet")
    main = isinstance(container_set, Mapping) and any(
        isinstance(c, Mapping) and c.get("name") == "main"
        for c in container_set.get("containers") or ()
    )
    return main or any(
        template.get(k) is not None for k in ("container", "script", "data", "http", "plugin")
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


class _Argo:
    """Argo's own validation of a Workflow (validate.Workflow with Opts{} at submission)."""

    def __init__(self, obj: Mapping[str, Any], out: Violations) -> None:
        self.obj = obj
        self.out = out
        self.spec = _mapping(obj.get("spec"))
        self.templates: dict[str, tuple[int, Mapping[str, Any]]] = {}
        self.globals: set[str] = set()
        self.any_output_parameter = False
        self.any_output_artifact = False

    def error(self, path: str, message: str) -> None:
        self.out.append((path, message))

    # -- variables ------------------------------------------------------------------

    def build_globals(self) -> None:
        spec, metadata = self.spec, _mapping(self.obj.get("metadata"))
        g = {
            "workflow.name",
            "workflow.namespace",
            "workflow.mainEntrypoint",
            "workflow.serviceAccountName",
            "workflow.uid",
            "workflow.status",
            "workflow.annotations",
            "workflow.annotations.json",
            "workflow.labels",
            "workflow.labels.json",
        }
        parameters = _list(_mapping(spec.get("arguments")).get("parameters"))
        if parameters:
            g |= {"workflow.parameters", "workflow.parameters.json"}
        for parameter in parameters:
            if isinstance(parameter, Mapping) and parameter.get("name"):
                g.add(f"workflow.parameters.{parameter['name']}")
        workflow_metadata = _mapping(spec.get("workflowMetadata"))
        for source in (metadata.get("annotations"), workflow_metadata.get("annotations")):
            g |= {f"workflow.annotations.{k}" for k in _mapping(source)}
        for source in (
            metadata.get("labels"),
            workflow_metadata.get("labels"),
            workflow_metadata.get("labelsFrom"),
        ):
            g |= {f"workflow.labels.{k}" for k in _mapping(source)}
        if spec.get("priority") is not None:
            g.add("workflow.priority")
        if spec.get("onExit"):
            g.add("workflow.failures")
        # outputs lifted to the workflow by globalName (added as Argo meets them)
        for template in _list(spec.get("templates")):
            outputs = _mapping(_mapping(template).get("outputs"))
            for kind, flag in (
                ("parameters", "any_output_parameter"),
                ("artifacts", "any_output_artifact"),
            ):
                for output in _list(outputs.get(kind)):
                    global_name = _mapping(output).get("globalName")
                    if isinstance(global_name, str) and global_name:
                        if _ARGO_PARAMETER.search(global_name):
                            setattr(self, flag, True)
                        else:
                            g.add(f"workflow.outputs.{kind}.{global_name}")
        self.globals = g

    def unresolved(
        self, value: Any, scope: set[str], *, extra: set[str] | None = None, any_item: bool = False
    ) -> list[str]:
        """resolveAllVariables on the JSON of ``value`` (in ``scope``, ``extra`` and globals)."""
        text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        if "{{" not in text:
            return []
        try:
            tags = argo_tags(text)
        except ValueError as error:
            return [str(error)]
        errors = []
        for tag in tags:
            if tag.startswith("="):
                continue  # an expression: Argo does not validate those
            name = tag.strip()
            if not name.startswith(_ARGO_PREFIXES) or name in scope or name in self.globals:
                continue
            if extra is not None and name in extra:
                continue
            if (name == "item" or name.startswith("item.")) and any_item:
                continue
            if name.startswith("workflow.outputs.parameters.") and self.any_output_parameter:
                continue
            if name.startswith("workflow.outputs.artifacts.") and self.any_output_artifact:
                continue
            if name.startswith(
                (
                    "outputs.",
                    "workflow.creationTimestamp",
                    "workflow.scheduledTime",
                    "workflow.duration",
                    "tasks.name",
                    "steps.name",
                    "node.name",
                )
            ):
                continue
            errors.append(f"failed to resolve {{{{{tag}}}}}")
        return errors

    # -- workflow -------------------------------------------------------------------

    def run(self) -> None:
        spec = self.spec
        self.build_globals()
        templates = _list(spec.get("templates"))
        names: set[str] = set()
        for i, template in enumerate(templates):
            if not isinstance(template, Mapping):
                continue
            name = template.get("name")
            where = _key(_index("spec.templates", i), "name")
            if not isinstance(name, str) or not name:
                self.error(where, "Required value: template name")
                continue
            for error in argo_field_name(name):
                self.error(where, f"Invalid template name {name!r}: {error}")
            if name in names:
                self.error(where, f"template name {name!r} is not unique")
            names.add(name)
            self.templates.setdefault(name, (i, template))
        arguments = _mapping(spec.get("arguments"))
        self.check_arguments(arguments, "spec.arguments")
        if spec.get("workflowTemplateRef") is not None:
            if templates:
                self.error(
                    "spec.templates",
                    "Templates is invalid field in spec if workflow referred WorkflowTemplate "
                    "reference",
                )
            return  # the referenced template is not here to validate
        entrypoint = spec.get("entrypoint")
        if not entrypoint:
            self.error("spec.entrypoint", "Required value: spec.entrypoint is required")
        elif entrypoint not in self.templates:
            self.error("spec.entrypoint", f"template name {entrypoint!r} undefined")
        else:
            self.check_call(entrypoint, arguments, "spec.entrypoint", "spec.arguments")
        on_exit = spec.get("onExit")
        if on_exit and on_exit not in self.templates:
            self.error("spec.onExit", f"template name {on_exit!r} undefined")
        for hook_name, hook in _mapping(spec.get("hooks")).items():
            if hook_name != "exit" and not _mapping(hook).get("expression"):
                self.error(_key("spec.hooks", hook_name), "Expression required")
        for i, template in enumerate(templates):
            if isinstance(template, Mapping) and isinstance(template.get("name"), str):
                self.check_template(template, _index("spec.templates", i))

    def check_arguments(self, arguments: Mapping[str, Any], path: str) -> None:
        """validateArguments with allowEmptyValues false."""
        for kind in ("parameters", "artifacts"):
            seen: set[str] = set()
            for i, item in enumerate(_list(arguments.get(kind))):
                item = _mapping(item)
                where = _index(_key(path, kind), i)
                name = item.get("name")
                if not isinstance(name, str) or not name:
                    self.error(_key(where, "name"), "Required value: name")
                    continue
                if not _ARGO_PARAM_NAME.fullmatch(name):
                    self.error(
                        _key(where, "name"),
                        f"{name!r} is invalid: Parameter/Artifact name must consist of "
                        "alpha-numeric characters, '_' or '-' e.g. my_param_1, MY-PARAM-1",
                    )
                if name in seen:
                    self.error(_key(where, "name"), f"{name!r} is not unique")
                seen.add(name)
                if kind == "artifacts":
                    has_location = any(
                        item.get(k) is not None
                        for k in (*_ARGO_ARTIFACT_LOCATIONS, "plugin", "key")
                    )
                    if not item.get("from") and not has_location and not item.get("fromExpression"):
                        self.error(where, f"{name}.from, artifact location, or key is required")
                    if item.get("from") and item.get("fromExpression"):
                        self.error(where, f"{name} shouldn't have both `from` and `fromExpression`")
                    continue
                value_from = item.get("valueFrom")
                if item.get("value") is None and value_from is None:
                    self.error(where, f"{name}.value or {name}.valueFrom is required")
                if isinstance(value_from, Mapping):
                    allowed = any(value_from.get(k) for k in ("configMapKeyRef", "event")) or (
                        value_from.get("supplied") is not None
                    )
                    forbidden = any(
                        value_from.get(k) for k in ("path", "jsonPath", "parameter", "expression")
                    )
                    if not allowed or forbidden:
                        self.error(
                            _key(where, "valueFrom"),
                            f"{name}.valueFrom only allows: default, configMapKeyRef and supplied",
                        )
                enum = item.get("enum")
                if isinstance(enum, list):
                    if not enum:
                        self.error(_key(where, "enum"), "should contain at least one value")
                    elif item.get("value") is None:
                        self.error(
                            _key(where, "value"), "Required value (the parameter has an enum)"
                        )
                    elif item.get("value") not in enum:
                        self.error(_key(where, "value"), "should be present in the enum list")

    def check_call(
        self, template_name: str, arguments: Mapping[str, Any], where: str, arguments_path: str
    ) -> Mapping[str, Any] | None:
        """ProcessArgs with the caller's arguments: every input without a value is given."""
        if template_name not in self.templates:
            return None
        _, template = self.templates[template_name]
        given = {
            p.get("name"): p for p in _list(arguments.get("parameters")) if isinstance(p, Mapping)
        }
        values = {}
        for parameter in _list(_mapping(template.get("inputs")).get("parameters")):
            parameter = _mapping(parameter)
            name = parameter.get("name")
            argument = given.get(name)
            value = parameter.get("value", parameter.get("default"))
            if argument is not None and (
                argument.get("value") is not None or argument.get("valueFrom") is not None
            ):
                value = argument.get("value")
            elif (
                parameter.get("value") is None
                and parameter.get("default") is None
                and parameter.get("valueFrom") is None
            ):
                self.error(
                    arguments_path,
                    f"inputs.parameters.{name} was not supplied: template {template_name!r} "
                    f"needs it (no value, default or valueFrom) and {where} does not give it",
                )
                continue
            values[name] = value
        for artifact in _list(_mapping(template.get("inputs")).get("artifacts")):
            artifact = _mapping(artifact)
            has_location = any(
                artifact.get(k) is not None for k in (*_ARGO_ARTIFACT_LOCATIONS, "plugin", "key")
            )
            supplied = any(
                _mapping(a).get("name") == artifact.get("name")
                for a in _list(arguments.get("artifacts"))
            )
            if not artifact.get("optional") and not has_location and not supplied:
                self.error(
                    arguments_path, f"inputs.artifacts.{artifact.get('name')} was not supplied"
                )
        # the timeout, as substituted with these arguments
        timeout = template.get("timeout")
        if isinstance(timeout, str) and timeout:
            substituted = self.substitute(timeout, values)
            if "{{" not in substituted and re.fullmatch(r"[+-]?[0-9]+", substituted):
                self.error(where, f"{template_name} has invalid duration format in timeout")
        return template

    @staticmethod
    def substitute(text: str, values: Mapping[str, Any]) -> str:
        def replace(match: re.Match[str]) -> str:
            name = match[1].strip()
            if name.startswith("inputs.parameters.") and name[18:] in values:
                value = values[name[18:]]
                return value if isinstance(value, str) else json.dumps(value)
            return match[0]

        return re.sub(r"{{(.*?)}}", replace, text)

    # -- templates ------------------------------------------------------------------

    def template_scope(self, template: Mapping[str, Any], kind: str | None) -> set[str]:
        scope: set[str] = set()
        inputs = _mapping(template.get("inputs"))
        parameters = _list(inputs.get("parameters"))
        for parameter in parameters:
            if isinstance(parameter, Mapping) and parameter.get("name"):
                scope.add(f"inputs.parameters.{parameter['name']}")
        if parameters:
            scope.add("inputs.parameters")
        for artifact in _list(inputs.get("artifacts")):
            if isinstance(artifact, Mapping) and artifact.get("name"):
                scope.add(f"inputs.artifacts.{artifact['name']}")
                if kind in _ARGO_LEAF:
                    scope.add(f"inputs.artifacts.{artifact['name']}.path")
        if kind in _ARGO_POD:
            scope.add("pod.name")
        if kind in _ARGO_LEAF:
            outputs = _mapping(template.get("outputs"))
            for artifact in _list(outputs.get("artifacts")):
                if isinstance(artifact, Mapping) and artifact.get("path"):
                    scope.add(f"outputs.artifacts.{artifact.get('name')}.path")
            for parameter in _list(outputs.get("parameters")):
                if isinstance(parameter, Mapping) and _mapping(parameter.get("valueFrom")).get(
                    "path"
                ):
                    scope.add(f"outputs.parameters.{parameter.get('name')}.path")
        return scope

    def check_template(self, template: Mapping[str, Any], path: str) -> None:
        name = template["name"]
        types = [k for k in _ARGO_TYPES if template.get(k) is not None]
        if not types:
            self.error(
                path,
                f"templates.{name} template type unspecified. choose one of: container, "
                "containerSet, steps, script, resource, dag, suspend, template, template ref",
            )
        elif len(types) > 1:
            self.error(
                path, f"templates.{name} multiple template types specified: {', '.join(types)}"
            )
        kind = _argo_type(template)
        leaf = kind in _ARGO_LEAF
        inputs = _mapping(template.get("inputs"))
        for field in ("parameters", "artifacts"):
            seen: set[str] = set()
            for i, item in enumerate(_list(inputs.get(field))):
                item_name = _mapping(item).get("name")
                where = _key(_index(_key(_key(path, "inputs"), field), i), "name")
                if not isinstance(item_name, str) or not item_name:
                    self.error(where, "Required value: name")
                    continue
                if not _ARGO_PARAM_NAME.fullmatch(item_name):
                    self.error(
                        where,
                        f"{item_name!r} is invalid: Parameter/Artifact name must consist of "
                        "alpha-numeric characters, '_' or '-'",
                    )
                if item_name in seen:
                    self.error(where, f"{item_name!r} is not unique")
                seen.add(item_name)
        for i, container in enumerate(_list(template.get("initContainers"))):
            if not _mapping(container).get("name"):
                self.error(
                    _index(_key(path, "initContainers"), i),
                    "initContainers must all have container name",
                )
        retry = _mapping(template.get("retryStrategy"))
        if retry.get("retryPolicy") not in (*_ARGO_RETRY_POLICIES, None):
            self.error(
                _key(_key(path, "retryStrategy"), "retryPolicy"),
                f"{retry['retryPolicy']} is not a valid RetryPolicy",
            )
        timeout = template.get("timeout")
        if isinstance(timeout, str) and timeout:
            if not leaf:
                self.error(_key(path, "timeout"), f"{kind} template doesn't support timeout field")
            elif re.fullmatch(r"[+-]?[0-9]+", timeout):
                self.error(_key(path, "timeout"), f"{name} has invalid duration format in timeout")
        if template.get("pendingTimeout") and not leaf:
            self.error(
                _key(path, "pendingTimeout"),
                f"{kind} template doesn't support pendingTimeout field",
            )
        scope = self.template_scope(template, kind)
        if template.get("retryStrategy") is not None:
            scope |= {
                "retries",
                "lastRetry.exitCode",
                "lastRetry.status",
                "lastRetry.duration",
                "lastRetry.message",
            }
        if kind == "dag":
            if template.get("activeDeadlineSeconds") is not None:
                self.error(_key(path, "activeDeadlineSeconds"), "is only valid for leaf templates")
            self.check_dag(template, path, scope)
        elif kind == "steps":
            if template.get("activeDeadlineSeconds") is not None:
                self.error(_key(path, "activeDeadlineSeconds"), "is only valid for leaf templates")
            self.check_steps(template, path, scope)
        elif kind is not None:
            self.check_leaf(template, path, scope, kind)
        self.check_outputs(template, path, scope, kind)
        for i, metric in enumerate(_list(_mapping(template.get("metrics")).get("prometheus"))):
            metric = _mapping(metric)
            where = _index(_key(_key(path, "metrics"), "prometheus"), i)
            if not isinstance(metric.get("name"), str) or not _PROMETHEUS_NAME.fullmatch(
                metric["name"]
            ):
                self.error(
                    _key(where, "name"),
                    "metric name is invalid: names may only contain alphanumeric characters or '_'",
                )
            if not metric.get("help"):
                self.error(_key(where, "help"), "metric must contain a help string")

    def check_leaf(
        self, template: Mapping[str, Any], path: str, scope: set[str], kind: str
    ) -> None:
        name = template["name"]
        for error in self.unresolved(_without_input_values(template), scope):
            self.error(path, f"templates.{name}: {error}")
        defaults = _mapping(self.spec.get("templateDefaults"))
        container = template.get("container")
        if isinstance(container, Mapping):
            if not container.get("image") and not _mapping(defaults.get("container")).get("image"):
                self.error(
                    _key(_key(path, "container"), "image"),
                    f"templates.{name}.container.image may not be empty",
                )
            check_container(container, _key(path, "container"), self.out, argo=True)
            mounts: dict[str, str] = {}
            for i, mount in enumerate(_list(container.get("volumeMounts"))):
                mount_path = _mapping(mount).get("mountPath")
                if mount_path in mounts:
                    self.error(
                        _index(_key(_key(path, "container"), "volumeMounts"), i),
                        f"mountPath {mount_path!r} already mounted",
                    )
                mounts[mount_path] = "volume"
            for i, artifact in enumerate(_list(_mapping(template.get("inputs")).get("artifacts"))):
                artifact_path = _mapping(artifact).get("path")
                if artifact_path and artifact_path in mounts:
                    self.error(
                        _index(_key(_key(path, "inputs"), "artifacts"), i),
                        f"path {artifact_path!r} already mounted",
                    )
        script = template.get("script")
        if isinstance(script, Mapping):
            if not script.get("image") and not _mapping(defaults.get("script")).get("image"):
                self.error(
                    _key(_key(path, "script"), "image"),
                    f"templates.{name}.script.image may not be empty",
                )
            check_container(script, _key(path, "script"), self.out, argo=True)
        for i, sidecar in enumerate(_list(template.get("sidecars"))):
            sidecar_name = _mapping(sidecar).get("name")
            if sidecar_name in ("wait", "init") or (
                isinstance(sidecar_name, str) and sidecar_name.startswith("artifact-plugin-")
            ):
                self.error(
                    _index(_key(path, "sidecars"), i),
                    f"{sidecar_name!r} is a reserved Argo container name",
                )
        resource = template.get("resource")
        if isinstance(resource, Mapping):
            self.check_resource(resource, _key(path, "resource"), name)
        deadline = template.get("activeDeadlineSeconds")
        if deadline is not None:
            valid = (
                isinstance(deadline, int) and not isinstance(deadline, bool) and deadline >= 0
            ) or (
                isinstance(deadline, str)
                and (
                    re.fullmatch(r"[0-9]+", deadline)
                    or _ARGO_PARAMETER.fullmatch(deadline)
                    or deadline.startswith("{{")
                )
            )
            if not valid:
                self.error(
                    _key(path, "activeDeadlineSeconds"),
                    f"templates.{name}.activeDeadlineSeconds must be a positive integer > 0 or "
                    "an argo variable",
                )
        if template.get("parallelism") is not None:
            self.error(
                _key(path, "parallelism"),
                f"templates.{name}.parallelism is only valid for steps and dag templates",
            )

    def check_resource(self, resource: Mapping[str, Any], path: str, name: str) -> None:
        action = resource.get("action")
        if isinstance(action, str) and "{{" not in action and action not in _ARGO_RESOURCE_ACTIONS:
            self.error(_key(path, "action"), "must be one of: " + ", ".join(_ARGO_RESOURCE_ACTIONS))
        manifest = resource.get("manifest")
        if action not in ("delete", "get"):
            if not manifest and resource.get("manifestFrom") is None:
                self.error(
                    path,
                    f"either templates.{name}.resource.manifest or "
                    f"templates.{name}.resource.manifestFrom must be specified",
                )
            if manifest and resource.get("manifestFrom") is not None:
                self.error(path, "shouldn't have both `manifest` and `manifestFrom` specified")
        if isinstance(manifest, str) and manifest and "{{" not in manifest:
            self.check_manifest(manifest, _key(path, "manifest"))
        for field in ("successCondition", "failureCondition"):
            condition = resource.get(field)
            if isinstance(condition, str) and condition and "{{" not in condition:
                for error in label_selector_errors(condition):
                    self.error(_key(path, field), f"{field} {condition!r} failed to parse: {error}")

    def check_manifest(self, text: str, path: str) -> None:
        try:
            manifest = _parse_manifest(text)
        except (ValueError, yaml.YAMLError) as error:
            self.error(path, f"must be a valid yaml (or JSON) manifest: {error}")
            return
        _validate_embedded(manifest, path, self.out, _Context())

    def check_outputs(
        self, template: Mapping[str, Any], path: str, scope: set[str], kind: str | None
    ) -> None:
        outputs = _mapping(template.get("outputs"))
        if not outputs:
            return
        for error in self.unresolved(dict(outputs), scope):
            self.error(_key(path, "outputs"), error)
        for field in ("parameters", "artifacts"):
            seen: set[str] = set()
            for i, item in enumerate(_list(outputs.get(field))):
                item = _mapping(item)
                where = _index(_key(_key(path, "outputs"), field), i)
                item_name = item.get("name")
                if not isinstance(item_name, str) or not item_name:
                    self.error(_key(where, "name"), "Required value: name")
                    continue
                if not _ARGO_PARAM_NAME.fullmatch(item_name):
                    self.error(
                        _key(where, "name"),
                        f"{item_name!r} is invalid: Parameter/Artifact name must consist of "
                        "alpha-numeric characters, '_' or '-'",
                    )
                if item_name in seen:
                    self.error(_key(where, "name"), f"{item_name!r} is not unique")
                seen.add(item_name)
                global_name = item.get("globalName")
                if (
                    isinstance(global_name, str)
                    and global_name
                    and not _ARGO_PARAMETER.search(global_name)
                    and not _ARGO_PARAM_NAME.fullmatch(global_name)
                ):
                    self.error(
                        _key(where, "globalName"),
                        "Parameter/Artifact name must consist of alpha-numeric characters, "
                        "'_' or '-'",
                    )
                if field == "artifacts":
                    if kind not in _ARGO_LEAF and item.get("path"):
                        self.error(
                            _key(where, "path"), "path only valid in container/script templates"
                        )
                    continue
                value_from = item.get("valueFrom")
                if value_from is not None and item.get("value") is not None:
                    self.error(where, "has both valueFrom and value specified, choose one")
                    continue
                if item.get("value") is not None:
                    continue
                if not isinstance(value_from, Mapping):
                    self.error(where, "does not have valueFrom or value specified")
                    continue
                sources = [
                    k
                    for k in ("path", "jqFilter", "jsonPath", "parameter", "expression")
                    if value_from.get(k)
                ]
                if value_from.get("supplied") is not None:
                    sources.append("supplied")
                if len(sources) != 1:
                    self.error(
                        _key(where, "valueFrom"),
                        "valueFrom type unspecified or multiple: choose one of path, jqFilter, "
                        "jsonPath, parameter, expression, supplied",
                    )
                if kind in ("container", "containerSet", "script") and not value_from.get("path"):
                    self.error(
                        _key(where, "valueFrom"), f"path must be specified for {kind} templates"
                    )
                elif kind == "resource" and not (
                    value_from.get("jqFilter") or value_from.get("jsonPath")
                ):
                    self.error(
                        _key(where, "valueFrom"),
                        "jqFilter or jsonPath must be specified for resource templates",
                    )
                elif kind in ("dag", "steps") and not (
                    value_from.get("parameter") or value_from.get("expression")
                ):
                    self.error(
                        _key(where, "valueFrom"),
                        f"parameter or expression must be specified for {kind} templates",
                    )

    # -- DAGs -----------------------------------------------------------------------

    @staticmethod
    def task_dependencies(task: Mapping[str, Any]) -> dict[str, str]:
        """common.GetTaskDependencies: task name -> "task" or "items"."""
        depends = task.get("depends")
        result: dict[str, str] = {}
        if isinstance(depends, str) and depends:
            for match in _ARGO_TASK_NAME.finditer(depends):
                if match[1]:
                    dependency, outcome = match[1].split(".", 1)
                    if outcome in ("AnySucceeded", "AllFailed"):
                        result[dependency] = "items"
                    else:
                        result.setdefault(dependency, "task")
                else:
                    result[match[2]] = "task"
            return result
        for dependency in _list(task.get("dependencies")):
            if isinstance(dependency, str):
                result[dependency] = "task"
        return result

    def check_dag(self, template: Mapping[str, Any], path: str, scope: set[str]) -> None:
        name = template["name"]
        dag = _mapping(template.get("dag"))
        dag_path = _key(path, "dag")
        tasks = [t for t in _list(dag.get("tasks")) if isinstance(t, Mapping)]
        if not tasks:
            self.error(_key(dag_path, "tasks"), f"templates.{name} must have at least one task")
            return
        using_depends = any(t.get("depends") for t in tasks)
        by_name: dict[str, tuple[int, Mapping[str, Any]]] = {}
        for i, task in enumerate(_list(dag.get("tasks"))):
            if not isinstance(task, Mapping):
                continue
            task_name = task.get("name")
            where = _key(_index(_key(dag_path, "tasks"), i), "name")
            if not isinstance(task_name, str) or not task_name:
                self.error(where, "Required value: task name")
                continue
            for error in argo_field_name(task_name):
                self.error(where, f"Invalid task name {task_name!r}: {error}")
            if task_name in by_name:
                self.error(where, f"task name {task_name!r} is not unique")
                continue
            by_name[task_name] = (i, task)
        dependencies = {n: self.task_dependencies(t) for n, (_, t) in by_name.items()}
        resolved: dict[str, Mapping[str, Any] | None] = {}
        for task_name, (i, task) in by_name.items():
            where = _index(_key(dag_path, "tasks"), i)
            if (using_depends or task.get("dependencies")) and task_name[:1].isdigit():
                self.error(
                    _key(where, "name"),
                    f"templates.{name}.tasks.{task_name} name cannot begin with a digit when "
                    "using either 'depends' or 'dependencies'",
                )
            if using_depends and task.get("dependencies"):
                self.error(
                    where,
                    f"templates.{name} cannot use both 'depends' and 'dependencies' in the same "
                    "DAG template",
                )
            if using_depends and task.get("continueOn") is not None:
                self.error(where, f"templates.{name} cannot use 'continueOn' when using 'depends'")
            resolved[task_name] = self.check_holder(task, where)
            depends = task.get("depends")
            if isinstance(depends, str):
                for match in _ARGO_TASK_RESULT.finditer(depends):
                    dependency, outcome = match[1].split(".", 1)
                    if outcome not in _ARGO_TASK_RESULTS:
                        self.error(
                            _key(where, "depends"),
                            f"task result {outcome!r} for task {dependency!r} is invalid",
                        )
            for dependency, kind in dependencies[task_name].items():
                if dependency not in by_name:
                    self.error(
                        _key(where, "depends" if task.get("depends") else "dependencies"),
                        f"templates.{name}.tasks.{task_name} dependency {dependency!r} not defined",
                    )
                elif kind == "items":
                    other = by_name[dependency][1]
                    if (
                        not other.get("withItems")
                        and not other.get("withParam")
                        and other.get("withSequence") is None
                    ):
                        self.error(
                            _key(where, "depends"),
                            f"dependency {dependency!r} uses an items-based condition such as "
                            ".AnySucceeded or .AllFailed but does not contain any items",
                        )
        cycle = _find_cycle(
            {n: [d for d in deps if d in by_name] for n, deps in dependencies.items()}
        )
        if cycle:
            self.error(
                _key(dag_path, "tasks"),
                f"templates.{name}.tasks dependency cycle detected: {'->'.join(cycle)}",
            )
            return
        for task_name, (_, task) in by_name.items():
            self.add_outputs(scope, "tasks", task_name, resolved.get(task_name), task)
        target = dag.get("target")
        if isinstance(target, str) and target:
            for error in self.unresolved(target, scope):
                self.error(_key(dag_path, "target"), error)
            for target_name in target.split(" "):
                if not _ARGO_PARAMETER.search(target_name) and target_name not in by_name:
                    self.error(_key(dag_path, "target"), f"target {target_name!r} is not defined")
        ancestry = _ancestry(
            {n: [d for d in deps if d in by_name] for n, deps in dependencies.items()}
        )
        for task_name, (i, task) in by_name.items():
            where = _index(_key(dag_path, "tasks"), i)
            task_scope: set[str] = set()
            if task.get("hooks") is not None:
                task_scope.add(f"tasks.{task_name}.status")
            for ancestor in ancestry[task_name]:
                task_scope.add(f"tasks.{ancestor}.status")
                other = by_name[ancestor][1]
                if other.get("withItems") or other.get("withParam"):
                    task_scope.add(f"tasks.{ancestor}.outputs.parameters")
            for parameter in _list(
                _mapping(_mapping(task.get("inline")).get("inputs")).get("parameters")
            ):
                task_scope.add(f"inputs.parameters.{_mapping(parameter).get('name')}")
            any_item = self.add_items(task, where, task_scope)
            for error in self.unresolved(task, scope, extra=task_scope, any_item=any_item):
                self.error(where, f"templates.{name}.tasks.{task_name} {error}")
            arguments = _mapping(task.get("arguments"))
            self.check_arguments(arguments, _key(where, "arguments"))
            for j, parameter in enumerate(_list(arguments.get("parameters"))):
                value = _mapping(parameter).get("value")
                if isinstance(value, str) and value.startswith("{{tasks."):
                    referenced = value.split(".")[1]
                    if referenced not in ancestry[task_name]:
                        self.error(
                            _index(_key(_key(where, "arguments"), "parameters"), j),
                            f"missing dependency {referenced!r} for parameter "
                            f"{_mapping(parameter).get('name')!r}",
                        )
            for j, artifact in enumerate(_list(arguments.get("artifacts"))):
                source = _mapping(artifact).get("from")
                if isinstance(source, str) and source.startswith("{{tasks."):
                    referenced = source.split(".")[1]
                    if referenced not in ancestry[task_name]:
                        self.error(
                            _index(_key(_key(where, "arguments"), "artifacts"), j),
                            f"missing dependency {referenced!r} for artifact "
                            f"{_mapping(artifact).get('name')!r}",
                        )
            template_name = task.get("template")
            if isinstance(template_name, str) and template_name in self.templates:
                self.check_call(template_name, arguments, where, _key(where, "arguments"))
                self.check_task_manifests(task, where)

    def check_holder(self, holder: Mapping[str, Any], where: str) -> Mapping[str, Any] | None:
        """validateTemplateHolder: the template a step or task calls."""
        reference = holder.get("templateRef")
        template_name = holder.get("template")
        if reference is not None:
            if template_name:
                self.error(where, "template name cannot be specified with templateRef")
            reference = _mapping(reference)
            if not reference.get("name"):
                self.error(_key(where, "templateRef"), "resource name is required")
            if not reference.get("template"):
                self.error(_key(where, "templateRef"), "template name is required")
            return None  # a WorkflowTemplate in the cluster: not here to check
        if holder.get("inline") is not None:
            return _mapping(holder.get("inline"))
        if not template_name:
            self.error(where, "Required value: template, templateRef or inline")
            return None
        if template_name not in self.templates:
            self.error(_key(where, "template"), f"template name {template_name!r} undefined")
            return None
        return self.templates[template_name][1]

    def add_items(self, holder: Mapping[str, Any], where: str, scope: set[str]) -> bool:
        """addItemsToScope; True when any {{item.*}} may be referenced (withParam)."""
        items, param, sequence = (
            holder.get("withItems"),
            holder.get("withParam"),
            holder.get("withSequence"),
        )
        if sum(bool(x) for x in (items, param)) + (sequence is not None) > 1:
            self.error(where, "only one of withItems, withParam, withSequence can be specified")
        if isinstance(items, list) and items:
            for item in items:
                if isinstance(item, Mapping):
                    scope.update(f"item.{k}" for k in item)
                elif isinstance(item, list):
                    scope.update(f"item.[{i}]" for i in range(len(item)))
                else:
                    scope.add("item")
        elif param:
            scope.add("item")
            return True
        elif sequence is not None:
            scope.add("item")
        return False

    def add_outputs(
        self,
        scope: set[str],
        prefix: str,
        name: str,
        template: Mapping[str, Any] | None,
        holder: Mapping[str, Any],
    ) -> None:
        """addOutputsToScope (with the aggregate outputs of looped tasks)."""
        base = f"{prefix}.{name}"
        scope |= {f"{base}.id", f"{base}.startedAt", f"{base}.finishedAt", f"{base}.hostNodeName"}
        if template is None:
            return
        if template.get("daemon"):
            scope.add(f"{base}.ip")
        if _argo_has_output(template):
            scope |= {f"{base}.outputs.result", f"{base}.exitCode"}
        outputs = _mapping(template.get("outputs"))
        for parameter in _list(outputs.get("parameters")):
            scope.add(f"{base}.outputs.parameters.{_mapping(parameter).get('name')}")
        for artifact in _list(outputs.get("artifacts")):
            scope.add(f"{base}.outputs.artifacts.{_mapping(artifact).get('name')}")
        if holder.get("withItems") or holder.get("withParam"):
            scope.add(f"{base}.outputs.parameters")
            if template.get("script") is not None or template.get("containerSet") is not None:
                scope |= {f"{base}.outputs.result", f"{base}.exitCode"}

    def check_task_manifests(self, task: Mapping[str, Any], where: str) -> None:
        """The objects a task's resource template creates, and its label-selector conditions."""
        _, template = self.templates[task["template"]]
        resource = _mapping(template.get("resource"))
        arguments = {
            _mapping(p).get("name"): (j, _mapping(p).get("value"))
            for j, p in enumerate(_list(_mapping(task.get("arguments")).get("parameters")))
        }

        def argument_for(field: str) -> str | None:
            value = resource.get(field)
            if isinstance(value, str):
                match = re.fullmatch(r"{{\s*inputs\.parameters\.([-a-zA-Z0-9_]+)\s*}}", value)
                if match:
                    return match[1]
            return None

        manifests = {"manifest"} if "manifest" in arguments else set()
        manifest_argument = argument_for("manifest") if resource else None
        if manifest_argument:
            manifests.add(manifest_argument)
        for argument in sorted(manifests):
            if argument not in arguments:
                continue
            j, value = arguments[argument]
            at = _key(_index(_key(_key(where, "arguments"), "parameters"), j), "value")
            if isinstance(value, str):  # Argo substitutes the Workflow's uid (a global)
                value = value.replace("{{workflow.uid}}", SAMPLE_WORKFLOW_UID)
            if isinstance(value, str) and "{{" not in value:
                self.check_manifest(value, at)
        if not resource:
            return
        for field in ("successCondition", "failureCondition"):
            argument = argument_for(field)
            if argument is None or argument not in arguments:
                continue
            j, value = arguments[argument]
            at = _key(_index(_key(_key(where, "arguments"), "parameters"), j), "value")
            if isinstance(value, str) and value and "{{" not in value:
                for error in label_selector_errors(value):
                    self.error(at, f"{field} {value!r} failed to parse: {error}")

    # -- steps ----------------------------------------------------------------------

    def check_steps(self, template: Mapping[str, Any], path: str, scope: set[str]) -> None:
        name = template["name"]
        names: set[str] = set()
        for i, group in enumerate(_list(template.get("steps"))):
            for k, step in enumerate(_list(group)):
                if not isinstance(step, Mapping):
                    continue
                where = _index(_index(_key(path, "steps"), i), k)
                step_name = step.get("name")
                if not isinstance(step_name, str) or not step_name:
                    self.error(_key(where, "name"), f"templates.{name}.steps[{i}].name is required")
                    continue
                if step_name in names:
                    self.error(
                        _key(where, "name"),
                        f"templates.{name}.steps[{i}].name {step_name!r} is not unique",
                    )
                for error in argo_field_name(
                    re.sub(r"__argo__internal__placeholder-\d+", "x", step_name)
                ):
                    self.error(_key(where, "name"), f"Invalid step name {step_name!r}: {error}")
                names.add(step_name)
                scope.add(f"steps.{step_name}.status")
                step_scope = set(scope)
                any_item = self.add_items(step, where, step_scope)
                arguments = _mapping(step.get("arguments"))
                self.check_arguments(arguments, _key(where, "arguments"))
                resolved = self.check_holder(step, where)
                for parameter in _list(
                    _mapping(_mapping(step.get("inline")).get("inputs")).get("parameters")
                ):
                    step_scope.add(f"inputs.parameters.{_mapping(parameter).get('name')}")
                for error in self.unresolved(step, step_scope, any_item=any_item):
                    self.error(where, f"templates.{name}.steps {error}")
                self.add_outputs(scope, "steps", step_name, resolved, step)
                template_name = step.get("template")
                if isinstance(template_name, str) and template_name in self.templates:
                    self.check_call(template_name, arguments, where, _key(where, "arguments"))
                    self.check_task_manifests(step, where)


_ARGO_ARTIFACT_LOCATIONS = _ARTIFACT_LOCATIONS


def _without_input_values(template: Mapping[str, Any]) -> Mapping[str, Any]:
    """The template as validateLeaf sees it: ProcessArgs has replaced its input parameters'
    values with the (fake) arguments'."""
    inputs = template.get("inputs")
    if not isinstance(inputs, Mapping) or not isinstance(inputs.get("parameters"), list):
        return template
    parameters = [
        {k: v for k, v in p.items() if k != "value"} if isinstance(p, Mapping) else p
        for p in inputs["parameters"]
    ]
    return {**template, "inputs": {**inputs, "parameters": parameters}}


def _find_cycle(graph: Mapping[str, list[str]]) -> list[str] | None:
    """A dependency cycle of ``graph`` (node -> the nodes it depends on), if any."""
    state: dict[str, int] = {}
    for start in graph:
        if state.get(start):
            continue
        stack = [(start, iter(graph[start]))]
        trail = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            for child in children:
                if state.get(child) == 1:
                    return [*trail[trail.index(child) :], child]
                if not state.get(child):
                    state[child] = 1
                    trail.append(child)
                    stack.append((child, iter(graph.get(child, ()))))
                    break
            else:
                state[node] = 2
                stack.pop()
                trail.pop()
    return None


def _ancestry(graph: Mapping[str, list[str]]) -> dict[str, set[str]]:
    """Every node's transitive dependencies (``graph`` has no cycle)."""
    dependents: dict[str, list[str]] = {node: [] for node in graph}
    waiting = {node: len(set(children)) for node, children in graph.items()}
    for node, children in graph.items():
        for child in set(children):
            dependents[child].append(node)
    ready = [node for node, count in waiting.items() if count == 0]
    result: dict[str, set[str]] = {}
    while ready:  # Kahn's order: a node after everything it depends on
        node = ready.pop()
        ancestors: set[str] = set()
        for child in graph[node]:
            ancestors.add(child)
            ancestors |= result[child]
        result[node] = ancestors
        for dependent in dependents[node]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                ready.append(dependent)
    return result


def _validate_workflow(obj: Mapping[str, Any], out: Violations, context: _Context) -> None:
    _check_root(obj, crd_schema(ARGO_CRD, "v1alpha1"), out)

    # the API server: a custom resource's name is a DNS-1123 subdomain; validate.go:
    # maxCharsInObjectName, a workflow name is at most 63 characters (a label value)
    def name_rule(name: str) -> list[str]:
        errors = dns1123_subdomain(name)
        if len(name) > 63:
            errors.append(
                f"workflow name must not be more than 63 characters long (is {len(name)})"
            )
        return errors

    check_metadata(obj.get("metadata"), "metadata", out, name_rule)
    if isinstance(obj.get("spec"), Mapping):
        _Argo(obj, out).run()


# ---------------------------------------------------------------------------------------
# Training operator v1.9 jobs (kubeflow/training-operator v1.9.0: pkg/webhooks/*/,
# pkg/core/utils.go GenGeneralName, pkg/controller.v1/common/{service,pod}.go,
# pkg/controller.v1/mpi/mpijob.go, pkg/apis/kubeflow.org/v1/*_defaults.go)
# ---------------------------------------------------------------------------------------

_TRAINING = {
    # kind: (CRD, replica specs field, default container name, replica types the webhook
    # accepts (None: any), replica types that must have exactly one replica)
    "TFJob": ("training/tfjobs.yaml.gz", "tfReplicaSpecs", "tensorflow", None),
    "PyTorchJob": (
        "training/pytorchjobs.yaml.gz",
        "pytorchReplicaSpecs",
        "pytorch",
        ("Master", "Worker"),
    ),
    "XGBoostJob": (
        "training/xgboostjobs.yaml.gz",
        "xgbReplicaSpecs",
        "xgboost",
        ("Master", "Worker"),
    ),
    "MPIJob": ("training/mpijobs.yaml.gz", "mpiReplicaSpecs", None, None),
}
# common_types.go: RestartPolicyAlways/OnFailure/Never/ExitCode (pods get the policy, ExitCode
# becoming Never: core.SetRestartPolicy)
_TRAINING_RESTART_POLICIES = ("Always", "OnFailure", "Never", "ExitCode")
# util/webhooks.go supportedJobControllers
_TRAINING_MANAGED_BY = ("kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue")


def _replicas(spec: Mapping[str, Any], default: int) -> int:
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and not isinstance(replicas, bool):
        return replicas
    return default


def _pod_names(
    name: str, kind: str, replica_specs: Mapping[str, Any], mpi: bool
) -> Iterator[tuple[str, str]]:
    """(replica type, name) of every pod and Service the controller derives from ``name``."""
    for replica_type, spec in replica_specs.items():
        if not isinstance(spec, Mapping):
            continue
        count = _replicas(spec, 0 if mpi and replica_type == "Worker" else 1)
        if mpi and replica_type == "Launcher":
            yield replica_type, f"{name}-launcher"  # mpi controllers: launcherSuffix
            continue
        # GenGeneralName: <job>-<lower(replica type)>-<index>, '/' replaced by '-'
        for index in range(max(count, 0)):
            yield replica_type, f"{name}-{replica_type.lower()}-{index}".replace("/", "-")


def _check_derived_names(
    name: str | None, kind: str, replica_specs: Any, out: Violations, *, mpi: bool
) -> None:
    if not name or not isinstance(replica_specs, Mapping):
        return
    reported = set()
    for replica_type, derived in _pod_names(name, kind, replica_specs, mpi):
        errors = dns1035_label(derived)
        if errors and replica_type not in reported:
            reported.add(replica_type)
            out.append(
                (
                    "metadata",
                    f"{kind} name {name!r} gives the {replica_type} pods and Services names such "
                    f"as {derived!r} that are not valid DNS-1035 labels: {'; '.join(errors)}",
                )
            )


def _validate_training(obj: Mapping[str, Any], out: Violations, context: _Context) -> None:
    kind = obj["kind"]
    crd, field, container_name, valid_types = _TRAINING[kind]
    _check_root(obj, crd_schema(crd, "v1"), out)
    mpi = kind == "MPIJob"
    # the webhooks (pkg/webhooks/*/): NameIsDNS1035Label; MPIJob v1 has no webhook: a
    # custom resource's name is a DNS-1123 subdomain
    name_rule = dns1123_subdomain if mpi else dns1035_label
    name = check_metadata(
        obj.get("metadata"),
        "metadata",
        out,
        name_rule,
        require_name=not context.trial,
        assumed_name=context.trial_name,
    )
    spec = _mapping(obj.get("spec"))
    replica_specs = spec.get(field)
    specs_path = _key("spec", field)
    _check_derived_names(name, kind, replica_specs, out, mpi=mpi)
    run_policy = _mapping(spec.get("runPolicy"))
    managed_by = run_policy.get("managedBy")
    if managed_by is not None and managed_by not in _TRAINING_MANAGED_BY:
        out.append(("spec.runPolicy.managedBy", f"Unsupported value: {managed_by!r}"))
    if not isinstance(replica_specs, Mapping):
        return  # Required value: reported by the schema
    chief_or_master = 0
    master_seen = False
    for replica_type, replica in replica_specs.items():
        where = _key(specs_path, replica_type)
        if not isinstance(replica, Mapping):
            out.append((where, "must be specified"))
            continue
        policy = replica.get("restartPolicy")
        if policy is not None and policy not in _TRAINING_RESTART_POLICIES:
            out.append(
                (
                    _key(where, "restartPolicy"),
                    f"Unsupported value: {policy!r}: supported values: "
                    + ", ".join(repr(p) for p in _TRAINING_RESTART_POLICIES),
                )
            )
        template = _mapping(replica.get("template"))
        containers = _list(_mapping(template.get("spec")).get("containers"))
        containers_path = _key(_key(_key(where, "template"), "spec"), "containers")
        if not mpi:
            if not containers:
                out.append((containers_path, "Required value: must be specified"))
            for i, container in enumerate(containers):
                if not _mapping(container).get("image"):
                    out.append(
                        (
                            _key(_index(containers_path, i), "image"),
                            "Required value: must be required",
                        )
                    )
            if container_name and not any(
                _mapping(c).get("name") == container_name for c in containers
            ):
                out.append(
                    (
                        containers_path,
                        "Required value: must have at least one container with name "
                        f"{container_name}",
                    )
                )
        if valid_types is not None and replica_type not in valid_types:
            out.append(
                (
                    where,
                    f"Unsupported value: {replica_type!r}: supported values: "
                    + ", ".join(valid_types),
                )
            )
        if kind == "TFJob" and replica_type in ("Chief", "Master"):
            chief_or_master += 1
        if kind in ("PyTorchJob", "XGBoostJob"):
            replicas = replica.get("replicas")
            if replica_type == "Master":
                master_seen = True
                if replicas != 1:
                    out.append((_key(where, "replicas"), "Forbidden: must be 1"))
            elif kind == "PyTorchJob" and isinstance(replicas, int) and replicas < 1:
                out.append((_key(where, "replicas"), "Forbidden: must be at least 1"))
        # the controller creates the pods (pkg/controller.v1/common/pod.go)
        check_pod_template(template, _key(where, "template"), out)
    if chief_or_master > 1:
        out.append((specs_path, "Forbidden: must not have more than 1 Chief or Master role"))
    if kind == "XGBoostJob" and not master_seen:
        out.append((_key(specs_path, "Master"), "Required value: must be present"))
    if kind == "PyTorchJob" and spec.get("elasticPolicy") is not None:
        if "Worker" not in replica_specs:
            out.append(
                (
                    _key(specs_path, "Worker"),
                    "Required value: must be configured if elastic policy is used",
                )
            )
        if (
            _mapping(spec.get("elasticPolicy")).get("nProcPerNode") is not None
            and spec.get("nprocPerNode") is not None
        ):
            out.append(
                (
                    "spec.elasticPolicy.nProcPerNode",
                    "Forbidden: must not be used with spec.nprocPerNode",
                )
            )


# ---------------------------------------------------------------------------------------
# mpi-operator v2beta1 MPIJob (kubeflow/mpi-operator caa3c47:
# pkg/apis/kubeflow/validation/validation.go, run by the controller after
# pkg/apis/kubeflow/v2beta1/default.go's defaults; the job does not run if it fails)
# ---------------------------------------------------------------------------------------

MPI_V2_CRD = "mpi/mpijobs-v2beta1.yaml.gz"


def _validate_mpi_v2(obj: Mapping[str, Any], out: Violations, context: _Context) -> None:
    _check_root(obj, crd_schema(MPI_V2_CRD, "v2beta1"), out)
    name = check_metadata(
        obj.get("metadata"),
        "metadata",
        out,
        dns1123_subdomain,
        require_name=not context.trial,
        assumed_name=context.trial_name,
    )
    spec = _mapping(obj.get("spec"))
    replica_specs = spec.get("mpiReplicaSpecs")
    if not isinstance(replica_specs, Mapping):
        return
    launcher, worker = replica_specs.get("Launcher"), replica_specs.get("Worker")
    # validateMPIJobName: the last worker's hostname <name>-worker-<replicas-1> is a DNS-1035
    # label (replicas at least 1); the launcher Job and pod are <name>-launcher
    if name:
        replicas = 1
        if (
            isinstance(worker, Mapping)
            and isinstance(worker.get("replicas"), int)
            and worker["replicas"] > 0
        ):
            replicas = worker["replicas"]
        for derived in (f"{name}-worker-{replicas - 1}", f"{name}-launcher"):
            errors = dns1035_label(derived)
            if errors:
                out.append(
                    (
                        "metadata.name",
                        "will not be able to create pod and service with invalid DNS label "
                        f"{derived!r}: " + "; ".join(errors),
                    )
                )
    run_policy = _mapping(spec.get("runPolicy"))
    clean = run_policy.get("cleanPodPolicy", "None")  # default.go: CleanPodPolicyNone
    if clean not in ("None", "Running", "All"):
        out.append(
            (
                "spec.runPolicy.cleanPodPolicy",
                f"Unsupported value: {clean!r}: supported values: 'All', 'None', 'Running'",
            )
        )
    for field in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        value = run_policy.get(field)
        if isinstance(value, int) and value < 0:
            out.append((_key("spec.runPolicy", field), "must be greater than or equal to 0"))
    managed_by = run_policy.get("managedBy")
    if managed_by is not None and managed_by not in (
        "kubeflow.org/mpi-operator",
        "kueue.x-k8s.io/multikueue",
    ):
        out.append(("spec.runPolicy.managedBy", f"Unsupported value: {managed_by!r}"))
    slots = spec.get("slotsPerWorker", 1)
    if isinstance(slots, int) and slots < 0:
        out.append(("spec.slotsPerWorker", "must be greater than or equal to 0"))
    if launcher is None:
        out.append(
            ("spec.mpiReplicaSpecs.Launcher", "Required value: must have Launcher replica spec")
        )
    for replica_type, replica in replica_specs.items():
        where = _key("spec.mpiReplicaSpecs", replica_type)
        if replica_type not in ("Launcher", "Worker"):
            # only the two are read (mpi_job_controller.go); anything else is ignored
            out.append(
                (
                    where,
                    f"Unsupported value: {replica_type!r}: supported values: 'Launcher', 'Worker'",
                )
            )
            continue
        if not isinstance(replica, Mapping):
            continue
        # defaults: Launcher OnFailure and 1 replica, Worker Never and 0 replicas
        default_policy = "OnFailure" if replica_type == "Launcher" else "Never"
        policy = replica.get("restartPolicy") or default_policy
        if policy not in ("Never", "OnFailure"):
            out.append(
                (
                    _key(where, "restartPolicy"),
                    f"Unsupported value: {policy!r}: supported values: 'Never', 'OnFailure'",
                )
            )
        replicas = replica.get("replicas", 1 if replica_type == "Launcher" else 0)
        if replica_type == "Launcher" and replicas != 1:
            out.append((_key(where, "replicas"), f"Invalid value: {replicas}: must be 1"))
        if replica_type == "Worker" and isinstance(replicas, int) and replicas <= 0:
            out.append(
                (
                    _key(where, "replicas"),
                    f"Invalid value: {replicas}: must be greater than or equal to 1",
                )
            )
        template = _mapping(replica.get("template"))
        if not _list(_mapping(template.get("spec")).get("containers")):
            out.append(
                (
                    _key(where, "template.spec.containers"),
                    "Required value: must define at least one container",
                )
            )
        check_pod_template(template, _key(where, "template"), out)


# ---------------------------------------------------------------------------------------
# Katib Experiments (kubeflow/katib 33c8ff4: pkg/webhook/v1beta1/experiment/validator/
# validator.go after pkg/apis/controller/experiments/v1beta1/experiment_defaults.go (the
# mutating webhook), pkg/controller.v1beta1/util/suggestion.go, pkg/webhook/v1beta1/pod/
# utils.go, manifests/v1beta1/installs/katib-standalone/katib-config.yaml)
# ---------------------------------------------------------------------------------------

# the default katib-config: suggestion and early-stopping algorithms, trial resources
_KATIB_ALGORITHMS = (
    "random",
    "tpe",
    "grid",
    "hyperband",
    "bayesianoptimization",
    "cmaes",
    "sobol",
    "multivariate-tpe",
    "enas",
    "darts",
    "pbt",
)
_KATIB_EARLY_STOPPING = ("medianstop",)
_KATIB_TRIAL_RESOURCES = {
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
    ("batch/v1", "Job"),
    ("kubeflow.org/v1", "TFJob"),
    ("kubeflow.org/v1", "PyTorchJob"),
    ("kubeflow.org/v1", "MPIJob"),
    ("kubeflow.org/v1", "XGBoostJob"),
}
_KATIB_KUBEFLOW_KINDS = ("TFJob", "PyTorchJob", "XGBoostJob", "MPIJob", "TrainJob")
_KATIB_COLLECTORS = ("StdOut", "Push", "File", "TensorFlowEvent", "PrometheusMetric", "Custom")
_KATIB_PARAMETER_TYPES = ("int", "double", "categorical", "discrete", "unknown")
_KATIB_DISTRIBUTIONS = ("uniform", "logUniform", "normal", "logNormal", "unknown")
_KATIB_META_KEYS = ("Name", "Namespace", "Kind", "APIVersion", "Annotations", "Labels")
_KATIB_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")  # matched as a prefix: no $ upstream


def _katib_name(name: str) -> list[str]:
    errors = dns1123_subdomain(name)  # the API server, for any custom resource
    if not _KATIB_NAME.match(name) or len(name) > 40:
        errors.append(
            "name must consist of lower case alphanumeric characters or '-', start with an "
            "alphabetic character, and end with an alphanumeric character and may not be "
            f"longer than 40 characters (is {len(name)})"
        )
    return errors


def _katib_meta_key(reference: str) -> bool:
    match = re.search(r"\$\{trialSpec\.(.+?)\}", reference)
    if not match:
        return False
    key = match[1]
    if key in _KATIB_META_KEYS:
        return True
    sub = re.search(r"(.+)\[(.+)]", key)
    return bool(sub) and sub[1] in _KATIB_META_KEYS


def _validate_experiment(obj: Mapping[str, Any], out: Violations, context: _Context) -> None:
    # The CRD preserves unknown fields (the API server takes anything); the webhook decodes
    # into the Go types, which would drop unknown fields silently: here they are errors.
    _check_root(obj, crd_schema("katib/experiment.yaml", "v1beta1"), out)
    check(obj, swagger_schema("v1beta1.Experiment"), "", out)
    name = check_metadata(obj.get("metadata"), "metadata", out, _katib_name)
    experiment = copy.deepcopy(dict(obj))
    spec = experiment.get("spec")
    if not isinstance(spec, dict):
        out.append(("spec", "Required value"))
        return
    # the defaults of experiment_defaults.go, then validator.go
    if spec.get("parallelTrialCount") is None:
        spec["parallelTrialCount"] = 3  # DefaultTrialParallelCount
    if not spec.get("resumePolicy"):
        spec["resumePolicy"] = "Never"
    trial_template = spec.get("trialTemplate")
    trial_spec = (
        _mapping(trial_template).get("trialSpec") if isinstance(trial_template, dict) else None
    )
    if isinstance(trial_template, dict) and isinstance(trial_spec, Mapping):
        trial_kind = trial_spec.get("kind")
        complete = "Complete" if trial_kind in ("Job", "TrainJob") else "Succeeded"
        if trial_kind == "Job" or trial_kind in _KATIB_KUBEFLOW_KINDS:
            # DefaultJobSuccessCondition, DefaultKubeflowJobSuccessCondition, ...
            if not trial_template.get("successCondition"):
                trial_template["successCondition"] = (
                    f'status.conditions.#(type=="{complete}")#|#(status=="True")#'
                )
            if not trial_template.get("failureCondition"):
                trial_template["failureCondition"] = (
                    'status.conditions.#(type=="Failed")#|#(status=="True")#'
                )
    if not isinstance(spec.get("metricsCollectorSpec"), dict):
        spec["metricsCollectorSpec"] = {}
    if not isinstance(spec["metricsCollectorSpec"].get("collector"), dict):
        spec["metricsCollectorSpec"]["collector"] = {"kind": "StdOut"}
    # counts
    max_failed, max_trials, parallel = (
        spec.get("maxFailedTrialCount"),
        spec.get("maxTrialCount"),
        spec.get("parallelTrialCount"),
    )
    if isinstance(max_failed, int) and max_failed < 0:
        out.append(("spec.maxFailedTrialCount", "should not be less than 0"))
    if isinstance(max_trials, int) and max_trials <= 0:
        out.append(("spec.maxTrialCount", "must be greater than 0"))
    if isinstance(parallel, int) and parallel <= 0:
        out.append(("spec.parallelTrialCount", "must be greater than 0"))
    if isinstance(max_failed, int) and isinstance(max_trials, int) and max_failed > max_trials:
        out.append(
            ("spec.maxFailedTrialCount", "should be less than or equal to spec.maxTrialCount")
        )
    if isinstance(parallel, int) and isinstance(max_trials, int) and parallel > max_trials:
        given = _mapping(obj.get("spec")).get("parallelTrialCount") is not None
        default = "" if given else " (the default)"
        out.append(
            (
                "spec.parallelTrialCount",
                f"{parallel}{default} should be less than or equal to spec.maxTrialCount",
            )
        )
    # objective
    objective = spec.get("objective")
    if not isinstance(objective, Mapping):
        out.append(("spec.objective", "Required value: must be specified"))
        return  # validator.go returns here
    objective_errors = []
    if objective.get("type") not in ("minimize", "maximize"):
        objective_errors.append(
            (
                "spec.objective.type",
                f"Invalid value {objective.get('type')!r}: must be minimize or maximize",
            )
        )
    if not objective.get("objectiveMetricName"):
        objective_errors.append(
            ("spec.objective.objectiveMetricName", "Required value: must be specified")
        )
    if objective.get("objectiveMetricName") in _list(objective.get("additionalMetricNames")):
        objective_errors.append(
            (
                "spec.objective.additionalMetricNames",
                "should not contain spec.objective.objectiveMetricName",
            )
        )
    if objective_errors:
        out.extend(objective_errors)
        return  # validator.go returns here
    # algorithm
    algorithm = spec.get("algorithm")
    if not isinstance(algorithm, Mapping):
        out.append(("spec.algorithm", "Required value: must be specified"))
    else:
        algorithm_name = algorithm.get("algorithmName")
        if not algorithm_name:
            out.append(("spec.algorithm.algorithmName", "Required value: must be specified"))
        elif algorithm_name not in _KATIB_ALGORITHMS:
            out.append(
                (
                    "spec.algorithm.algorithmName",
                    f"unable to get Suggestion config data for algorithm {algorithm_name} (not "
                    "in the default katib-config)",
                )
            )
        elif name:
            # the suggestion's Deployment and Service: <experiment>-<algorithm> (suggestion.go)
            derived = f"{name}-{algorithm_name}"
            for error in dns1035_label(derived):
                out.append(
                    (
                        "metadata",
                        f"the suggestion Service {derived!r} is not a valid DNS-1035 label: "
                        + error,
                    )
                )
    early = spec.get("earlyStopping")
    if isinstance(early, Mapping):
        early_name = early.get("algorithmName")
        if not early_name:
            out.append(("spec.earlyStopping.algorithmName", "Required value: must be specified"))
        elif early_name not in _KATIB_EARLY_STOPPING:
            out.append(
                (
                    "spec.earlyStopping.algorithmName",
                    f"unable to get EarlyStopping config data for algorithm {early_name}",
                )
            )
    if spec.get("resumePolicy") not in ("", "Never", "LongRunning", "FromVolume"):
        out.append(
            (
                "spec.resumePolicy",
                f"Invalid value {spec.get('resumePolicy')!r}: invalid ResumePolicyType",
            )
        )
    _katib_trial_template(spec, out, name)
    parameters = _list(spec.get("parameters"))
    if not parameters and spec.get("nasConfig") is None:
        out.append(("spec", "Required value: spec.parameters or spec.nasConfig must be specified"))
    if parameters and spec.get("nasConfig") is not None:
        out.append(("spec", "only one of spec.parameters and spec.nasConfig can be specified"))
    for i, parameter in enumerate(parameters):
        parameter = _mapping(parameter)
        where = _index("spec.parameters", i)
        parameter_type = parameter.get("parameterType")
        if parameter_type not in _KATIB_PARAMETER_TYPES:
            out.append(
                (_key(where, "parameterType"), f"parameterType: {parameter_type} is not supported")
            )
        space = _mapping(parameter.get("feasibleSpace"))
        distribution = space.get("distribution")
        if distribution and distribution not in _KATIB_DISTRIBUTIONS:
            out.append(
                (
                    _key(_key(where, "feasibleSpace"), "distribution"),
                    f"distribution: {distribution} is not supported",
                )
            )
        if not any(v not in (None, "", []) for v in space.values()):
            out.append(
                (_key(where, "feasibleSpace"), "Required value: feasibleSpace must be specified")
            )
        elif parameter_type in ("double", "int"):
            if space.get("list"):
                out.append(
                    (
                        _key(_key(where, "feasibleSpace"), "list"),
                        f"feasibleSpace.list is not supported for parameterType: {parameter_type}",
                    )
                )
            if not space.get("max") or not space.get("min"):
                out.append(
                    (
                        _key(_key(where, "feasibleSpace"), "max"),
                        "feasibleSpace.max or feasibleSpace.min must be specified for "
                        f"parameterType: {parameter_type}",
                    )
                )
        elif parameter_type in ("categorical", "discrete") and (
            space.get("max") or space.get("min") or space.get("step")
        ):
            out.append(
                (
                    _key(where, "feasibleSpace"),
                    "feasibleSpace .max, .min and .step is not supported for "
                    f"parameterType: {parameter_type}",
                )
            )
    collector = _mapping(_mapping(spec.get("metricsCollectorSpec")).get("collector"))
    collector_kind = collector.get("kind")
    if collector_kind not in _KATIB_COLLECTORS:
        out.append(
            (
                "spec.metricsCollectorSpec.collector.kind",
                f"invalid metrics collector kind: {collector_kind}",
            )
        )
    elif collector_kind == "Custom" and collector.get("customCollector") is None:
        out.append(("spec.metricsCollectorSpec.collector.customCollector", "Required value"))
    elif collector_kind in ("File", "TensorFlowEvent"):
        source = _mapping(_mapping(spec.get("metricsCollectorSpec")).get("source"))
        file_path = _mapping(source.get("fileSystemPath")).get("path")
        if file_path is not None and not str(file_path).startswith("/"):
            out.append(
                ("spec.metricsCollectorSpec.source.fileSystemPath.path", "must be an absolute path")
            )


def _katib_trial_template(spec: Mapping[str, Any], out: Violations, experiment: str | None) -> None:
    path = "spec.trialTemplate"
    template = spec.get("trialTemplate")
    if not isinstance(template, Mapping):
        out.append((path, "Required value: must be specified"))
        return
    if not template.get("primaryContainerName"):
        out.append((_key(path, "primaryContainerName"), "Required value: must be specified"))
    if not template.get("successCondition") or not template.get("failureCondition"):
        out.append(
            (path, "Required value: successCondition and failureCondition must be specified")
        )
    trial_parameters = template.get("trialParameters")
    if trial_parameters is None:
        out.append((_key(path, "trialParameters"), "Required value: must be specified"))
        return
    trial_spec, config_map = template.get("trialSpec"), template.get("configMap")
    if trial_spec is None and config_map is None:
        out.append(
            (
                path,
                "Required value: spec.trialTemplate.trialSpec or spec.trialTemplate.configMap "
                "must be specified",
            )
        )
        return
    if trial_spec is not None and config_map is not None:
        out.append(
            (
                path,
                "only one of spec.trialTemplate.trialSpec or spec.trialTemplate.configMap can "
                "be specified",
            )
        )
        return
    if config_map is not None:
        config_map = _mapping(config_map)
        if not all(
            config_map.get(k) for k in ("configMapName", "configMapNamespace", "templatePath")
        ):
            out.append(
                (
                    _key(path, "configMap"),
                    "configMapName, configMapNamespace and templatePath must be specified",
                )
            )
        return  # the template is in the cluster: not here to check
    text = json.dumps(trial_spec, separators=(",", ":"))
    experiment_parameters = {_mapping(p).get("name") for p in _list(spec.get("parameters"))}
    names: set[str] = set()
    references: set[str] = set()
    for i, parameter in enumerate(_list(trial_parameters)):
        parameter = _mapping(parameter)
        where = _index(_key(path, "trialParameters"), i)
        name, reference = parameter.get("name"), parameter.get("reference")
        if not name or not reference or "{" in str(name) or "}" in str(name):
            out.append(
                (where, "name and reference must be specified and name must not contain '{' or '}'")
            )
            continue
        if name in names:
            out.append((_key(where, "name"), f"parameter name {name} can't be duplicated"))
            continue
        if reference in references:
            out.append(
                (_key(where, "reference"), f"parameter reference {reference} can't be duplicated")
            )
            continue
        names.add(name)
        references.add(reference)
        if (
            experiment_parameters
            and not _katib_meta_key(reference)
            and reference not in experiment_parameters
        ):
            out.append(
                (
                    _key(where, "reference"),
                    f"parameter reference {reference} does not exist in spec.parameters",
                )
            )
        placeholder = "${trialParameters." + name + "}"
        if placeholder not in text:
            out.append(
                (
                    _key(where, "name"),
                    f"parameter name: {name} in spec.trialParameters not found in "
                    "spec.trialTemplate",
                )
            )
            return  # validator.go returns here
        text = text.replace(placeholder, "test-value")
    left = re.findall(r"\$\{trialParameters\..+?\}", text)
    if left:
        out.append(
            (path, f"parameters: {left} in spec.trialTemplate not found in spec.trialParameters")
        )
    trial = json.loads(text)
    where = _key(path, "trialSpec")
    if not isinstance(trial, Mapping):
        out.append((where, "unable to convert spec.trialTemplate to unstructured"))
        return
    metadata = _mapping(trial.get("metadata"))
    if metadata.get("name") or metadata.get("namespace"):
        out.append(
            (where, "metadata.name and metadata.namespace in spec.trialTemplate must be omitted")
        )
    if not isinstance(trial.get("apiVersion"), str) or not isinstance(trial.get("kind"), str):
        trial = {**trial, "apiVersion": None}  # unstructured reads a non-string as ""
    if not trial.get("apiVersion") or not trial.get("kind"):
        out.append(
            (where, "Required value: APIVersion and Kind in spec.trialTemplate must be specified")
        )
        return
    if (trial.get("apiVersion"), trial.get("kind")) not in _KATIB_TRIAL_RESOURCES:
        out.append(
            (
                where,
                f"{trial.get('apiVersion')} {trial.get('kind')} is not among the trial resources "
                "Katib's default katib-config watches",
            )
        )
    # Katib names the trial's object after the trial: <experiment>-<8 random characters>
    # (suggestionclient.go), so that is the name its rules are checked on
    trial_name = f"{experiment}-xxxxxxxx" if experiment else None
    _validate_embedded(trial, where, out, _Context(trial=True, trial_name=trial_name))
    # the pod webhook needs the primary container in the trial's pods (pod/utils.go)
    primary = template.get("primaryContainerName")
    containers = set(_trial_container_names(trial))
    if primary and containers and primary not in containers:
        out.append(
            (
                _key(path, "primaryContainerName"),
                f"{primary!r} is not a container of the trial's pods "
                f"({', '.join(sorted(containers))})",
            )
        )


def _trial_container_names(trial: Mapping[str, Any]) -> Iterator[str]:
    spec = _mapping(trial.get("spec"))
    templates = [_mapping(spec.get("template"))]
    for field in ("tfReplicaSpecs", "pytorchReplicaSpecs", "xgbReplicaSpecs", "mpiReplicaSpecs"):
        templates += [
            _mapping(_mapping(r).get("template")) for r in _mapping(spec.get(field)).values()
        ]
    for template in templates:
        for container in _list(_mapping(template.get("spec")).get("containers")):
            name = _mapping(container).get("name")
            if isinstance(name, str):
                yield name


# ---------------------------------------------------------------------------------------
# Core objects (k8s.io/kubernetes/pkg/apis/batch/validation/validation.go,
# pkg/apis/core/validation/validation.go)
# ---------------------------------------------------------------------------------------


def _job_name(name: str) -> list[str]:
    # ValidateJob: a DNS-1123 subdomain, and the Job's name is the value of the pods'
    # job-name label (batch.kubernetes.io/job-name), so at most 63 characters
    errors = dns1123_subdomain(name)
    errors += [f"(as the job-name label of its pods) {e}" for e in label_value(name)]
    return errors


def _validate_job(obj: Mapping[str, Any], out: Violations, context: _Context) -> None:
    _check_root(obj, client_model_schema("V1Job"), out)
    check_metadata(
        obj.get("metadata"),
        "metadata",
        out,
        _job_name,
        require_name=not context.trial,
        assumed_name=context.trial_name,
    )
    spec = _mapping(obj.get("spec"))
    for field, minimum in (
        ("parallelism", 0),
        ("completions", 0),
        ("backoffLimit", 0),
        ("activeDeadlineSeconds", 1),
        ("ttlSecondsAfterFinished", 0),
        ("backoffLimitPerIndex", 0),
        ("maxFailedIndexes", 0),
    ):
        value = spec.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < minimum:
            out.append((_key("spec", field), f"must be greater than or equal to {minimum}"))
    # a Job's pods never restart in place: OnFailure or Never (Always is the pod default)
    check_pod_template(
        spec.get("template"), "spec.template", out, restart_policies=("OnFailure", "Never")
    )


def _validate_secret(obj: Mapping[str, Any], out: Violations, context: _Context) -> None:
    _check_root(obj, swagger_schema("io.k8s.api.core.v1.Secret"), out)
    check_metadata(obj.get("metadata"), "metadata", out, dns1123_subdomain)
    total = 0
    for field in ("data", "stringData"):
        for key, value in _mapping(obj.get(field)).items():
            for error in config_map_key(str(key)):
                out.append((_key(field, key), f"Invalid key {key!r}: {error}"))
            if isinstance(value, str):
                if field == "data":
                    # an invalid value is reported by the schema (format byte)
                    with contextlib.suppress(binascii.Error, ValueError):
                        total += len(base64.b64decode(value, validate=True))
                else:
                    total += len(value.encode())
    if total > 1024 * 1024:
        out.append(("data", f"Too long: must have at most 1048576 bytes (has {total})"))


_VALIDATORS: dict[tuple[str, str], Callable[[Mapping[str, Any], Violations, _Context], None]] = {
    ("argoproj.io/v1alpha1", "Workflow"): _validate_workflow,
    ("kubeflow.org/v1", "TFJob"): _validate_training,
    ("kubeflow.org/v1", "PyTorchJob"): _validate_training,
    ("kubeflow.org/v1", "XGBoostJob"): _validate_training,
    ("kubeflow.org/v1", "MPIJob"): _validate_training,
    ("kubeflow.org/v2beta1", "MPIJob"): _validate_mpi_v2,
    ("kubeflow.org/v1beta1", "Experiment"): _validate_experiment,
    ("batch/v1", "Job"): _validate_job,
    ("v1", "Secret"): _validate_secret,
}
