"""Feature columns from the data: derive them from a SELECT's result, or fill in COLUMN's.

The rules are documented in docs/features.md. The derived columns are stored with the
model, so prediction transforms its rows exactly as training did.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from numbers import Number
from typing import Any

import numpy as np

from sqlml.datasources import Columns
from sqlml.errors import ModelError
from sqlml.ir import FeatureColumn
from sqlml.runtime.cells import non_null_sample, split, value_texts
from sqlml.runtime.features_expand import check_columns, expand, sources
from sqlml.semantics.column_patterns import STAR

MAX_VOCABULARY = 10_000  # most frequent values kept when a vocabulary has no bucket_size

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER_LIST = re.compile(rf"\s*{_NUMBER}(?:\s*,\s*{_NUMBER})*\s*")
_SPARSE_LIST = re.compile(rf"\s*\d+:{_NUMBER}(?:\s*[,\s]\s*\d+:{_NUMBER})*\s*")
_SPARSE_INDEX = re.compile(r"(\d+):")
# LIBSVM's key-value list, SQLFlow's default format of a SPARSE column: "1:0.5 3:-1.5".
_LIBSVM_LIST = re.compile(rf" *\d+:{_NUMBER}(?: +\d+:{_NUMBER})* *")
_INTEGER = re.compile(r"[+-]?\d+")


EXCLUDED = "model.excluded_columns"  # the attribute naming selected columns not features


def not_features(attributes: Mapping[str, Any]) -> tuple[str, ...]:
    """The selected columns a training's ``attributes`` say are not features (``EXCLUDED``,
    comma-separated)."""
    return tuple(
        name.strip() for name in (attributes.get(EXCLUDED) or "").split(",") if name.strip()
    )


def derive(
    columns: Columns,
    features: list[FeatureColumn],
    label: str,
    group: str | None = None,
    excluded: tuple[str, ...] = (),
) -> list[FeatureColumn]:
    """``features`` resolved from the data, their patterns and ``*`` expanded; the selected
    columns but ``label``, the ranking query id column ``group`` and the ``excluded`` ones
    that they leave out are features too (:func:`reads_the_rest`)."""
    _check_excluded(columns, features, excluded)
    features = expand(columns, with_the_rest(features), (label, group, *excluded))
    if not features:
        raise ModelError(
            "there are no feature columns", hint="select at least one column besides the LABEL"
        )
    check_columns(columns, features)
    return [_resolve(feature, columns) for feature in features]


def _check_excluded(
    columns: Columns, features: list[FeatureColumn], excluded: tuple[str, ...]
) -> None:
    """A :class:`ModelError` for an excluded column the SELECT does not return, or that
    COLUMN names."""
    missing = [name for name in excluded if name not in columns]
    if missing:
        raise ModelError(
            f"{EXCLUDED} names {', '.join(missing)}, which the SELECT does not return",
            hint="name selected columns only: " + ", ".join(columns),
        )
    named = [name for name in excluded if any(name in sources(f) for f in features)]
    if named:
        raise ModelError(
            f"{', '.join(named)} is both in {EXCLUDED} and a feature that COLUMN names",
            hint=f"leave it out of COLUMN or of {EXCLUDED}",
        )


def reads_the_rest(features: list[FeatureColumn]) -> bool:
    """Whether the selected columns that ``features`` leave out are features too: as in
    SQLFlow, unless COLUMN feeds several inputs (``FOR``), where each lists all of its own,
    or already says where they go (``*``)."""
    return not any(f.target for f in features) and not any(f.column == STAR for f in features)


def with_the_rest(features: list[FeatureColumn]) -> list[FeatureColumn]:
    """``features``, and ``*`` for the selected columns they leave out where those are
    features too (:func:`reads_the_rest`)."""
    return [*features, FeatureColumn("auto", STAR)] if reads_the_rest(features) else features


def left_out(
    columns: Columns,
    features: list[FeatureColumn],
    label: str,
    group: str | None = None,
    excluded: tuple[str, ...] = (),
) -> list[str]:
    """The selected columns (but ``label``, ``group`` and the ``excluded`` ones) that
    COLUMN's ``features`` leave out and that are features all the same; none without
    COLUMN."""
    if not features or not reads_the_rest(features):
        return []
    listed = len(expand(columns, features, (label, group, *excluded)))
    every = expand(columns, with_the_rest(features), (label, group, *excluded))
    return [feature.name for feature in every[listed:]]


def left_out_warning(names: list[str]) -> tuple[str, str]:
    """The warning about the selected columns ``names`` that COLUMN leaves out, which are
    features too: its message and its hint."""
    shown = ", ".join(names)
    verb, them = ("is a feature", "it") if len(names) == 1 else ("are features", "them")
    return (
        f"the SELECT's {shown}, which COLUMN leaves out, {verb} too, as in SQLFlow",
        f"leave {shown} out of the SELECT to keep {them} out of the model, or name {them} in "
        "COLUMN",
    )


def _resolve(feature: FeatureColumn, columns: Columns) -> FeatureColumn:
    feature = replace(feature, inputs=[_resolve(item, columns) for item in feature.inputs])
    if feature.kind == "auto":
        return replace(_guess(feature.column, columns[feature.column]), target=feature.target)
    if feature.kind in ("category_id", "seq_category_id"):
        return _with_vocabulary(feature, columns[feature.column])
    if feature.kind == "sparse" and "delimiter" not in feature.params:
        feature = _sparse_format(feature, columns[feature.column])
    if feature.kind in ("dense", "sparse") and "shape" not in feature.params:
        shape = _shape(feature, value_texts(columns[feature.column]))
        return replace(feature, params={**feature.params, "shape": shape})
    return feature


def _sparse_format(feature: FeatureColumn, values: np.ndarray) -> FeatureColumn:
    """A SPARSE column without a delimiter in SQLFlow's default formats, told by its values:
    LIBSVM's key-value lists ("1:0.5 3:-1.5": ' ' between the pairs, ':' in each) when every
    value is one, else lists of ids or pairs separated by ','."""
    filled = [text for text in value_texts(values) if text and text.strip()]
    libsvm = bool(filled) and all(_LIBSVM_LIST.fullmatch(text) for text in filled)
    delimiter = {"delimiter": " ", "kv_delimiter": ":"} if libsvm else {"delimiter": ","}
    return replace(feature, params={**feature.params, **delimiter})


def _shape(feature: FeatureColumn, texts: list[str | None]) -> int:
    """A DENSE column's number of values per row; a SPARSE one's largest index plus one."""
    params = feature.params
    if feature.kind == "sparse":
        keys = [
            key
            for text in texts
            for key in split(text, params["delimiter"], params.get("kv_delimiter", ":"))
        ]
        if not all(_INTEGER.fullmatch(key) and int(key) >= 0 for key in keys):
            raise ModelError(
                f"SPARSE column {feature.column} holds indices that are not integers >= 0",
                hint="write sparse rows as 0:1.5,7:2 or 3,5,7",
            )
        return max(map(int, keys), default=0) + 1
    sizes = {len(split(text, params["delimiter"])) for text in texts if text and text.strip()}
    if not sizes:
        raise _all_null(feature.column)
    if len(sizes) > 1:
        raise ModelError(
            f"DENSE column {feature.column} holds {min(sizes)} to {max(sizes)} values per row",
            hint=f"give DENSE({feature.column}, shape) a shape, or read it with SPARSE",
        )
    return sizes.pop()


def _guess(name: str, values: np.ndarray) -> FeatureColumn:
    """The feature a plain column makes: numbers, a dense or sparse vector, or a category."""
    if values.dtype.kind in "biuf":
        return FeatureColumn("numeric", name, {"shape": 1})
    if values.dtype.kind in "mM":
        raise _unsupported(name, "dates or times")
    sample = non_null_sample(values)
    if not sample:
        raise _all_null(name)
    if all(isinstance(v, Number) for v in sample):
        return FeatureColumn("numeric", name, {"shape": 1})
    odd = next((v for v in sample if not isinstance(v, str)), None)
    if odd is not None:
        raise _unsupported(name, f"{type(odd).__name__} values")
    filled = [text for text in sample if text.strip()]  # blank text: no value
    if filled and all(_NUMBER_LIST.fullmatch(text) for text in filled):
        sizes = {text.count(",") + 1 for text in filled}
        if sizes == {1}:
            return FeatureColumn("numeric", name, {"shape": 1})
        if len(sizes) == 1:
            return FeatureColumn("dense", name, {"shape": sizes.pop(), "delimiter": ","})
    if filled and all(_SPARSE_LIST.fullmatch(text) for text in filled):
        delimiter = "," if any("," in text for text in filled) else " "
        indices = (
            int(i) for text in values if isinstance(text, str) for i in _SPARSE_INDEX.findall(text)
        )
        return FeatureColumn("sparse", name, {"shape": max(indices) + 1, "delimiter": delimiter})
    return _with_vocabulary(FeatureColumn("category_id", name), values)


def _with_vocabulary(feature: FeatureColumn, values: np.ndarray) -> FeatureColumn:
    """A category with its vocabulary filled in, unless it holds integer ids (identity)."""
    params = feature.params
    size = params.get("bucket_size")
    counts = Counter(
        token
        for text in value_texts(values)
        for token in split(text, params.get("delimiter"), params.get("kv_delimiter"))
    )
    if not counts:
        raise _all_null(feature.column)
    if size is not None and all(_INTEGER.fullmatch(token) for token in counts):
        return feature
    limit = MAX_VOCABULARY if size is None else size - 1  # the last bucket: other values
    frequent = sorted(counts, key=lambda token: (-counts[token], token))[:limit]
    vocabulary = sorted(frequent)
    return replace(
        feature,
        params={**params, "vocabulary": vocabulary, "bucket_size": size or len(vocabulary) + 1},
    )


def _all_null(name: str) -> ModelError:
    return ModelError(
        f"feature column {name} is NULL in every row", hint=f"leave {name} out of the features"
    )


def _unsupported(name: str, what: str) -> ModelError:
    return ModelError(
        f"feature column {name} holds {what}; features are numbers or text",
        hint=f"convert {name} in the SELECT, e.g. to a number or with CAST(... AS VARCHAR)",
    )
