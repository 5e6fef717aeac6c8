"""A model's feature columns compiled into SQL (:meth:`~sqlml.models.Family.to_sql`): each
column of the matrix its family reads (``FeatureArrays.matrix``: the numbers first, then
each category in the features' order) as an :class:`Input`, expressions over the row's
columns giving the double TO PREDICT puts there (NULL for a missing value) and, for a
tree's splits, whether it is below a threshold.

- A plain number (a column, ``NUMERIC`` or ``DENSE`` of shape 1, holding numbers): itself.
- ``BUCKET``: the bucket's id; the value is compared with each boundary as the float32 TO
  PREDICT reads, so a value next to a boundary falls in TO PREDICT's bucket.
- ``CATEGORY_ID`` through a vocabulary: the value's index in it, the id after the list's
  last for other values. Text is compared character for character: a collation that ignores
  case, accents or trailing spaces (MySQL's do) merges no categories, since the SQL compares
  what ``REPLACE`` (which matches exactly) and ``LENGTH`` make of it. A split of a tree asks
  whether the value is among the first ids' values at once: whether ``REPLACE`` shortens
  their list (``'|a|b|'``) by taking ``'|' || value || '|'`` out. Numbers are compared as
  numbers (TO PREDICT reads them as their text, integral ones without ``.0``).
- ``CATEGORY_ID`` of integer ids: the value itself; one TO PREDICT refuses (a fraction, an
  id outside ``[0, bucket_size)``) is NULL.
- A category one-hot (``INDICATOR``; every category with ``one_hot``): one column per id, 1
  for the row's id and 0 for the others, all 0 for NULL.

A feature column that portable SQL cannot read exactly as TO PREDICT does is a
:class:`ModelError` naming it and why: hashes (``CATEGORY_HASH``, ``CROSS``), numbers
parsed from text (``DENSE`` and ``SPARSE`` lists, a text column of numbers), integer ids
read from text, several categories a row (a delimiter, ``SEQ_CATEGORY_ID``,
``WEIGHTED_CATEGORY``), ``EMBEDDING``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sqlglot import exp

from sqlml.errors import ModelError
from sqlml.ir import FeatureColumn
from sqlml.models import compiled

if TYPE_CHECKING:
    from sqlml.models.store import StoredModel

_NUMBER_KINDS = ("numeric", "dense", "sparse")  # the matrix's first columns
_EXACT_INTEGERS = 2**53  # of a double
_SEPARATORS = "|~^`\x1f"  # of a list of values (one that none of them holds)


@dataclass(frozen=True)
class Input:
    """One column of a model's matrix as SQL."""

    value: exp.Expression  # the double TO PREDICT puts there, NULL for a missing value
    missing: exp.Expression  # whether the value is missing (said more cheaply)
    # whether the value, as a float32, is below a float32 threshold (NULL when missing)
    below: Callable[[np.float32], exp.Expression]


@dataclass(frozen=True)
class Inputs:
    """A model's inputs as SQL."""

    inputs: list[Input]  # one per matrix column
    columns: list[str]  # the row's columns they read, each once, in the features' order

    @property
    def values(self) -> list[exp.Expression]:
        """Each input's value."""
        return [each.value for each in self.inputs]


def matrix(stored: StoredModel, one_hot: bool = False) -> Inputs:
    """The columns of the matrix ``FeatureArrays.matrix(one_hot)`` makes of ``stored``'s
    feature columns, as SQL; a :class:`ModelError` naming the first feature column that
    does not compile."""
    types = stored.metadata.get("column_types") or {}
    features = [FeatureColumn.from_dict(item) for item in stored.metadata["features"]]
    numbers: list[Input] = []
    categories: list[Input] = []
    for feature in features:
        try:
            if feature.kind in _NUMBER_KINDS:
                numbers.append(_plain(_number(feature, types)))
            elif feature.kind == "indicator":
                categories.extend(_one_hot(_ids(feature.inputs[0], types)))
            else:
                ids = _ids(feature, types)
                categories.extend(_one_hot(ids) if one_hot else [_id_input(ids)])
        except _Refused as refused:
            raise ModelError(
                f"model {stored.name} cannot be compiled into SQL: its feature column "
                f"{feature.name} {refused}",
                hint=compiled.NOT_COMPILED_HINT,
            ) from None
    columns = list(dict.fromkeys(name for feature in features for name in _sources(feature)))
    return Inputs(numbers + categories, columns)


class _Refused(Exception):
    """Why a feature column does not compile (the end of :func:`matrix`'s message)."""


@dataclass(frozen=True)
class _Ids:
    """A single-valued category as SQL: ids 0 to ``top`` a row, of ``buckets`` (more when
    a bucket_size leaves some unused)."""

    id: exp.Expression  # the row's id as a double, NULL when it has none
    missing: exp.Expression  # whether it has none
    has: Callable[[int], exp.Expression | None]  # whether the row's id is j (None: never)
    under: Callable[[int], exp.Expression]  # whether the row's id is below k (0 < k <= top)
    top: int
    buckets: int


def _plain(value: exp.Expression) -> Input:
    return Input(value, _is_null(value), lambda threshold: compiled.float32_below(value, threshold))


def _id_input(ids: _Ids) -> Input:
    """A category as one column of ids: a split compares the id with its threshold, which
    says how many of the ids go left."""

    def below(threshold: np.float32) -> exp.Expression:
        count = math.ceil(min(max(float(threshold), 0.0), ids.top + 1.0))  # the ids below it
        if count == 0:
            return exp.false()
        return exp.not_(ids.missing.copy()) if count > ids.top else ids.under(count)

    return Input(ids.id, ids.missing, below)


def _one_hot(ids: _Ids) -> list[Input]:
    """One column per id: 1 for the row's id, else 0."""
    values = []
    for j in range(ids.buckets):
        condition = ids.has(j)
        one = exp.Literal.number(0)
        if condition is not None:
            one = exp.Case(ifs=[exp.If(this=condition, true=exp.Literal.number(1))], default=one)
        values.append(_plain(_double(one)))
    return values


def _number(feature: FeatureColumn, types: dict[str, str]) -> exp.Expression:
    """A number the row holds, as a double."""
    kind, shape = feature.kind.upper(), feature.params.get("shape")
    if feature.kind == "sparse":
        raise _Refused(_TEXT_NUMBERS.format(what="index:value lists", kind=kind))
    if shape != 1:
        raise _Refused(_TEXT_NUMBERS.format(what=f"{shape} numbers a row", kind=kind))
    if feature.column is None or types.get(feature.column) == "text":
        raise _Refused(_TEXT_NUMBERS.format(what="numbers", kind=kind))
    return compiled.feature(feature.column)


_TEXT_NUMBERS = "reads {what} from text ({kind}), which portable SQL does not parse as sqlml does"


def _ids(feature: FeatureColumn, types: dict[str, str]) -> _Ids:
    """The ids of a category feature (``BUCKET`` or ``CATEGORY_ID``)."""
    kind, params = feature.kind.upper(), feature.params
    if feature.kind in ("category_hash", "cross"):
        raise _Refused(
            f"hashes its categories ({kind}), which portable SQL cannot do as sqlml does"
        )
    if feature.kind == "bucket":
        return _bucket(feature, types)
    if feature.kind in ("seq_category_id", "weighted_category") or (
        "delimiter" in params or "kv_delimiter" in params
    ):
        raise _Refused(
            f"reads several categories a row ({kind}), which portable SQL does not split as "
            "sqlml does"
        )
    if feature.kind != "category_id":
        raise _Refused(f"is of kind {kind}, which no model compiled into SQL reads")
    holds = _holds(feature.column or "", types)
    if "vocabulary" in params:
        return _vocabulary(feature, holds)
    if holds != "numbers":
        raise _Refused(
            f"reads integer ids from text ({kind}), which portable SQL does not parse as sqlml does"
        )
    x, size = compiled.feature(feature.column or ""), int(params["bucket_size"])
    valid = exp.and_(
        exp.GTE(this=x.copy(), expression=exp.Literal.number(0)),
        exp.LT(this=x.copy(), expression=exp.Literal.number(size)),
        exp.EQ(this=x.copy(), expression=exp.Round(this=x.copy())),
    )
    value = exp.Case(ifs=[exp.If(this=valid, true=x)])
    return _Ids(
        value,
        _is_null(value),
        lambda j: exp.EQ(this=x.copy(), expression=exp.Literal.number(j)),
        lambda k: exp.LT(this=value.copy(), expression=exp.Literal.number(k)),
        size - 1,
        size,
    )


def _bucket(feature: FeatureColumn, types: dict[str, str]) -> _Ids:
    """The bucket of a number: how many boundaries its float32 is not below."""
    x = _number(feature.inputs[0], types)
    bounds = [_float32_ceiling(float(b)) for b in feature.params["boundaries"]]
    last = len(bounds)
    ifs = [
        exp.If(this=compiled.float32_below(x, b), true=exp.Literal.number(i))
        for i, b in enumerate(bounds)
    ]
    ifs.append(exp.If(this=exp.not_(_is_null(x)), true=exp.Literal.number(last)))

    def has(j: int) -> exp.Expression:
        above = [compiled.float32_below(x, bounds[j - 1], negated=True)] if j > 0 else []
        below = [compiled.float32_below(x, bounds[j])] if j < last else []
        return exp.and_(*above, *below)

    return _Ids(
        _double(exp.Case(ifs=ifs)),
        _is_null(x),
        has,
        lambda k: compiled.float32_below(x, bounds[k - 1]),
        last,
        last + 1,
    )


def _float32_ceiling(value: float) -> np.float32:
    """The least float32 at least ``value`` (infinite beyond float32's range): a float32 is
    below ``value`` exactly when it is below this one."""
    with np.errstate(over="ignore"):
        nearest = np.float32(value)
    return nearest if float(nearest) >= value else np.nextafter(nearest, np.float32(np.inf))


def _holds(column: str, types: dict[str, str]) -> str:
    """What a category's column holds, "text" or "numbers", as the model recorded it."""
    if column not in types:
        raise _Refused(
            f"reads {column} as categories, and the model (trained by an older sqlml) does "
            "not record whether it holds text or numbers: train it again to compile it"
        )
    return types[column]


def _vocabulary(feature: FeatureColumn, holds: str) -> _Ids:
    """A category's index in its vocabulary, the id after the list's last for other
    values."""
    vocabulary, column = feature.params["vocabulary"], feature.column or ""
    if holds == "text":
        x = exp.column(column, quoted=True)
        conditions = [_text_is(x, token) for token in vocabulary]

        def among(k: int) -> exp.Expression:
            return _text_among(x, vocabulary[:k])
    else:
        x = compiled.feature(column)
        numbers = [_number_of(token) for token in vocabulary]
        conditions = [exp.EQ(this=x.copy(), expression=compiled.number(v)) for v in numbers]

        def among(k: int) -> exp.Expression:
            return exp.In(this=x.copy(), expressions=[compiled.number(v) for v in numbers[:k]])

    other = len(vocabulary)
    ifs = [exp.If(this=c, true=exp.Literal.number(i)) for i, c in enumerate(conditions)]
    ifs.append(exp.If(this=exp.not_(_is_null(x)), true=exp.Literal.number(other)))
    value = _double(exp.Case(ifs=ifs))

    def has(j: int) -> exp.Expression | None:
        if j < other:
            return conditions[j].copy()
        return (
            exp.EQ(this=value.copy(), expression=exp.Literal.number(other)) if j == other else None
        )

    return _Ids(value, _is_null(x), has, among, other, int(feature.params["bucket_size"]))


def _text_is(x: exp.Expression, token: str) -> exp.Expression:
    """Whether the text ``x`` is ``token``, character for character whatever the
    collation: equal, as long, and nothing left once ``REPLACE`` (which compares exactly)
    takes ``token`` out."""
    literal = exp.Literal.string(token)
    return exp.and_(
        exp.EQ(this=x.copy(), expression=literal.copy()),
        exp.EQ(this=exp.Length(this=x.copy()), expression=exp.Length(this=literal.copy())),
        exp.EQ(this=_length(_replace(x, literal, "")), expression=exp.Literal.number(0)),
    )


def _text_among(x: exp.Expression, tokens: Sequence[str]) -> exp.Expression:
    """Whether the text ``x`` is one of ``tokens``, character for character whatever the
    collation: it holds no separator, and ``REPLACE`` shortens the list of the tokens
    between separators by taking it out, between separators, of the list."""
    separator = next((s for s in _SEPARATORS if not any(s in token for token in tokens)), None)
    if separator is None:
        return exp.or_(*(_text_is(x, token) for token in tokens))
    text = exp.Literal.string(separator + separator.join(tokens) + separator)
    mark = exp.Literal.string(separator)
    needle = exp.DPipe(this=exp.DPipe(this=mark.copy(), expression=x.copy()), expression=mark)
    return exp.and_(
        exp.EQ(this=_length(_replace(x, mark, "")), expression=_length(x)),
        exp.LT(this=_length(_replace(text, needle, "")), expression=_length(text)),
    )


def _number_of(token: str) -> float:
    """The number that TO PREDICT reads as the category ``token`` from a column of numbers
    (as its text: integral ones without ``.0``, others as Python writes them)."""
    try:
        value = float(token)
    except ValueError:
        value = math.nan
    text = None
    if math.isfinite(value):
        text = str(int(value)) if value.is_integer() else repr(value)
    if text != token or abs(value) >= _EXACT_INTEGERS:
        raise _Refused(
            f"holds the category {token!r}, which no number compares with exactly in SQL"
        )
    return value


def _replace(text: exp.Expression, old: exp.Expression, new: str) -> exp.Expression:
    return exp.Replace(this=text.copy(), expression=old.copy(), replacement=exp.Literal.string(new))


def _length(text: exp.Expression) -> exp.Expression:
    return exp.Length(this=text.copy())


def _is_null(x: exp.Expression) -> exp.Expression:
    return exp.Is(this=x.copy(), expression=exp.Null())


def _double(value: exp.Expression) -> exp.Expression:
    """``value`` as a double: arithmetic on it stays in doubles (MySQL divides exact
    decimals to 4 more digits only)."""
    return exp.cast(value, exp.DataType.Type.DOUBLE)


def _sources(feature: FeatureColumn) -> list[str]:
    """The columns a feature reads, its inputs' included."""
    own = [feature.column] if feature.column else []
    return own + [name for item in feature.inputs for name in _sources(item)]
