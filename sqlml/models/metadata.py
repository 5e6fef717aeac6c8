"""Checks on a model's stored metadata (the JSON of ``sqlml_model_versions``) as it is read.

Whoever can write the models tables can write any text there. Every reader of a model goes
through :func:`read_metadata`, so a row that is not JSON, misses a key or holds a value of
the wrong type is a :class:`ModelError` naming the model and version, never a ``KeyError``
deep in scoring. Listing a model needs the keys SHOW MODELS shows (:data:`LISTED`, which a
failed search trial's record also has); using it needs all of :data:`USED`, with feature
columns and labels that sqlml can apply. A version's ``lineage`` (where it came from,
:mod:`sqlml.runtime.lineage`) is optional, as versions stored before it have none, and
checked when present.
"""

from __future__ import annotations

import json
from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import json_depth
from sqlml.models.registry import families

MAX_METADATA_BYTES = 64 << 20  # vocabularies of 10,000 values take about 1 MB a feature
MAX_METADATA_DEPTH = 32  # sqlml's own nests about 8 levels
MAX_SIZE = (1 << 31) - 1  # shapes and bucket counts: category ids are 32-bit integers

LISTED: dict[str, type | tuple[type, ...]] = {
    "estimator": str,
    "label": str,
    "rows": int,
    "statement": str,
    "trained_at": str,
}
USED: dict[str, type | tuple[type, ...]] = {
    **LISTED,
    "family": str,
    "format": str,
    "attributes": dict,
    "params": dict,
    "features": list,
    "labels": dict,
    "metrics": dict,
    "sqlml_version": str,
}
_CLASS_TYPES = (str, int, float, bool)
# The params each kind of feature column needs, with their types; sizes are ints in
# [1, MAX_SIZE]. Kinds that read a column need it; composite kinds need their inputs.
_FEATURE_PARAMS: dict[str, dict[str, type]] = {
    "numeric": {"shape": int},
    "dense": {"shape": int, "delimiter": str},
    "sparse": {"shape": int, "delimiter": str},
    "category_id": {"bucket_size": int},
    "seq_category_id": {"bucket_size": int},
    "category_hash": {"bucket_size": int},
    "weighted_category": {},
    "bucket": {"boundaries": list},
    "embedding": {"dimension": int, "combiner": str},
    "indicator": {},
    "cross": {"hash_bucket_size": int},
}
_SIZES = ("shape", "bucket_size", "hash_bucket_size", "dimension")
_READS_COLUMN = ("numeric", "dense", "sparse", "category_id", "seq_category_id")
_READS_COLUMN += ("category_hash", "weighted_category")
_ONE_INPUT = ("weighted_category", "bucket", "embedding", "indicator")


_TYPE_WORDS: dict[type | tuple[type, ...], str] = {
    str: "text",
    int: "an integer",
    dict: "an object",
    list: "a list",
}


class _Damaged(Exception):
    """What is wrong with the metadata, in a few words."""


def read_metadata(name: str, version: int, text: Any, used: bool = True) -> dict[str, Any]:
    """The metadata of ``version`` of model ``name`` from its stored ``text``, checked to
    have what listing it (``used`` False) or using it needs; a :class:`ModelError` if not."""
    try:
        return _checked(text, USED if used else LISTED, used)
    except _Damaged as damage:
        raise damaged(name, version, str(damage)) from None


def damaged(name: str, version: int, why: str) -> ModelError:
    return ModelError(
        f"model {name} version {version} cannot be used: its stored metadata is damaged ({why})",
        hint="train the model again; if no one changed it on purpose, check who can write "
        "the models tables",
    )


def _checked(text: Any, keys: dict[str, type | tuple[type, ...]], used: bool) -> dict[str, Any]:
    if isinstance(text, bytes | bytearray | memoryview):
        text = bytes(text).decode("utf-8", "replace")
    if not isinstance(text, str):
        raise _Damaged("it is not text")
    if len(text) > MAX_METADATA_BYTES:
        raise _Damaged(f"it is {len(text):,} characters, more than sqlml reads")
    json_depth(text.encode(), MAX_METADATA_DEPTH, _Damaged)
    try:
        metadata = json.loads(text)
    except (ValueError, RecursionError):
        raise _Damaged("it is not JSON") from None
    if not isinstance(metadata, dict):
        raise _Damaged("it is not a JSON object")
    for key, kind in keys.items():
        if key not in metadata:
            raise _Damaged(f"it has no {key}")
        if not isinstance(metadata[key], kind) or isinstance(metadata[key], bool):
            raise _Damaged(f"its {key} is not {_TYPE_WORDS[kind]}")
    if "lineage" in metadata:
        _check_lineage(metadata["lineage"])
    if used:
        family = families().get(metadata["family"])
        if family is None:
            raise _Damaged(f"its family {metadata['family']!r} is unknown")
        for index, feature in enumerate(metadata["features"]):
            _check_feature(feature, f"feature {index + 1}")
        _check_labels(metadata)
        wrong = family.check_metadata(metadata)
        if wrong:
            raise _Damaged(wrong)
        types = metadata.get("column_types", {})  # older versions of sqlml stored none
        if not isinstance(types, dict) or not set(types.values()) <= {"numbers", "text"}:
            raise _Damaged("its column_types are malformed")
    return metadata


def _check_lineage(lineage: Any) -> None:
    """A :class:`_Damaged` unless ``lineage`` has the shape TO TRAIN stores."""
    texts = ("run", "step", "program", "user", "host")
    position = lineage.get("statement") if isinstance(lineage, dict) else None
    if (
        not isinstance(lineage, dict)
        or not all(isinstance(lineage.get(key, 0), str | None) for key in texts)
        or not isinstance(position, dict)
        or not all(_count(position.get(key)) for key in ("line", "column"))
        or not _texts(lineage.get("libraries"), str)
        or not _texts(lineage.get("tables"), str | None)
    ):
        raise _Damaged("its lineage is malformed")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _texts(value: Any, kind: Any) -> bool:
    """Whether ``value`` is an object of texts to values of ``kind``."""
    return isinstance(value, dict) and all(isinstance(v, kind) for v in value.values())


def _check_feature(feature: Any, where: str) -> None:
    """A :class:`_Damaged` unless ``feature`` is a feature column sqlml can apply."""
    if not isinstance(feature, dict) or feature.get("kind") not in _FEATURE_PARAMS:
        raise _Damaged(f"{where} is not a feature column")
    kind, params = feature["kind"], feature.get("params", {})
    column, inputs = feature.get("column"), feature.get("inputs", [])
    if not isinstance(params, dict) or not isinstance(inputs, list):
        raise _Damaged(f"{where} ({kind}) has malformed params or inputs")
    if not isinstance(feature.get("target"), str | None) or not isinstance(column, str | None):
        raise _Damaged(f"{where} ({kind}) has a malformed column or target")
    if kind in _READS_COLUMN and column is None:
        raise _Damaged(f"{where} ({kind}) reads no column")
    if (kind in _ONE_INPUT and len(inputs) != 1) or (kind == "cross" and not inputs):
        raise _Damaged(f"{where} ({kind}) has {len(inputs)} inputs")
    for param, kind_of in _FEATURE_PARAMS[kind].items():
        if not isinstance(params.get(param), kind_of) or isinstance(params[param], bool):
            raise _Damaged(f"{where} ({kind}) has no valid {param}")
    for size in _SIZES:
        if size in params and not (isinstance(params[size], int) and 1 <= params[size] <= MAX_SIZE):
            raise _Damaged(f"{where} ({kind}) has a {size} out of range")
    vocabulary = params.get("vocabulary")
    if vocabulary is not None and not (
        isinstance(vocabulary, list)
        and all(isinstance(token, str) for token in vocabulary)
        and len(vocabulary) < params.get("bucket_size", 0)
    ):
        raise _Damaged(f"{where} ({kind}) has a malformed vocabulary")
    if not isinstance(params.get("delimiter"), str | None):
        raise _Damaged(f"{where} ({kind}) has a malformed delimiter")
    if kind == "bucket" and not all(
        isinstance(b, int | float) and not isinstance(b, bool) for b in params["boundaries"]
    ):
        raise _Damaged(f"{where} ({kind}) has malformed boundaries")
    for item in inputs:
        _check_feature(item, f"an input of {where}")


def _check_labels(metadata: dict[str, Any]) -> None:
    """A :class:`_Damaged` unless the labels are a classifier's (two or more classes) or a
    regressor's."""
    labels = metadata["labels"]
    task, classes = labels.get("task"), labels.get("classes")
    if (
        task not in ("classifier", "regressor")
        or not isinstance(classes, list)
        or not all(isinstance(c, _CLASS_TYPES) for c in classes)
        or not isinstance(labels.get("kind"), str)
        or (task == "classifier") is not (len(classes) >= 2)
    ):
        raise _Damaged("its labels are malformed")
