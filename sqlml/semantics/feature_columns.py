"""COLUMN expressions to feature columns: SQLFlow's functions, with their arguments checked.

docs/features.md describes the functions; each error points at the offending argument.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, replace
from typing import Any

from sqlml.errors import CheckError
from sqlml.grammar import ast
from sqlml.ir import FeatureColumn
from sqlml.models.estimator import Estimator
from sqlml.statements.train.syntax import TrainStatement

_REQUIRED = object()
COMBINERS = ("mean", "sum", "sqrtn")


@dataclass(frozen=True)
class Param:
    """One argument of a feature column function and how it is checked."""

    name: str
    check: str  # how: _Lowering._check_<check> checks and lowers the argument
    default: Any = _REQUIRED


@dataclass(frozen=True)
class Signature:
    usage: str  # shown in hints
    params: tuple[Param, ...]


_COLUMN = Param("column", "column")
SIGNATURES: dict[str, Signature] = {
    "NUMERIC": Signature("NUMERIC(column[, shape])", (_COLUMN, Param("shape", "shape", 1))),
    "DENSE": Signature(
        "DENSE(column, shape[, delimiter])",
        (_COLUMN, Param("shape", "shape"), Param("delimiter", "string", ",")),
    ),
    "SPARSE": Signature(
        "SPARSE(column, shape[, delimiter])",
        (_COLUMN, Param("shape", "shape"), Param("delimiter", "string", ",")),
    ),
    "CATEGORY_ID": Signature(
        "CATEGORY_ID(column[, bucket_size[, delimiter]])",
        (_COLUMN, Param("bucket_size", "size", None), Param("delimiter", "string", None)),
    ),
    "SEQ_CATEGORY_ID": Signature(
        "SEQ_CATEGORY_ID(column[, bucket_size[, delimiter]])",
        (_COLUMN, Param("bucket_size", "size", None), Param("delimiter", "string", ",")),
    ),
    "CATEGORY_HASH": Signature(
        "CATEGORY_HASH(column, bucket_size[, delimiter])",
        (_COLUMN, Param("bucket_size", "size"), Param("delimiter", "string", None)),
    ),
    "WEIGHTED_CATEGORY": Signature(
        "WEIGHTED_CATEGORY(category_column, weight_column)",
        (Param("category", "id_category"), _COLUMN),
    ),
    "BUCKET": Signature(
        "BUCKET(NUMERIC(column) | column, [boundaries...])",
        (Param("source", "number"), Param("boundaries", "boundaries")),
    ),
    "EMBEDDING": Signature(
        "EMBEDDING(category_column | column, dimension[, combiner])",
        (
            Param("category", "category"),
            Param("dimension", "size"),
            Param("combiner", "combiner", "mean"),
        ),
    ),
    "INDICATOR": Signature("INDICATOR(category_column | column)", (Param("category", "category"),)),
    "CROSS": Signature(
        "CROSS([column, ...], hash_bucket_size)",
        (Param("columns", "cross"), Param("hash_bucket_size", "size")),
    ),
}

# What the category arguments accept, besides a plain column name.
_CATEGORY = (
    "CATEGORY_ID",
    "SEQ_CATEGORY_ID",
    "CATEGORY_HASH",
    "WEIGHTED_CATEGORY",
    "BUCKET",
    "CROSS",
)
_ID_CATEGORY = ("CATEGORY_ID", "SEQ_CATEGORY_ID", "CATEGORY_HASH")
_CROSS_ITEM = ("CATEGORY_ID", "CATEGORY_HASH", "BUCKET")

_BLANK = re.compile(r"(?:\s+|--[^\n]*|/\*(?:[^*]|\*+[^*/])*\*+/)+")
_QUOTED = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"]|\"\")*\"|`(?:[^`]|``)*`")


def feature_columns(
    statement: TrainStatement, estimator: Estimator, label: str
) -> list[FeatureColumn]:
    """The checked COLUMN clauses of ``statement``; empty when there are none.

    A clause's ``FOR`` names the estimator input its features feed (``target``).
    """
    lowering = _Lowering(statement, estimator, label)
    features: list[FeatureColumn] = []
    names: set[str] = set()
    for clause in statement.columns:
        target = _target(clause, estimator)
        for column in clause.columns:
            feature = replace(lowering.top(column), target=target)
            if feature.name in names:
                what = "column" if isinstance(column, ast.Name) else "feature"
                raise _error(f"{what} {feature.name} is listed twice", column.pos, None)
            names.add(feature.name)
            features.append(feature)
    if estimator.inputs and features:
        _check_every_input_fed(statement, estimator, features)
    return features


def _target(clause: ast.ColumnClause, estimator: Estimator) -> str | None:
    """The input a COLUMN clause feeds: None without FOR (every input)."""
    if clause.target is None:
        return None
    name = str(clause.target)
    if not estimator.inputs:
        raise _error(
            f"COLUMN ... FOR is for estimators with several inputs; {estimator.name} has one",
            clause.target.pos,
            "remove FOR <target>; the DNNLinearCombined estimators take "
            "FOR linear_feature_columns and FOR dnn_feature_columns",
        )
    target = estimator.inputs.get(name.lower())
    if target is None:
        close = difflib.get_close_matches(name.lower(), estimator.inputs, n=1, cutoff=0.5)
        raise _error(
            f"{estimator.name} has no input {name}",
            clause.target.pos,
            (f"did you mean {close[0]}? " if close else "")
            + f"its inputs are {', '.join(estimator.inputs)}",
        )
    return target


def _check_every_input_fed(
    statement: TrainStatement, estimator: Estimator, features: list[FeatureColumn]
) -> None:
    fed = {feature.target for feature in features}
    if None in fed:
        return
    for name, target in estimator.inputs.items():
        if target not in fed:
            raise _error(
                f"{estimator.name}'s {target} part has no features",
                statement.columns[0].pos,
                f"add COLUMN ... FOR {name}, or list features without FOR to feed both parts",
            )


class _Source:
    """Where arguments start in a statement's text.

    The AST keeps the positions of names and calls only; literals and list items are found
    by scanning the text.
    """

    def __init__(self, statement: TrainStatement) -> None:
        self.text = statement.text
        self.start = statement.pos

    def argument(self, call: ast.Call, index: int, element: int | None = None) -> ast.Position:
        """Where argument ``index`` (or item ``element`` of that list argument) starts."""
        argument = call.args[index]
        if element is None and isinstance(argument, ast.Name | ast.Call):
            return argument.pos
        offset = self._items(call.pos.offset)[index]
        if element is not None:
            offset = self._items(offset)[element]
        return self._position(offset)

    def _items(self, offset: int) -> list[int]:
        """Offsets of the top-level items of the first (...) or [...] group from ``offset``."""
        text, i = self.text, offset - self.start.offset
        while text[i] not in "([":
            i += 1
        i += 1
        depth, expecting, starts = 0, True, []
        while i < len(text):
            blank = _BLANK.match(text, i)
            if blank:
                i = blank.end()
                continue
            char = text[i]
            if depth == 0 and char in ")]":
                break
            if expecting:
                starts.append(i + self.start.offset)
                expecting = False
            quoted = _QUOTED.match(text, i)
            if quoted:
                i = quoted.end()
                continue
            if char in "([":
                depth += 1
            elif char in ")]":
                depth -= 1
            elif char == "," and depth == 0:
                expecting = True
            i += 1
        return starts

    def _position(self, offset: int) -> ast.Position:
        before = self.text[: offset - self.start.offset]
        newlines = before.count("\n")
        column = len(before) - before.rfind("\n") if newlines else self.start.column + len(before)
        return ast.Position(self.start.line + newlines, column, offset)


class _Lowering:
    """Lowers one statement's COLUMN expressions, knowing its estimator and label."""

    def __init__(self, statement: TrainStatement, estimator: Estimator, label: str) -> None:
        self.at = _Source(statement).argument
        self.estimator = estimator
        self.label = label

    def top(self, expression: ast.Name | ast.Call) -> FeatureColumn:
        """A feature listed in COLUMN: a column name (kind "auto") or any function."""
        if isinstance(expression, ast.Name):
            return FeatureColumn("auto", self.column(expression))
        return self.call(expression)

    def call(self, call: ast.Call) -> FeatureColumn:
        """A function call, its arguments checked and lowered by its signature."""
        signature = SIGNATURES.get(call.function)
        if signature is None:
            close = difflib.get_close_matches(call.function, SIGNATURES, n=1, cutoff=0.5)
            raise _error(
                f"unknown feature column {call.function}",
                call.pos,
                f"did you mean {close[0]}?"
                if close
                else "the feature columns are " + ", ".join(SIGNATURES),
            )
        kind = call.function.lower()
        if kind not in self.estimator.feature_kinds:
            takes = [k.upper() for k in self.estimator.feature_kinds if k != "auto"]
            raise _error(
                f"{self.estimator.name} cannot take {call.function} columns",
                call.pos,
                f"{self.estimator.name} takes {', '.join(takes)}; "
                "Keras estimators such as DNNClassifier take every kind",
            )
        if len(call.args) > len(signature.params):
            raise _error(
                f"{call.function} takes at most {len(signature.params)} arguments, "
                f"got {len(call.args)}",
                self.at(call, len(signature.params)),
                f"usage: {signature.usage}",
            )
        column, inputs, params = None, [], {}
        for index, param in enumerate(signature.params):
            if index >= len(call.args):
                if param.default is _REQUIRED:
                    raise _error(
                        f"{call.function} needs its {param.name} argument",
                        call.pos,
                        f"usage: {signature.usage}",
                    )
                value = param.default
            else:
                value = getattr(self, f"_check_{param.check}")(call, index, param)
            if param.name == "column":
                column = value
            elif isinstance(value, FeatureColumn):
                inputs.append(value)
            elif param.name == "columns":
                inputs.extend(value)
            elif value is not None:
                params[param.name] = value
        return FeatureColumn(kind, column, params, inputs)

    def column(self, name: ast.Name) -> str:
        """A column a feature reads: one name, and not the label."""
        if len(name.parts) != 1:
            raise _error(f"COLUMN takes a column name, not {name}", name.pos, None)
        if name.parts[0] == self.label:
            raise _error(
                f"column {name} is the LABEL; it cannot also be a feature",
                name.pos,
                f"remove {name} from COLUMN",
            )
        return name.parts[0]

    def _fail(self, call: ast.Call, index: int, param: Param, expected: str) -> CheckError:
        return _error(
            f"{call.function}'s {param.name} must be {expected} (got {_shown(call.args[index])})",
            self.at(call, index),
            f"usage: {SIGNATURES[call.function].usage}",
        )

    def _check_column(self, call: ast.Call, index: int, param: Param) -> str:
        argument = call.args[index]
        if not isinstance(argument, ast.Name):
            raise self._fail(call, index, param, "a column name")
        return self.column(argument)

    def _check_size(self, call: ast.Call, index: int, param: Param) -> int:
        argument = call.args[index]
        if not _is_int(argument) or argument < 1:
            raise self._fail(call, index, param, "a positive integer")
        return argument

    def _check_shape(self, call: ast.Call, index: int, param: Param) -> int:
        """A positive integer, or a list of them (flattened: their product)."""
        argument = call.args[index]
        dims = argument if isinstance(argument, tuple) else (argument,)
        if not dims or not all(_is_int(d) and d >= 1 for d in dims):
            raise self._fail(call, index, param, "a positive integer or a list of them")
        return math.prod(dims)

    def _check_string(self, call: ast.Call, index: int, param: Param) -> str:
        """A non-empty string; a one-part name also counts, as "..." quotes make names."""
        argument = call.args[index]
        if isinstance(argument, ast.Name) and len(argument.parts) == 1:
            argument = argument.parts[0]
        if not isinstance(argument, str) or not argument:
            raise self._fail(call, index, param, "a non-empty string such as ','")
        return argument

    def _check_combiner(self, call: ast.Call, index: int, param: Param) -> str:
        combiner = self._check_string(call, index, param)
        if combiner.lower() not in COMBINERS:
            raise self._fail(call, index, param, "one of " + ", ".join(map(repr, COMBINERS)))
        return combiner.lower()

    def _check_boundaries(self, call: ast.Call, index: int, param: Param) -> list[float]:
        boundaries = call.args[index]
        if not isinstance(boundaries, tuple) or not boundaries:
            raise self._fail(call, index, param, "a list of numbers such as [18, 65]")
        for position, value in enumerate(boundaries):
            if not isinstance(value, int | float):
                raise _error(
                    f"BUCKET boundaries must be numbers (got {_shown(value)})",
                    self.at(call, index, position),
                    f"usage: {SIGNATURES['BUCKET'].usage}",
                )
            if position and value <= boundaries[position - 1]:
                raise _error(
                    f"BUCKET boundaries must be strictly ascending: "
                    f"{value} follows {boundaries[position - 1]}",
                    self.at(call, index, position),
                    "list each boundary once, smallest first",
                )
        return list(boundaries)

    def _check_number(self, call: ast.Call, index: int, param: Param) -> FeatureColumn:
        """BUCKET's source: a column name or NUMERIC(column) of a single number."""
        argument = call.args[index]
        if isinstance(argument, ast.Name):
            return FeatureColumn("numeric", self.column(argument), {"shape": 1})
        if not isinstance(argument, ast.Call) or argument.function != "NUMERIC":
            raise self._fail(call, index, param, "NUMERIC(column) or a column name")
        numeric = self.call(argument)
        if numeric.params["shape"] != 1:
            raise _error(
                "BUCKET takes one number per row; NUMERIC's shape must be 1 here",
                self.at(argument, 1),
                "remove the shape",
            )
        return numeric

    def _nested(
        self, call: ast.Call, index: int, param: Param, allowed: tuple[str, ...]
    ) -> FeatureColumn:
        """A category column (a function in ``allowed``) or a column name."""
        argument = call.args[index]
        if isinstance(argument, ast.Name):
            return FeatureColumn("category_id", self.column(argument))
        if isinstance(argument, ast.Call) and argument.function in allowed:
            return self.call(argument)
        raise self._fail(call, index, param, f"a column name or one of {', '.join(allowed)}")

    def _check_category(self, call: ast.Call, index: int, param: Param) -> FeatureColumn:
        return self._nested(call, index, param, _CATEGORY)

    def _check_id_category(self, call: ast.Call, index: int, param: Param) -> FeatureColumn:
        return self._nested(call, index, param, _ID_CATEGORY)

    def _check_cross(self, call: ast.Call, index: int, param: Param) -> list[FeatureColumn]:
        items = call.args[index]
        if not isinstance(items, tuple) or len(items) < 2:
            raise self._fail(call, index, param, "a list of two or more columns")
        crossed = []
        for position, item in enumerate(items):
            if not isinstance(item, ast.Name | ast.Call) or (
                isinstance(item, ast.Call) and item.function not in _CROSS_ITEM
            ):
                raise _error(
                    f"CROSS takes column names, {', '.join(_CROSS_ITEM)} (got {_shown(item)})",
                    self.at(call, index, position),
                    f"usage: {SIGNATURES['CROSS'].usage}",
                )
            feature = (
                FeatureColumn("category_id", self.column(item))
                if isinstance(item, ast.Name)
                else self.call(item)
            )
            if "delimiter" in feature.params:
                raise _error(
                    "CROSS takes one value per row; remove the delimiter",
                    item.pos,
                    "cross single-valued columns",
                )
            crossed.append(feature)
        return crossed


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(argument: ast.Argument) -> str:
    if isinstance(argument, ast.Call):
        return f"{argument.function}(...)"
    if isinstance(argument, str):
        return repr(argument)
    if isinstance(argument, tuple):
        return "[" + ", ".join(_shown(item) for item in argument) + "]"
    return str(argument)


def _error(message: str, pos: ast.Position, hint: str | None) -> CheckError:
    return CheckError(message, line=pos.line, column=pos.column, hint=hint)
