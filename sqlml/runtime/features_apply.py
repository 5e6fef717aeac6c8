"""Feature columns applied to a SELECT's rows: the arrays models train on and predict from.

Numbers (NUMERIC, DENSE, SPARSE) form one float matrix; every category feature becomes
padded id and weight matrices that a Keras model embeds or one-hot encodes, and that
:meth:`FeatureArrays.matrix` turns into numbers for XGBoost.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sqlml.datasources import Columns
from sqlml.errors import ModelError
from sqlml.ir import FeatureColumn
from sqlml.runtime.cells import FLOAT32_MAX, split, value_kind, value_texts
from sqlml.runtime.features_expand import check_columns, sources

_NUMBER_KINDS = ("numeric", "dense", "sparse")
MAX_COLUMNS = 1 << 20  # of the feature matrix (2**20: hashed or sparse indices of 20 bits)


@dataclass(frozen=True)
class Categorical:
    """The category ids of one feature: row ``i`` holds ``ids[i, j]`` with ``weights[i, j]``.

    Rows are padded to the longest; padding and NULLs have weight 0.
    """

    feature: int  # index of the feature in FeatureArrays.names
    ids: np.ndarray  # int32, rows x values, each in [0, buckets)
    weights: np.ndarray  # float32, rows x values
    buckets: int
    encoding: str  # "id" (a plain category), "one_hot" (INDICATOR) or "embedding"
    dimension: int = 0  # of the embedding
    initializer: str = "uniform"  # of the embedding's vectors: a Keras initializer's name


@dataclass(frozen=True)
class FeatureArrays:
    """The features of a SELECT's rows, ready for a model."""

    names: list[str]  # one per feature column, as in explanations
    numbers: np.ndarray  # float32, rows x width; NULL is NaN
    owners: np.ndarray  # the feature (index in names) of each column of numbers
    categoricals: list[Categorical]
    targets: list[str | None]  # per feature: the model input it feeds (COLUMN ... FOR), or all
    column_types: dict[str, str]  # per column read: "numbers" or "text" (unknown: absent)

    @property
    def rows(self) -> int:
        return len(self.numbers)

    def take(self, rows: np.ndarray) -> FeatureArrays:
        """The features of ``rows`` only."""
        return replace(
            self,
            numbers=self.numbers[rows],
            categoricals=[
                replace(c, ids=c.ids[rows], weights=c.weights[rows]) for c in self.categoricals
            ],
        )

    def matrix(self, one_hot: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """All features as one float32 matrix (for XGBoost), and the feature of each column.

        A single-valued plain category is one column holding its id (NaN for NULL), for
        trees; other categories, and all with ``one_hot``, are counts per id (one-hot).
        """
        if not self.categoricals:
            return self.numbers, self.owners  # no copy
        pairs = [  # each category, and whether it is one column of ids
            (c, c.encoding == "id" and c.ids.shape[1] == 1 and not one_hot)
            for c in self.categoricals
        ]
        check_width(self.numbers.shape[1] + sum(1 if p else c.buckets for c, p in pairs))
        blocks, owners = [self.numbers], [self.owners]
        for category, is_plain in pairs:
            if is_plain:
                block = np.where(category.weights > 0, category.ids, np.nan).astype(np.float32)
            else:
                block = np.zeros((self.rows, category.buckets), np.float32)
                rows = np.arange(self.rows)[:, None]
                np.add.at(block, (rows, category.ids), category.weights)
            blocks.append(block)
            owners.append(np.full(block.shape[1], category.feature))
        return np.hstack(blocks), np.concatenate(owners)

    def number_inputs(self) -> list[tuple[str, str | None, np.ndarray]]:
        """The numbers by target, each a Keras input: its name, target and columns.

        ``numbers`` holds those of the features without a target, ``numbers_<target>``
        those of the features with one.
        """
        owner_targets = [self.targets[owner] for owner in self.owners]
        blocks = []
        for target in dict.fromkeys(owner_targets):
            mine = np.array([t == target for t in owner_targets])
            name = "numbers" if target is None else f"numbers_{target}"
            blocks.append((name, target, self.numbers[:, mine]))
        return blocks

    def inputs(self) -> dict[str, np.ndarray]:
        """Named inputs of a Keras model: those of :meth:`number_inputs`, and ``ids_<i>``,
        ``weights_<i>`` of each category."""
        named = {name: block for name, _, block in self.number_inputs()}
        for i, category in enumerate(self.categoricals):
            named[f"ids_{i}"] = category.ids
            named[f"weights_{i}"] = category.weights
        return named

    def permuted(self, feature: int, order: np.ndarray) -> FeatureArrays:
        """A copy with the rows of one feature (all its arrays) reordered by ``order``."""
        numbers = self.numbers.copy()
        mine = self.owners == feature
        numbers[:, mine] = self.numbers[order][:, mine]
        categoricals = [
            replace(c, ids=c.ids[order], weights=c.weights[order]) if c.feature == feature else c
            for c in self.categoricals
        ]
        return replace(self, numbers=numbers, categoricals=categoricals)


def check_width(width: int) -> None:
    """A :class:`ModelError` if a feature matrix of ``width`` columns is too wide to make."""
    if width > MAX_COLUMNS:
        raise ModelError(
            f"the features make {width:,} columns, more than sqlml takes ({MAX_COLUMNS:,})",
            hint="use smaller shapes and bucket sizes, or EMBEDDING for categories with many ids",
        )


def max_width(features: list[FeatureColumn]) -> int:
    """The most columns :meth:`FeatureArrays.matrix` makes of ``features``."""
    return sum(
        feature.params["shape"] if feature.kind in _NUMBER_KINDS else _buckets(feature)
        for feature in features
    )


def _buckets(feature: FeatureColumn) -> int:
    """The number of ids of a category feature."""
    if feature.kind == "bucket":
        return len(feature.params["boundaries"]) + 1
    if feature.kind in ("weighted_category", "indicator", "embedding"):
        return _buckets(feature.inputs[0])
    return feature.params.get("bucket_size") or feature.params["hash_bucket_size"]


def check_column_types(features: FeatureArrays, metadata: dict[str, Any]) -> None:
    """A :class:`ModelError` if a column holds numbers where the model was trained on text,
    or text where it was trained on numbers (``metadata["column_types"]``; models of older
    versions of sqlml have none)."""
    trained = metadata.get("column_types") or {}
    for column, found in features.column_types.items():
        expected = trained.get(column)
        if expected is not None and expected != found:
            cast = "DOUBLE" if expected == "numbers" else "VARCHAR"
            raise ModelError(
                f"feature column {column} holds {found}, but the model was trained on "
                f"{expected} in it",
                hint=f"convert it in the SELECT, e.g. CAST({column} AS {cast})",
            )


def transform(columns: Columns, features: list[FeatureColumn]) -> FeatureArrays:
    """Apply derived feature columns (see :func:`derive`) to the rows in ``columns``.

    A :class:`ModelError` if the numbers hold infinite values or values beyond float32's
    range (models compute in float32); NULL and NaN are missing values.
    """
    check_columns(columns, features)
    rows = len(next(iter(columns.values())))
    numeric = [(i, f) for i, f in enumerate(features) if f.kind in _NUMBER_KINDS]
    width = sum(feature.params["shape"] for _, feature in numeric)
    check_width(width)
    # Filled column by column: each value converted to float32 once, with no joining copy.
    numbers = np.empty((rows, width), np.float32)
    owners = np.empty(width, np.int64)
    at = 0
    for index, feature in numeric:
        shape = feature.params["shape"]
        _numbers(feature, columns[feature.column], numbers[:, at : at + shape])
        owners[at : at + shape] = index
        at += shape
    return FeatureArrays(
        names=[feature.name for feature in features],
        numbers=numbers,
        owners=owners,
        categoricals=[
            _categorical(index, feature, columns)
            for index, feature in enumerate(features)
            if feature.kind not in _NUMBER_KINDS
        ],
        targets=[feature.target for feature in features],
        column_types={
            name: kind
            for name in dict.fromkeys(name for f in features for name in sources(f))
            if (kind := value_kind(columns[name])) is not None
        },
    )


def _numbers(
    feature: FeatureColumn, values: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """NUMERIC, DENSE or SPARSE values as a float32 rows x shape block, written into ``out``
    when given."""
    shape = feature.params["shape"]
    block = np.empty((len(values), shape), np.float32) if out is None else out
    with np.errstate(over="ignore"):  # values beyond float32's range become inf: refused
        _fill(feature, values, block)
    _check_finite(feature.kind, feature.column, block)
    if feature.kind == "dense" and feature.params.get("dtype") == "int":
        _check_integers(feature, block)
    return block


def _check_integers(feature: FeatureColumn, block: np.ndarray) -> None:
    """A :class:`ModelError` if a DENSE column whose dtype is int holds fractions."""
    fractions = (block != np.round(block)) & ~np.isnan(block)
    if fractions.any():
        row = int(np.argmax(fractions.any(axis=1)))
        raise ModelError(
            f"{feature.kind.upper()} column {feature.column} holds fractions (row {row + 1}), "
            'but its dtype is "int"',
            hint='give the dtype "float", or round the values in the SELECT',
        )


def _check_finite(kind: str, column: str | None, block: np.ndarray) -> None:
    """A :class:`ModelError` if ``block`` (float32) holds infinite values: infinite in the
    data, or beyond float32's range."""
    infinite = np.isinf(block)
    if infinite.any():
        rows = int(infinite.reshape(len(block), -1).any(axis=1).sum())
        raise ModelError(
            f"{kind.upper()} column {column} holds infinite values, or values beyond "
            f"float32's range (±{FLOAT32_MAX:.4g}), in {rows} of {len(block)} rows",
            hint=f"filter those rows out or clip the values in the SELECT, e.g. WHERE {column} "
            f"BETWEEN -1e38 AND 1e38",
        )


def _fill(feature: FeatureColumn, values: np.ndarray, block: np.ndarray) -> None:
    """Write a NUMERIC, DENSE or SPARSE column's values into ``block``."""
    shape = feature.params["shape"]
    if feature.kind == "sparse":
        _sparse(feature, values, block)
        return
    if values.dtype == object and value_kind(values) == "numbers":  # booleans with NULLs
        with suppress(TypeError, ValueError):  # text among the numbers: read as text below
            values = np.array([np.nan if v is None else float(v) for v in values.tolist()])
    if values.dtype.kind in "biuf":
        if shape != 1:
            raise ModelError(
                f"{feature.kind.upper()} column {feature.column} holds one number per row, "
                f"but its shape is {shape}",
                hint="give a shape of 1, or select comma-separated numbers",
            )
        block[:, 0] = values
        return
    delimiter = feature.params.get("delimiter", ",")
    block[:] = np.nan
    for row, text in enumerate(value_texts(values)):
        if text is None or not text.strip():  # NULL or blank: NaN
            continue
        numbers = [_float(feature, token) for token in split(text, delimiter)]
        if len(numbers) != shape:
            raise ModelError(
                f"{feature.kind.upper()} column {feature.column} has {len(numbers)} values "
                f"in row {row + 1}, but its shape is {shape}",
                hint=f"every row must hold {shape} numbers separated by {delimiter!r}",
            )
        block[row] = numbers


def _sparse(feature: FeatureColumn, values: np.ndarray, block: np.ndarray) -> None:
    """``index:value`` lists (a bare index means value 1) written into ``block``; indices
    past the shape are dropped."""
    shape, kv = feature.params["shape"], feature.params.get("kv_delimiter", ":")
    block[:] = 0
    for row, text in enumerate(value_texts(values)):
        for token in split(text, feature.params["delimiter"]):
            index, value = _sparse_entry(feature, token, kv)
            if index < shape:
                block[row, index] = value


def _sparse_entry(feature: FeatureColumn, token: str, kv: str) -> tuple[int, float]:
    index, _, value = token.partition(kv)
    try:
        if index.strip().isdigit():
            return int(index), float(value) if value else 1.0
    except ValueError:
        pass
    raise ModelError(
        f"SPARSE column {feature.column} holds {token!r}; expected index{kv}value with an "
        "index >= 0",
        hint=f"write sparse rows as 0{kv}1.5,7{kv}2",
    )


def _float(feature: FeatureColumn, token: str) -> float:
    try:
        return float(token)
    except ValueError:
        raise ModelError(
            f"{feature.kind.upper()} column {feature.column} holds {token!r}, "
            "which is not a number",
            hint=f"use CATEGORY_ID({feature.column}) for text, or fix the values",
        ) from None


def _categorical(index: int, feature: FeatureColumn, columns: Columns) -> Categorical:
    if feature.kind == "embedding":
        ids, weights, buckets = _ids(feature.inputs[0], columns)
        params = feature.params
        combined = _combine(weights, params["combiner"])
        return Categorical(
            index,
            ids,
            combined,
            buckets,
            "embedding",
            params["dimension"],
            params.get("initializer", "uniform"),
        )
    if feature.kind == "indicator":
        return Categorical(index, *_ids(feature.inputs[0], columns), "one_hot")
    return Categorical(index, *_ids(feature, columns), "id")


def _combine(weights: np.ndarray, combiner: str) -> np.ndarray:
    """Weights that make the weighted sum of a row's embeddings their sum, mean or sqrtn."""
    if combiner == "sum":
        return weights
    if combiner == "mean":
        total = weights.sum(axis=1, keepdims=True)
    else:
        total = np.sqrt((weights**2).sum(axis=1, keepdims=True))
    return np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)


def _ids(feature: FeatureColumn, columns: Columns) -> tuple[np.ndarray, np.ndarray, int]:
    """The padded ids and weights of a category feature, and its number of buckets."""
    params = feature.params
    if feature.kind == "bucket":
        values = _numbers(feature.inputs[0], columns[feature.inputs[0].column])[:, 0]
        present = ~np.isnan(values)
        ids = np.searchsorted(params["boundaries"], np.where(present, values, 0), side="right")
        return _column(ids), _column(present), len(params["boundaries"]) + 1
    if feature.kind == "weighted_category":
        return _weighted(feature, columns)
    if feature.kind == "cross":
        return _cross(feature, columns)
    lookup, delimiter, kv = _lookup(feature), params.get("delimiter"), params.get("kv_delimiter")
    known: dict[str, int] = {}
    rows = [
        [
            known[t] if t in known else known.setdefault(t, lookup(t))
            for t in split(text, delimiter, kv)
        ]
        for text in value_texts(columns[feature.column])
    ]
    return *_pad(rows), params["bucket_size"]


def _lookup(feature: FeatureColumn) -> Callable[[str], int]:
    """How one value becomes an id: by vocabulary, by hash, or as the integer it is."""
    buckets = feature.params["bucket_size"]
    if feature.kind == "category_hash":
        return lambda token: stable_hash(token) % buckets
    vocabulary = feature.params.get("vocabulary")
    if vocabulary is not None:
        index = {token: i for i, token in enumerate(vocabulary)}
        return lambda token: index.get(token, len(vocabulary))

    def identity(token: str) -> int:
        try:
            value = int(token)
        except ValueError:
            value = -1
        if not 0 <= value < buckets:
            raise ModelError(
                f"{feature.kind.upper()} column {feature.column} holds {token!r}, "
                f"which is not an id in [0, {buckets})",
                hint="raise bucket_size, or give none to map the values through a vocabulary",
            )
        return value

    return identity


def _weighted(feature: FeatureColumn, columns: Columns) -> tuple[np.ndarray, np.ndarray, int]:
    """A category's ids weighted by another column: a number per id, or one for all of them;
    or by the values of the category's own key-value lists."""
    category = feature.inputs[0]
    ids, present, buckets = _ids(category, columns)
    if feature.column == category.column and "kv_delimiter" in category.params:
        return ids, _key_values(category, columns, present), buckets
    delimiter = feature.inputs[0].params.get("delimiter") or ","
    weights = np.zeros_like(present)
    for row, text in enumerate(value_texts(columns[feature.column])):
        count = int(present[row].sum())
        values = [_float(feature, token) for token in split(text, delimiter)]
        if len(values) == 1:
            values *= count
        if count and len(values) != count:
            raise ModelError(
                f"WEIGHTED_CATEGORY: row {row + 1} has {count} categories but "
                f"{len(values)} weights in {feature.column}",
                hint="give one weight per category value",
            )
        with np.errstate(over="ignore"):  # beyond float32's range: inf, refused below
            weights[row, :count] = values[:count]
    _check_finite(feature.kind, feature.column, weights)
    return ids, weights, buckets


def _key_values(category: FeatureColumn, columns: Columns, present: np.ndarray) -> np.ndarray:
    """The values of a category's key-value lists, as its ids are padded (a bare key: 1)."""
    params, weights = category.params, np.zeros_like(present)
    for row, text in enumerate(value_texts(columns[category.column])):
        tokens = split(text, params.get("delimiter"))
        values = [
            _float(category, token.partition(params["kv_delimiter"])[2] or "1") for token in tokens
        ]
        with np.errstate(over="ignore"):  # beyond float32's range: inf, refused below
            weights[row, : len(values)] = values
    _check_finite(category.kind, category.column, weights)
    return weights


def _cross(feature: FeatureColumn, columns: Columns) -> tuple[np.ndarray, np.ndarray, int]:
    """The hashed combination of single-valued categories; NULL if any of them is NULL."""
    parts = [_ids(item, columns) for item in feature.inputs]
    keys = np.hstack([ids[:, :1] for ids, _, _ in parts])
    present = np.all(np.hstack([weights[:, :1] for _, weights, _ in parts]) > 0, axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    buckets = feature.params["hash_bucket_size"]
    hashed = np.array([stable_hash(",".join(map(str, key))) % buckets for key in unique.tolist()])
    ids = np.where(present, hashed[inverse.reshape(-1)], 0)
    return _column(ids), _column(present), buckets


def stable_hash(text: str) -> int:
    """A hash of ``text`` that is the same in every process and on every machine."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def _pad(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    width = max(1, max((len(row) for row in rows), default=0))
    ids = np.zeros((len(rows), width), np.int32)
    weights = np.zeros((len(rows), width), np.float32)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
        weights[i, : len(row)] = 1.0
    return ids, weights


def _column(values: np.ndarray) -> np.ndarray:
    """A rows x 1 matrix: int32 ids, or float32 weights from booleans."""
    dtype = np.float32 if values.dtype == bool else np.int32
    return values.astype(dtype).reshape(-1, 1)
