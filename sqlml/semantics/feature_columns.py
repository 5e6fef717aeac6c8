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
from sqlml.ir import FEATURE_KINDS, FeatureColumn
from sqlml.models.estimator import Estimator
from sqlml.models.registry import estimators, family
from sqlml.semantics.column_patterns import STAR, compile_pattern, is_pattern
from sqlml.statements.train.syntax import TrainNode

_REQUIRED = object()
COMBINERS = ("mean", "sum", "sqrtn")
# The dtypes of DENSE and SPARSE, as SQLFlow's documents write them, and what each means.
DTYPES = {
    "int": "int",
    "int32": "int",
    "int64": "int",
    "float": "float",
    "float32": "float",
    "float64": "float",
    "string": "string",
}
# EMBEDDING's initializers: Keras's names (TensorFlow's add "_initializer").
INITIALIZERS = (
    "uniform",
    "random_uniform",
    "normal",
    "random_normal",
    "truncated_normal",
    "glorot_uniform",
    "glorot_normal",
    "he_uniform",
    "he_normal",
    "lecun_uniform",
    "lecun_normal",
    "orthogonal",
    "zeros",
    "ones",
)
_FIELDS = ("DENSE", "SPARSE")


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
_FIELD = Param("column", "field")  # a column name, DENSE(...) or SPARSE(...)
_DELIMITER = Param("delimiter", "delimiter", None)
SIGNATURES: dict[str, Signature] = {
    "NUMERIC": Signature(
        "NUMERIC(column | DENSE(...) | SPARSE(...)[, shape])",
        (Param("column", "field"), Param("shape", "shape", 1)),
    ),
    "DENSE": Signature(
        "DENSE(column[, shape[, delimiter[, dtype]]])",
        (
            _COLUMN,
            Param("shape", "field_shape", None),
            Param("delimiter", "delimiter", ","),
            Param("dtype", "dtype", None),
        ),
    ),
    "SPARSE": Signature(
        "SPARSE(column[, shape[, delimiter[, dtype[, delimiter_kv[, dtype_weight]]]]])",
        (
            _COLUMN,
            Param("shape", "field_shape", None),
            # Left out: SQLFlow's default formats, told by the data when training (a list of
            # ids "3,5,7", or LIBSVM's key-value list "1:0.5 3:-1.5").
            Param("delimiter", "delimiter", None),
            Param("dtype", "dtype", None),
            Param("kv_delimiter", "delimiter", None),
            Param("weight_dtype", "weight_dtype", None),
        ),
    ),
    "CATEGORY_ID": Signature(
        "CATEGORY_ID(column[, bucket_size[, delimiter]])",
        (_FIELD, Param("bucket_size", "size", None), _DELIMITER),
    ),
    "SEQ_CATEGORY_ID": Signature(
        "SEQ_CATEGORY_ID(column[, bucket_size[, delimiter]])",
        (_FIELD, Param("bucket_size", "size", None), Param("delimiter", "delimiter", ",")),
    ),
    "CATEGORY_HASH": Signature(
        "CATEGORY_HASH(column, bucket_size[, delimiter])",
        (_FIELD, Param("bucket_size", "size"), _DELIMITER),
    ),
    "WEIGHTED_CATEGORY": Signature(
        "WEIGHTED_CATEGORY(category_column[, weight_column])",
        (Param("category", "id_category"), Param("column", "column", None)),
    ),
    "BUCKET": Signature(
        "BUCKET(NUMERIC(column) | column, [boundaries...])",
        (Param("source", "number"), Param("boundaries", "boundaries")),
    ),
    "BUCKETIZE": Signature(
        "BUCKETIZE(NUMERIC(column) | column, [boundaries...])",
        (Param("source", "number"), Param("boundaries", "boundaries")),
    ),
    "EMBEDDING": Signature(
        "EMBEDDING(category_column | column, dimension[, combiner[, initializer]])",
        (
            Param("category", "category"),
            Param("dimension", "size"),
            Param("combiner", "combiner", "mean"),
            Param("initializer", "initializer", None),
        ),
    ),
    "INDICATOR": Signature("INDICATOR(category_column | column)", (Param("category", "category"),)),
    "CROSS": Signature(
        "CROSS([column, ...], hash_bucket_size)",
        (Param("columns", "cross"), Param("hash_bucket_size", "size")),
    ),
}
ALIASES = {"BUCKETIZE": "BUCKET"}  # another name SQLFlow's documents use, and its kind

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


def feature_columns(statement: TrainNode, estimator: Estimator, label: str) -> list[FeatureColumn]:
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
    statement: TrainNode, estimator: Estimator, features: list[FeatureColumn]
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

    def __init__(self, statement: TrainNode) -> None:
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

    def __init__(self, statement: TrainNode, estimator: Estimator, label: str) -> None:
        self.at = _Source(statement).argument
        self.estimator = estimator
        self.label = label

    def top(self, expression: ast.Name | ast.Call) -> FeatureColumn:
        """A feature listed in COLUMN: a column name or ``*`` (kind "auto") or any function."""
        if isinstance(expression, ast.Name):
            if expression.parts == (STAR,):
                return FeatureColumn("auto", STAR)
            return FeatureColumn("auto", self.column(expression))
        feature = self.call(expression)
        if feature.kind in ("dense", "sparse") and feature.params.get("dtype") == "string":
            raise _error(
                f"{expression.function} of strings is a category, not numbers",
                self.at(expression, 3),
                f"wrap it in CATEGORY_HASH({expression.function}(...), bucket_size) or "
                "CATEGORY_ID(...), or give the dtype int or float",
            )
        return feature

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
        kind = ALIASES.get(call.function, call.function).lower()
        if kind not in self.estimator.feature_kinds:
            takes = [k.upper() for k in self.estimator.feature_kinds if k != "auto"]
            raise _error(
                f"{self.estimator.name} cannot take {call.function} columns",
                call.pos,
                f"{self.estimator.name} takes {', '.join(takes)}; {_taking_every_kind()}",
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
        if isinstance(column, FeatureColumn):  # DENSE(...) or SPARSE(...) in another function
            return self._over_field(call, kind, column, params)
        if kind == "weighted_category" and column is None:  # weights: the values of its keys
            _check_key_values(call, inputs[0])
            column = inputs[0].column
        if kind == "sparse" and "kv_delimiter" in params and params.get("dtype", "int") != "int":
            raise _error(
                "SPARSE's keys of key-value lists are integers: its dtype must be int",
                self.at(call, 3),
                f"usage: {signature.usage}",
            )
        return FeatureColumn(kind, column, params, inputs)

    def _over_field(
        self, call: ast.Call, kind: str, field: FeatureColumn, params: dict[str, Any]
    ) -> FeatureColumn:
        """NUMERIC or a category over DENSE(...) or SPARSE(...): that field's format."""
        if kind == "numeric":
            if len(call.args) > 1:
                raise _error(
                    f"NUMERIC({field.kind.upper()}(...)) takes its shape from {field.kind.upper()}",
                    self.at(call, 1),
                    f"remove NUMERIC's shape, or give it inside {field.kind.upper()}",
                )
            return field
        if len(call.args) > 2:
            raise _error(
                f"{call.function} over {field.kind.upper()}(...) takes the delimiter from it",
                self.at(call, 2),
                f"give the delimiter once, inside {field.kind.upper()}",
            )
        return FeatureColumn(kind, field.column, {**params, **_category_format(field, params)})

    def column(self, name: ast.Name) -> str:
        """A column a feature reads: one name or pattern, and not the label."""
        if len(name.parts) != 1:
            raise _error(f"COLUMN takes a column name, not {name}", name.pos, None)
        if name.parts == (STAR,):
            raise _error(
                "* stands for every column only on its own: COLUMN *",
                name.pos,
                'name the column, or give a pattern such as "f1|f2" or "f.*"',
            )
        if is_pattern(name.parts[0]):
            try:
                compile_pattern(name.parts[0])
            except re.error as error:
                raise _error(
                    f"{name} is not a valid column pattern: {error}",
                    name.pos,
                    "a pattern is a regular expression matching whole column names, "
                    'such as "f10|f9|f4" or "sepal_.*"',
                ) from None
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

    def _check_field(self, call: ast.Call, index: int, param: Param) -> str | FeatureColumn:
        """A column name, or DENSE(...) or SPARSE(...) saying how the column is written."""
        argument = call.args[index]
        if isinstance(argument, ast.Call) and argument.function in _FIELDS:
            return self.call(argument)
        return self._check_column(call, index, param)

    def _check_field_shape(self, call: ast.Call, index: int, param: Param) -> int | None:
        """A shape, or none (also when left out): found from the data when training."""
        if _word(call.args[index]).lower() == "none":
            return None
        return self._check_shape(call, index, param)

    def _check_delimiter(self, call: ast.Call, index: int, param: Param) -> str:
        """A non-empty string; COMMA, in any case, stands for ','."""
        delimiter = self._check_string(call, index, param)
        return "," if delimiter.lower() == "comma" else delimiter

    def _check_dtype(self, call: ast.Call, index: int, param: Param) -> str:
        dtype = self._check_string(call, index, param).lower()
        if dtype not in DTYPES:
            raise self._fail(call, index, param, "one of " + ", ".join(DTYPES))
        return DTYPES[dtype]

    def _check_weight_dtype(self, call: ast.Call, index: int, param: Param) -> None:
        """SQLFlow's dtype of the values of a key-value list: float (sqlml keeps none)."""
        if DTYPES.get(self._check_string(call, index, param).lower()) != "float":
            raise self._fail(call, index, param, "float")

    def _check_initializer(self, call: ast.Call, index: int, param: Param) -> str:
        """A Keras initializer's name; TensorFlow's ``..._initializer`` names too."""
        name = self._check_string(call, index, param).lower().removesuffix("_initializer")
        if name not in INITIALIZERS:
            raise self._fail(call, index, param, "one of " + ", ".join(INITIALIZERS))
        return name

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
        """BUCKET's source: a column name, NUMERIC(column) or DENSE(column) of one number."""
        argument = call.args[index]
        if isinstance(argument, ast.Name):
            return FeatureColumn("numeric", self.column(argument), {"shape": 1})
        if not isinstance(argument, ast.Call) or argument.function not in ("NUMERIC", "DENSE"):
            raise self._fail(call, index, param, "NUMERIC(column), DENSE(column) or a column name")
        numeric = self.call(argument)
        if numeric.kind == "dense" and "shape" not in numeric.params:
            numeric = replace(numeric, params={**numeric.params, "shape": 1})
        if numeric.kind == "sparse" or numeric.params["shape"] != 1:
            raise _error(
                f"BUCKET takes one number per row; {argument.function}'s shape must be 1 here",
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
        if isinstance(argument, ast.Call) and ALIASES.get(argument.function, argument.function) in (
            allowed
        ):
            return self.call(argument)
        raise self._fail(call, index, param, f"a column name or one of {', '.join(allowed)}")

    def _check_category(self, call: ast.Call, index: int, param: Param) -> FeatureColumn:
        """A category, or DENSE(...) or SPARSE(...) (or NUMERIC of them) of ids."""
        argument = call.args[index]
        if isinstance(argument, ast.Call) and argument.function in ("NUMERIC", *_FIELDS):
            field = self.call(argument)
            if field.kind in ("dense", "sparse"):
                return _field_category(field)
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
                isinstance(item, ast.Call)
                and ALIASES.get(item.function, item.function) not in _CROSS_ITEM
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


def _category_format(field: FeatureColumn, params: dict[str, Any]) -> dict[str, Any]:
    """How a category reads a DENSE or SPARSE field: its delimiters; a SPARSE field's shape
    is the number of ids unless the category gives its bucket_size."""
    found = {"delimiter": field.params.get("delimiter", ",")}
    if "kv_delimiter" in field.params:
        found["kv_delimiter"] = field.params["kv_delimiter"]
    if params.get("bucket_size") is None and field.kind == "sparse" and "shape" in field.params:
        found["bucket_size"] = field.params["shape"]
    return found


def _field_category(field: FeatureColumn) -> FeatureColumn:
    """EMBEDDING or INDICATOR of DENSE(...) or SPARSE(...): a category of its ids, weighted
    by the values of a key-value list."""
    category = FeatureColumn("category_id", field.column, _category_format(field, {}))
    if "kv_delimiter" in field.params:
        return FeatureColumn("weighted_category", field.column, {}, [category])
    return category


def _check_key_values(call: ast.Call, category: FeatureColumn) -> None:
    """WEIGHTED_CATEGORY without a weight column: its category reads key-value lists."""
    if "kv_delimiter" not in category.params:
        raise _error(
            "WEIGHTED_CATEGORY needs a weight column, or a category over key-value lists",
            call.pos,
            "give the weights: WEIGHTED_CATEGORY(CATEGORY_ID(c, 10), w), or read them from "
            'the keys\' values: WEIGHTED_CATEGORY(CATEGORY_ID(SPARSE(c, 10, ",", "int", ":"), 10))',
        )


def _word(argument: ast.Argument) -> str:
    """A bare word or string argument's text; "" for anything else."""
    if isinstance(argument, ast.Name) and len(argument.parts) == 1:
        return argument.parts[0]
    return argument if isinstance(argument, str) else ""


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


def _taking_every_kind() -> str:
    """The first family's estimator that takes every kind of feature column, as a hint."""
    every = next(e for e in estimators().values() if set(e.feature_kinds) == set(FEATURE_KINDS))
    return f"{family(every.family).title} estimators such as {every.name} take every kind"
