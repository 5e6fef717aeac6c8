"""What a stored XGBoost model must hold before XGBoost reads it (numpy, no XGBoost).

XGBoost follows a tree's links without bounds checks: a child out of range, a node linked
twice or to itself, a parent out of range, a split on a feature past the model's, a tree
group past the model's outputs, a linear model's weights shorter than its features: each
crashes the process or reads memory it does not own. :func:`check_model` refuses them all,
and anything else XGBoost never writes and sqlml never trains (categorical splits,
several targets, feature names): what XGBoost itself writes for sqlml passes (trees of
gbtree and dart boosters, XGBRF forests, pruned trees, linear models).

A tree is XGBoost's arrays indexed by node (``left_children``, ``right_children``,
``parents``, ``split_indices``, ``default_left`` and the numbers): node 0 is the root; a
split node's children are two consecutive nodes (XGBoost's predictor takes the right as
the left plus one); every node is reached from the root once, within :data:`MAX_TREE_DEPTH`
levels, but the nodes pruning deleted (split index :data:`DELETED`, default left), which
are not reached at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sqlml.models.metadata import MAX_SIZE

MAX_TREE_DEPTH = 1024  # XGBoost's SHAP recurses a tree's depth; trees are rarely 30 deep
ROOT_PARENTS = (-1, 2147483647)  # the root's parent, as XGBoost writes it
DELETED = 2147483647  # the split index of a node pruning deleted
_INDEX_ARRAYS = ("left_children", "right_children", "parents", "split_indices", "default_left")
_NUMBER_ARRAYS = ("split_conditions", "loss_changes", "sum_hessian", "base_weights")
_CATEGORY_ARRAYS = ("categories", "categories_nodes", "categories_segments", "categories_sizes")
_NO_CATEGORIES = ("enc", "feature_segments", "sorted_idx")


class Damaged(Exception):
    """What is wrong with the stored model, in a few words."""


def check_model(document: Any, params: dict[str, Any], most_features: int) -> None:
    """A :class:`Damaged` unless ``document`` (the decoded model) is a model XGBoost can
    read and use safely, of the objective and booster ``params`` trained, taking at most
    ``most_features`` features (what its feature columns can make)."""
    learner = _object(_object(document, "the document").get("learner"), "its learner")
    version = document.get("version")
    if not (_sequence(version) and len(version) == 3 and all(_is_int(v) for v in version)):
        raise Damaged("its version is not three integers")
    found = _object(learner.get("learner_model_param"), "its learner_model_param")
    features = _decimal(found, "num_feature", 0, 10**12)
    if features > most_features:
        raise Damaged(
            f"it takes {features:,} features, but its feature columns make at most "
            f"{most_features:,}"
        )
    classes = _decimal(found, "num_class", 0, MAX_SIZE)
    if "num_target" in found and _decimal(found, "num_target", 1, 1) != 1:
        raise Damaged("it has several targets")
    _base_score(found.get("base_score"), max(classes, 1))
    objective = _object(learner.get("objective"), "its objective")
    booster = _object(learner.get("gradient_booster"), "its gradient_booster")
    multi = params["objective"].startswith("multi:")
    _matches(
        {
            "objective": (objective.get("name"), params["objective"]),
            "booster": (booster.get("name"), params.get("booster", "gbtree")),
            "num_class": (classes, params["num_class"] if multi else 0),
        }
    )
    softmax = objective.get("softmax_multiclass_param")
    if softmax is not None and _decimal(_object(softmax, "its objective"), "num_class", 1) != (
        classes
    ):
        raise Damaged("its objective's num_class is not its learner's")
    for key in ("feature_names", "feature_types"):
        if len(_listed(learner.get(key, []), key)):
            raise Damaged(f"it has {key}, which sqlml's models have not")
    if not isinstance(learner.get("attributes", {}), dict):
        raise Damaged("its attributes are not an object")
    if booster["name"] == "gblinear":
        _linear(_object(booster.get("model"), "its linear model"), features, max(classes, 1))
        return
    if booster["name"] == "dart":
        model = _object(booster.get("gbtree"), "its dart booster")
        _matches({"dart booster": (model.get("name"), "gbtree")})
        trees = _trees(_object(model.get("model"), "its trees"), features, max(classes, 1))
        if len(_numbers(booster.get("weight_drop"), "weight_drop")) != trees:
            raise Damaged("its weight_drop does not have one weight a tree")
        return
    _trees(_object(booster.get("model"), "its trees"), features, max(classes, 1))


def _matches(pairs: dict[str, tuple[Any, Any]]) -> None:
    wrong = [
        f"{key} {found}, not {wanted}" for key, (found, wanted) in pairs.items() if found != wanted
    ]
    if wrong:
        raise Damaged(f"it does not match its metadata: it has {', '.join(wrong)}")


def _base_score(text: Any, outputs: int) -> None:
    """A :class:`Damaged` unless ``text`` is XGBoost's intercept: a finite number, or a
    list of one or ``outputs`` finite numbers."""
    if not isinstance(text, str) or len(text) > 64 * (outputs + 1):
        raise Damaged("its base_score is malformed")
    listed = text.startswith("[") and text.endswith("]")
    parts = text[1:-1].split(",") if listed else [text]
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise Damaged("its base_score is malformed") from None
    if len(values) not in (1, outputs) or not all(math.isfinite(v) for v in values):
        raise Damaged("its base_score is malformed")


def _linear(model: dict[str, Any], features: int, outputs: int) -> None:
    weights = _numbers(model.get("weights"), "its linear model's weights")
    if len(weights) != (features + 1) * outputs:
        raise Damaged(
            f"its linear model has {len(weights):,} weights, not {(features + 1) * outputs:,}"
        )
    if "boosted_rounds" in model and not (
        _is_int(model["boosted_rounds"]) and 0 <= model["boosted_rounds"] <= MAX_SIZE
    ):
        raise Damaged("its linear model's boosted_rounds is malformed")


def _trees(model: dict[str, Any], features: int, outputs: int) -> int:
    """The number of trees of a gbtree ``model``, checked (see the module's docstring)."""
    param = _object(model.get("gbtree_model_param"), "its gbtree_model_param")
    count = _decimal(param, "num_trees", 0, MAX_SIZE)
    parallel = _decimal(param, "num_parallel_tree", 1, MAX_SIZE)
    trees = model.get("trees")
    groups = _integers(model.get("tree_info"), "its tree_info")
    if not isinstance(trees, list) or len(trees) != count or len(groups) != count:
        raise Damaged(f"it does not hold the {count:,} trees and tree groups it declares")
    if ((groups < 0) | (groups >= outputs)).any():
        raise Damaged(f"a tree belongs to a group past the model's {outputs:,} outputs")
    rounds = _integers(model.get("iteration_indptr"), "its iteration_indptr")
    layer = parallel * outputs  # the trees of a round: num_parallel_tree of each output
    steps = np.diff(rounds)
    if not len(rounds) or rounds[0] != 0 or rounds[-1] != count or (steps != layer).any():
        raise Damaged("its iteration_indptr does not count its trees by round")
    if count and (groups != np.tile(np.repeat(np.arange(outputs), parallel), len(steps))).any():
        raise Damaged("its tree_info does not give each round's trees to each output in turn")
    cats = model.get("cats", {})
    if not isinstance(cats, dict) or any(len(_listed(cats.get(k, []), k)) for k in _NO_CATEGORIES):
        raise Damaged("it holds categories, which sqlml's models have not")
    for index, tree in enumerate(trees):
        tree = _object(tree, f"tree {index}")
        if not _is_int(tree.get("id")) or tree["id"] != index:
            raise Damaged(f"tree {index} has the id {tree.get('id')!r}")
    _check_trees(trees, features)
    return count


def _check_trees(trees: list[dict[str, Any]], features: int) -> None:
    """Check every tree's arrays and links, all trees at once (their nodes numbered one
    after the other)."""
    sizes, arrays = [], {name: [] for name in _INDEX_ARRAYS}
    for index, tree in enumerate(trees):
        param = _object(tree.get("tree_param"), f"tree {index}'s tree_param")
        nodes = _decimal(param, "num_nodes", 1, MAX_SIZE)
        if _decimal(param, "num_feature", 0, MAX_SIZE) != features:
            raise Damaged(f"tree {index} takes other features than the model")
        if _decimal(param, "size_leaf_vector", 0, MAX_SIZE) > 1:
            raise Damaged(f"tree {index} has several targets")
        _decimal(param, "num_deleted", 0, nodes)
        for name in _INDEX_ARRAYS:
            arrays[name].append(_integers(tree.get(name), f"tree {index}'s {name}"))
        for name in _NUMBER_ARRAYS:
            arrays.setdefault(name, []).append(_numbers(tree.get(name), f"tree {index}'s {name}"))
        if any(len(values[-1]) != nodes for values in arrays.values()):
            raise Damaged(
                f"tree {index} does not hold an entry of each array for its {nodes:,} nodes"
            )
        kinds = _integers(
            tree.get("split_type", np.zeros(nodes, np.uint8)), f"tree {index}'s split_type"
        )
        if (
            len(kinds) != nodes
            or kinds.any()
            or any(len(_listed(tree.get(name, []), name)) for name in _CATEGORY_ARRAYS)
        ):
            raise Damaged(f"tree {index} has categorical splits, which sqlml's models have not")
        sizes.append(nodes)
    if not trees:
        return
    _links(
        np.asarray(sizes, np.int64),
        {k: np.concatenate(v).astype(np.int64) for k, v in arrays.items() if k in _INDEX_ARRAYS},
        trees,
        features,
    )


def _links(
    sizes: np.ndarray, arrays: dict[str, np.ndarray], trees: list[dict[str, Any]], features: int
) -> None:
    """Check the links of all trees' nodes, numbered one tree after the other."""
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    size = np.repeat(sizes, sizes)  # of each node's tree
    base = np.repeat(starts, sizes)  # each node's tree's first node
    local = np.arange(len(size)) - base
    left, right = arrays["left_children"], arrays["right_children"]
    parents, splits, default_left = (
        arrays["parents"],
        arrays["split_indices"],
        arrays["default_left"],
    )
    leaf = left == -1
    split = ~leaf

    def refuse(bad: np.ndarray, what: str) -> None:
        if bad.any():
            node = int(np.argmax(bad))
            tree = int(np.searchsorted(starts, node, side="right") - 1)
            raise Damaged(f"tree {tree}, node {node - starts[tree]}: {what}")

    refuse(split & ((left == local) | (right == local)), "it links to itself")
    refuse(split & ((left == 0) | (right == 0)), "it links to the root")
    refuse(split & ((left < 1) | (left + 1 >= size)), "its children are not nodes of the tree")
    refuse(split & (right != left + 1), "its children are not two consecutive nodes")
    refuse(leaf & (right != -1), "it has a right child but no left one")
    refuse((default_left != 0) & (default_left != 1), "its default_left is not 0 or 1")
    root = local == 0
    refuse(root & ~np.isin(parents, ROOT_PARENTS), "the root has a parent")
    refuse(~root & ((parents < 0) | (parents >= size)), "its parent is not a node of the tree")
    children = np.concatenate([left[split], right[split]]) + np.concatenate([base[split]] * 2)
    linked = np.bincount(children, minlength=len(size))
    refuse(linked > 1, "it is the child of several nodes")
    owners = np.concatenate([local[split]] * 2)
    wrong = np.zeros(len(size), bool)
    wrong[children] = parents[children] != owners
    refuse(wrong, "its parent is not the node whose child it is")
    reached = np.zeros(len(size), bool)
    level, depth = starts, 0
    while len(level):
        reached[level] = True
        inner = level[split[level]]
        level = np.concatenate([left[inner], right[inner]]) + np.concatenate([base[inner]] * 2)
        depth += 1
        if depth > MAX_TREE_DEPTH and len(level):
            refuse(
                np.isin(np.arange(len(size)), level), f"it is deeper than {MAX_TREE_DEPTH} levels"
            )
    deleted = (splits == DELETED) & (default_left == 1)
    refuse(reached & deleted, "it is marked deleted but is in the tree")
    refuse(~reached & ~deleted, "it is not in the tree (no node links to it)")
    refuse(deleted & split, "it is marked deleted but has children")
    outside = reached & split & ((splits < 0) | (splits >= features))
    refuse(
        outside,
        f"it splits on feature index {splits[np.argmax(outside)]}, but the model takes "
        f"{features:,} features",
    )
    counts = np.add.reduceat(deleted.astype(np.int64), starts)
    for index, (tree, count) in enumerate(zip(trees, counts, strict=True)):
        declared = int(tree["tree_param"]["num_deleted"])
        if declared != count:
            raise Damaged(f"tree {index} declares {declared} deleted nodes, not {count}")


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Damaged(f"{what} is not an object")
    return value


def _decimal(param: dict[str, Any], key: str, least: int, most: int = MAX_SIZE) -> int:
    """XGBoost's parameter ``key`` of ``param``: a decimal integer in [least, most]."""
    text = param.get(key)
    if not (isinstance(text, str) and text.isascii() and text.isdecimal() and len(text) < 12):
        raise Damaged(f"its {key} is not a number")
    value = int(text)
    if not least <= value <= most:
        raise Damaged(f"its {key} is {value:,}, out of range")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _sequence(value: Any) -> bool:
    return isinstance(value, list | np.ndarray)


def _listed(value: Any, what: str) -> Sequence[Any]:
    if not _sequence(value):
        raise Damaged(f"its {what} is not a list")
    return value


def _integers(value: Any, what: str) -> np.ndarray:
    """``value`` (a typed array or a JSON list) as integers, one dimension."""
    array = _array(value, what)
    if array.dtype.kind not in "iu" and len(array):
        raise Damaged(f"{what} are not integers")
    return array.astype(np.int64)


def _numbers(value: Any, what: str) -> np.ndarray:
    array = _array(value, what)
    if array.dtype.kind not in "iuf" and len(array):
        raise Damaged(f"{what} are not numbers")
    return array


def _array(value: Any, what: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if not isinstance(value, list) or any(isinstance(v, bool) for v in value):
        raise Damaged(f"{what} are not a list of numbers")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        raise Damaged(f"{what} are not a list of numbers") from None
    if array.ndim != 1:
        raise Damaged(f"{what} are not a list of numbers")
    return array
