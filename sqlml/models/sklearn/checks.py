"""Checks on a stored scikit-learn model before skops reads it (neither skops nor
scikit-learn needed).

A model is skops's format: a zip archive of ``schema.json`` (the object tree) and ``.npy``
arrays (read by numpy without pickle). skops builds each object of the tree by importing the
type the tree names, so the tree may name only the types of :data:`ALLOWED_TYPES`, through
the node loaders of :data:`ALLOWED_LOADERS` (no functions, methods or ``__reduce__`` of other
types); its root must be the pipeline sqlml writes. The archive's members are stored
uncompressed (nothing to inflate), each named as skops names them.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from typing import Any

from sqlml.errors import ModelError
from sqlml.models.checks import MAX_MODEL_BYTES, TAMPERED_HINT, ZIP_ERRORS, json_depth

MAX_SCHEMA_DEPTH = 64  # a forest's tree: about 20 levels
MAX_MEMBERS = 1_000_000
PIPELINE = "sklearn.pipeline.Pipeline"
# The estimators' classes where scikit-learn defines them, by the family's estimator names.
ESTIMATOR_TYPES = {
    "sklearn.ensemble.RandomForestClassifier": "sklearn.ensemble._forest.RandomForestClassifier",
    "sklearn.ensemble.RandomForestRegressor": "sklearn.ensemble._forest.RandomForestRegressor",
    "sklearn.linear_model.LogisticRegression": "sklearn.linear_model._logistic.LogisticRegression",
    "sklearn.linear_model.LinearRegression": "sklearn.linear_model._base.LinearRegression",
    "sklearn.cluster.KMeans": "sklearn.cluster._kmeans.KMeans",
    "sklearn.ensemble.IsolationForest": "sklearn.ensemble._iforest.IsolationForest",
    "sklearn.svm.OneClassSVM": "sklearn.svm._classes.OneClassSVM",
}
# Every type a stored model may name: the pipeline (imputation, then the estimator), the
# estimators, their trees, and the plain values and numpy arrays of their state.
ALLOWED_TYPES = frozenset(
    {
        PIPELINE,
        "sklearn.impute._base.SimpleImputer",
        *ESTIMATOR_TYPES.values(),
        "sklearn.tree._classes.DecisionTreeClassifier",
        "sklearn.tree._classes.DecisionTreeRegressor",
        "sklearn.tree._classes.ExtraTreeRegressor",
        "sklearn.tree._tree.Tree",
        "builtins.dict",
        "builtins.list",
        "builtins.tuple",
        "builtins.str",
        "builtins.int",
        "builtins.float",
        "builtins.bool",
        "builtins.NoneType",
        "numpy.ndarray",
        "numpy.dtype",
        "numpy.float64",
        "numpy.float32",
        "numpy.int64",
        "numpy.int32",
        "numpy.intp",
        "numpy.bool_",
    }
)
# skops's loaders of those: containers, JSON values, numpy arrays and dtypes, objects built
# from their state, trees, and types (no functions, methods, operators or reductions).
ALLOWED_LOADERS = frozenset(
    {
        "DictNode",
        "ListNode",
        "TupleNode",
        "JsonNode",
        "NdArrayNode",
        "DTypeNode",
        "ObjectNode",
        "TreeNode",
        "TypeNode",
    }
)
_ARRAY = re.compile(r"[0-9]{1,40}\.npy")


def skops_archive(data: bytes, estimator: str | None = None) -> None:
    """A :class:`ModelError` unless ``data`` is a skops archive of the pipeline sqlml
    stores, naming only :data:`ALLOWED_TYPES` (and, given ``estimator``, that one's class)."""
    tree, named = skops_tree(data, skops_error)
    if not isinstance(tree, dict) or node_type(tree) != PIPELINE:
        raise skops_error(f"it does not hold a {PIPELINE}")
    wanted = ESTIMATOR_TYPES.get(estimator or "")
    if estimator is not None and wanted not in named:
        others = sorted(named & set(ESTIMATOR_TYPES.values()))
        raise skops_error(
            f"it holds {', '.join(others) or 'no estimator'}, not the {estimator} its "
            "metadata names"
        )


def skops_tree(data: bytes, error: Callable[[str], ModelError]) -> tuple[Any, set[str]]:
    """The object tree of the skops archive ``data`` and the types it names, checked (its
    members, its nesting, only :data:`ALLOWED_TYPES` through :data:`ALLOWED_LOADERS`);
    else ``error(why)`` is raised."""
    members = _members(data, error)
    schema = members.get("schema.json")
    if schema is None:
        raise error("it is not a skops archive: it has no schema.json")
    json_depth(schema, MAX_SCHEMA_DEPTH, error)
    try:
        tree = json.loads(schema)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise error("its schema.json is not JSON") from None
    return tree, _types(tree, members, error)


def skops_error(why: str) -> ModelError:
    return ModelError(f"the stored scikit-learn model is not loaded: {why}", hint=TAMPERED_HINT)


def _members(data: bytes, error: Callable[[str], ModelError]) -> dict[str, bytes]:
    """The archive's members by name, checked: only schema.json and arrays, each once,
    stored uncompressed and unencrypted."""
    if len(data) > MAX_MODEL_BYTES:
        raise error(f"it is {len(data):,} bytes, more than sqlml loads")
    members: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS:
                raise error(f"it has {len(infos):,} members, more than sqlml loads")
            for info in infos:
                name = info.filename
                if name != "schema.json" and not _ARRAY.fullmatch(name):
                    raise error(f"it holds {name!r}, which a skops archive does not")
                if name in members:
                    raise error(f"it holds {name!r} twice")
                if info.flag_bits & 1 or info.compress_type != zipfile.ZIP_STORED:
                    raise error(f"its member {name!r} is compressed or encrypted")
                if info.file_size > len(data):
                    raise error(f"its member {name!r} is larger than the archive")
                members[name] = archive.read(info)
    except ZIP_ERRORS:
        raise error("it is not a skops archive, or a damaged or cut-short one") from None
    return members


def _types(tree: Any, members: dict[str, bytes], error: Callable[[str], ModelError]) -> set[str]:
    """The types the schema's nodes name; a :class:`ModelError` at the first that is not
    allowed, loaded by a loader that is not, or whose array is not in the archive."""
    named: set[str] = set()
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        pending.extend(node.values())
        if not {"__module__", "__class__", "__loader__"} & node.keys():
            continue
        name, loader = node_type(node), node.get("__loader__")
        if name not in ALLOWED_TYPES:
            raise error(f"its schema names {name}, which sqlml does not load")
        if not isinstance(loader, str) or loader not in ALLOWED_LOADERS:
            raise error(f"its schema loads {name} with {loader}, which sqlml does not use")
        array = node.get("file")
        numpy_array = loader == "NdArrayNode" and node.get("type") == "numpy"
        if numpy_array and (
            not isinstance(array, str) or array not in members or array == "schema.json"
        ):
            raise error(f"its schema names an array it does not hold: {array}")
        named.add(name)
    return named


def node_type(node: dict[str, Any]) -> str:
    """``module.class`` of a node (as written, whatever it holds)."""
    return f"{node.get('__module__')}.{node.get('__class__')}"
