"""Feature columns from the data: derive them from a SELECT's result, or fill in COLUMN's.

The rules are documented in docs/features.md. The derived columns are stored with the
model, so prediction transforms its rows exactly as training did.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from numbers import Number
from typing import Any

import numpy as np

from sqlml.errors import ModelError
from sqlml.ir import FeatureColumn
from sqlml.runtime.datasource import Columns

SAMPLE_ROWS = 1000  # non-NULL values inspected to guess a column's kind
MAX_VOCABULARY = 10_000  # most frequent values kept when a vocabulary has no bucket_size
FLOAT32_MAX = float(np.finfo(np.float32).max)  # XGBoost and Keras compute in float32

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER_LIST = re.compile(rf"\s*{_NUMBER}(?:\s*,\s*{_NUMBER})*\s*")
_SPARSE_LIST = re.compile(rf"\s*\d+:{_NUMBER}(?:\s*[,\s]\s*\d+:{_NUMBER})*\s*")
_SPARSE_INDEX = re.compile(r"(\d+):")
_INTEGER = re.compile(r"[+-]?\d+")


def derive(
    columns: Columns, features: list[FeatureColumn], label: str, group: str | None = None
) -> list[FeatureColumn]:
    """``features`` resolved from the data; when empty, all selected columns but ``label``
    and the ranking query id column ``group``."""
    if not features:
        features = [FeatureColumn("auto", name) for name in columns if name not in (label, group)]
    if not features:
        raise ModelError(
            "there are no feature columns", hint="select at least one column besides the LABEL"
        )
    check_columns(columns, features)
    return [_resolve(feature, columns) for feature in features]


def check_columns(
    columns: Columns, features: list[FeatureColumn], source: str = "the SELECT"
) -> None:
    """A :class:`ModelError` if a feature reads a column that ``source`` did not return."""
    needed = dict.fromkeys(name for feature in features for name in sources(feature))
    missing = [name for name in needed if name not in columns]
    if missing:
        raise ModelError(
            f"feature column {', '.join(missing)} is not in the result of {source}",
            hint=f"{source} returns: {', '.join(columns)}",
        )


def sources(feature: FeatureColumn) -> list[str]:
    """The columns a feature reads, its inputs' included."""
    own = [feature.column] if feature.column else []
    return own + [name for item in feature.inputs for name in sources(item)]


def value_kind(values: np.ndarray) -> str | None:
    """What a column holds: "numbers" (booleans too) or "text", by its type or its first
    1,000 values that are not NULL; None when that is not known (all NULL, mixed)."""
    if values.dtype.kind in "biuf":
        return "numbers"
    if values.dtype.kind in "US":
        return "text"
    sample = _sample(values) if values.dtype == object else []
    if sample and all(isinstance(v, str) for v in sample):
        return "text"
    if sample and all(isinstance(v, Number) for v in sample):
        return "numbers"
    return None


def _resolve(feature: FeatureColumn, columns: Columns) -> FeatureColumn:
    feature = replace(feature, inputs=[_resolve(item, columns) for item in feature.inputs])
    if feature.kind == "auto":
        return replace(_guess(feature.column, columns[feature.column]), target=feature.target)
    if feature.kind in ("category_id", "seq_category_id"):
        return _with_vocabulary(feature, columns[feature.column])
    return feature


def _guess(name: str, values: np.ndarray) -> FeatureColumn:
    """The feature a plain column makes: numbers, a dense or sparse vector, or a category."""
    if values.dtype.kind in "biuf":
        return FeatureColumn("numeric", name, {"shape": 1})
    if values.dtype.kind in "mM":
        raise _unsupported(name, "dates or times")
    sample = _sample(values)
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


def _sample(values: np.ndarray) -> list[Any]:
    sample = []
    for value in values:
        if value is not None:
            sample.append(value)
            if len(sample) == SAMPLE_ROWS:
                break
    return sample


def _with_vocabulary(feature: FeatureColumn, values: np.ndarray) -> FeatureColumn:
    """A category with its vocabulary filled in, unless it holds integer ids (identity)."""
    params = feature.params
    size = params.get("bucket_size")
    counts = Counter(
        token for text in value_texts(values) for token in split(text, params.get("delimiter"))
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


def value_texts(values: np.ndarray) -> list[str | None]:
    """Each value as category text (None for NULL); integral numbers print without '.0'."""
    return [_text(value) for value in values.tolist()]


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else str(value)


def split(text: str | None, delimiter: str | None) -> list[str]:
    """The values in one cell: none for NULL, the text itself without a delimiter."""
    if text is None:
        return []
    if delimiter is None:
        return [text]
    return [token.strip() for token in text.split(delimiter) if token.strip()]
