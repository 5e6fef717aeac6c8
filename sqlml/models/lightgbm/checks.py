"""Checks on a LightGBM model's text before LightGBM reads it (no LightGBM needed).

LightGBM's loader follows what the text says without bounds checks: a child index past the
tree's nodes, a split on a feature past ``max_feature_idx``, arrays shorter than the tree's
leaves or a ``tree_sizes`` entry that does not measure its tree crash the process or read
memory it does not own. :func:`checked_text` refuses them all, and what sqlml does not read
(categorical splits, linear trees); LightGBM reads only the text up to the trees' end
(:func:`trees_text`). A tree of ``num_leaves`` L has L - 1 split nodes (0 the
root); a child c >= 0 is split node c, c < 0 leaf -c - 1; every node but the root and every
leaf is some node's child once, reached from the root.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from sqlml.models.checks import MAX_MODEL_BYTES
from sqlml.models.metadata import MAX_SIZE

MAX_TREE_DEPTH = 1024
_DEFAULT_NAME = re.compile(r"Column_[0-9]+")
_SPLITS = ("split_feature", "threshold", "decision_type", "left_child", "right_child")
_LEAVES = ("leaf_value",)
_OPTIONAL_SPLITS = ("split_gain", "internal_value", "internal_weight", "internal_count")
_OPTIONAL_LEAVES = ("leaf_weight", "leaf_count")
_CLASSIFYING = ("binary", "multiclass", "multiclassova")
# What LightGBM writes: the header's keys, a tree's (of numerical splits, not linear).
_HEADER = frozenset(
    {
        "version",
        "num_class",
        "num_tree_per_iteration",
        "label_index",
        "max_feature_idx",
        "objective",
        "average_output",
        "feature_names",
        "monotone_constraints",
        "feature_infos",
        "tree_sizes",
    }
)
_TREE = frozenset(
    {"num_leaves", "num_cat", "is_linear", "shrinkage", *_SPLITS, *_LEAVES}
    | {*_OPTIONAL_SPLITS, *_OPTIONAL_LEAVES}
)


class Refused(Exception):
    """What is wrong with the model's text, in a few words."""


@dataclass(frozen=True)
class Header:
    """What the text's header says: the features, the objective, the trees a round."""

    features: int
    names: list[str] | None  # None: LightGBM's defaults, Column_0 ...
    objective: str
    classes: int  # num_class
    per_round: int  # num_tree_per_iteration
    trees: int


def text_problem(data: bytes, most_features: int = MAX_SIZE) -> str | None:
    """What is wrong with the model text ``data`` (taking at most ``most_features``), or None."""
    try:
        header = checked_text(data)
    except Refused as why:
        return str(why)
    if header.features > most_features:
        return (
            f"it takes {header.features:,} features, but its feature columns make {most_features:,}"
        )
    return None


def trees_text(data: bytes) -> str:
    """The checked text up to its trees' end (:func:`checked_text`): what LightGBM reads. The
    rest (feature importances, training parameters, pandas' categories) scoring does not
    need, and LightGBM's parser of the parameters crashes on a malformed one."""
    text = data.decode("ascii")
    return text[: text.index("\nend of trees\n") + 1] + "end of trees\n"


def checked_text(data: bytes) -> Header:
    """The header of the model text ``data``, every tree checked (see the module); else
    :class:`Refused`."""
    if len(data) > MAX_MODEL_BYTES:
        raise Refused(f"it is {len(data):,} bytes, more than sqlml loads ({MAX_MODEL_BYTES:,})")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise Refused("it is not LightGBM's text format (it is not ASCII text)") from None
    if "\r" in text or "\0" in text:
        raise Refused("it holds carriage returns or NUL characters, which LightGBM does not write")
    lines = text.split("\n")
    if lines[0] != "tree":
        raise Refused("it is not LightGBM's text format (its first line is not 'tree')")
    end = _index(lines, "end of trees")
    starts = [i for i in range(end) if lines[i].startswith("Tree=")]
    head = _fields(lines[1 : starts[0] if starts else end], "its header")
    header = _header(head, len(starts))
    sizes = head.get("tree_sizes")
    offsets = [len("\n".join(lines[:i])) + 1 for i in [*starts, end]]
    if sizes is not None:
        declared = _integers(sizes, "tree_sizes", 0)
        measured = np.diff(offsets)
        if len(declared) != len(starts) or (declared != measured).any():
            raise Refused("its tree_sizes do not measure its trees")
    for index, (first, last) in enumerate(zip(starts, [*starts[1:], end], strict=True)):
        if lines[first] != f"Tree={index}":
            raise Refused(f"its tree {index} is named {lines[first]!r}")
        _tree(index, _fields(lines[first + 1 : last], f"tree {index}"), header.features)
    return header


def _known(fields: dict[str, str], known: frozenset[str], where: str) -> None:
    """A :class:`Refused` naming a key LightGBM does not write there (or sqlml does not read:
    categorical splits, linear trees)."""
    other = sorted(set(fields) - known)
    if other:
        raise Refused(f"{where} holds {other[0]!r}, which sqlml does not import")


def _index(lines: list[str], wanted: str) -> int:
    try:
        return lines.index(wanted)
    except ValueError:
        raise Refused(f"it is cut short: it has no line {wanted!r}") from None


def _fields(lines: list[str], where: str) -> dict[str, str]:
    """``key=value`` lines (blank ones skipped) as a dict; a key given twice is refused."""
    found: dict[str, str] = {}
    for line in lines:
        if not line:
            continue
        key, equals, value = line.partition("=")
        if not equals:
            found[key] = ""  # a flag, as average_output
            continue
        if key in found:
            raise Refused(f"{where} gives {key} twice")
        found[key] = value
    return found


def _header(head: dict[str, str], trees: int) -> Header:
    _known(head, _HEADER, "its header")
    features = _integer(head, "max_feature_idx", 0, MAX_SIZE - 1) + 1
    classes = _integer(head, "num_class", 1)
    per_round = _integer(head, "num_tree_per_iteration", 1)
    if per_round not in (1, classes):
        raise Refused("its num_tree_per_iteration is neither 1 nor its num_class")
    if trees % per_round:
        raise Refused(f"its {trees} trees are not whole rounds of {per_round}")
    constraints = head.get("monotone_constraints")
    if constraints is not None and len(_integers(constraints, "its monotone_constraints")) != (
        features
    ):
        raise Refused(f"its monotone_constraints do not constrain its {features:,} features")
    names = head.get("feature_names", "").split(" ")
    infos = head.get("feature_infos", "").split(" ")
    if len(names) != features or len(infos) != features:
        raise Refused(f"its feature_names or feature_infos do not name its {features:,} features")
    objective = _objective(head.get("objective", ""), classes)
    if objective in _CLASSIFYING and classes != (1 if objective == "binary" else per_round):
        raise Refused(f"its num_class does not fit its objective {objective}")
    default = all(_DEFAULT_NAME.fullmatch(name) for name in names)
    return Header(features, None if default else names, objective, classes, per_round, trees)


def _objective(text: str, classes: int) -> str:
    """The objective's name, its parameters checked: ``key:number`` (finite), or ``sqrt``;
    its ``num_class`` the header's (LightGBM corrupts its memory scoring otherwise)."""
    name, *parameters = text.split(" ")
    if not re.fullmatch(r"[a-z_0-9]{1,40}", name):
        raise Refused("it has no objective")
    for parameter in parameters:
        key, colon, value = parameter.partition(":")
        try:
            number = float(value) if colon else None
        except ValueError:
            number = None
        if parameter != "sqrt" and (number is None or not math.isfinite(number)):
            raise Refused(f"its objective's parameter {parameter!r} is malformed")
        if key == "num_class" and number != classes:
            raise Refused(f"its objective's num_class is not its num_class ({classes})")
    if name in _CLASSIFYING[1:] and not any(p.startswith("num_class:") for p in parameters):
        raise Refused(f"its objective {name} does not say its num_class ({classes})")
    return name


def _tree(index: int, tree: dict[str, str], features: int) -> None:
    where = f"tree {index}"
    _known(tree, _TREE, where)
    leaves = _integer(tree, "num_leaves", 1, where=where)
    if _integer(tree, "num_cat", 0, where=where):
        raise Refused(f"{where} has categorical splits, which sqlml does not import")
    if tree.get("is_linear", "0") != "0":
        raise Refused(f"{where} is a linear tree, which sqlml does not import")
    values = _numbers(tree.get("leaf_value"), f"{where}'s leaf_value")
    if len(values) != leaves or not np.isfinite(values).all():
        raise Refused(f"{where} does not hold {leaves} finite leaf values")
    for name in _OPTIONAL_LEAVES:
        if name in tree and len(_numbers(tree[name], f"{where}'s {name}")) != leaves:
            raise Refused(f"{where}'s {name} does not hold a value a leaf")
    if leaves == 1:
        return
    arrays = {name: tree.get(name) for name in _SPLITS}
    for name in _OPTIONAL_SPLITS:
        if name in tree and len(_numbers(tree[name], f"{where}'s {name}")) != leaves - 1:
            raise Refused(f"{where}'s {name} does not hold a value a split")
    ints = {
        name: _integers(arrays[name], f"{where}'s {name}")
        for name in _SPLITS
        if name != "threshold"
    }
    thresholds = _numbers(arrays["threshold"], f"{where}'s threshold")
    if any(len(a) != leaves - 1 for a in [*ints.values(), thresholds]):
        raise Refused(f"{where} does not hold an entry of each array for its {leaves - 1} splits")
    split = ints["split_feature"]
    if ((split < 0) | (split >= features)).any():
        bad = int(split[(split < 0) | (split >= features)][0])
        raise Refused(f"{where} splits on feature index {bad}, but the model takes {features:,}")
    kinds = ints["decision_type"]
    if ((kinds < 0) | (kinds > 15) | (kinds & 1).astype(bool)).any() or np.isnan(thresholds).any():
        raise Refused(f"{where} has a categorical or malformed split")
    _links(where, ints["left_child"], ints["right_child"], leaves)


def _links(where: str, left: np.ndarray, right: np.ndarray, leaves: int) -> None:
    """Every child in range, each split node but the root and each leaf a child once, and
    all reached from the root."""
    children = np.concatenate([left, right])
    splits = leaves - 1
    if ((children >= splits) | (children < -leaves) | (children == 0)).any():
        raise Refused(f"{where} links to a node or leaf it does not have")
    nodes = np.bincount(children[children >= 0], minlength=splits)
    ends = np.bincount(-children[children < 0] - 1, minlength=leaves)
    if (nodes[1:] != 1).any() or (ends != 1).any():
        raise Refused(f"{where} links a node or leaf twice, or not at all")
    level, depth, reached = np.array([0]), 0, 0
    while len(level):
        reached += len(level)
        if reached > splits or depth > MAX_TREE_DEPTH:
            raise Refused(f"{where} loops or is deeper than {MAX_TREE_DEPTH} levels")
        below = np.concatenate([left[level], right[level]])
        level, depth = below[below >= 0], depth + 1
    if reached != splits:
        raise Refused(f"{where} has split nodes its root does not reach")


def _integer(
    fields: dict[str, str], key: str, least: int, most: int = MAX_SIZE, where: str = "it"
) -> int:
    text = fields.get(key, "")
    if (
        not (text.isascii() and text.isdecimal() and len(text) < 12)
        or not least <= int(text) <= most
    ):
        raise Refused(f"{where} has no valid {key}")
    return int(text)


def _integers(text: Any, what: str, least: int | None = None) -> np.ndarray:
    parts = (text or "").split(" ") if text else []
    if not all(re.fullmatch(r"-?[0-9]{1,11}", part) for part in parts):
        raise Refused(f"{what} are not integers")
    found = np.array([int(p) for p in parts], dtype=np.int64)
    if least is not None and (found < least).any():
        raise Refused(f"{what} are out of range")
    return found


def _numbers(text: Any, what: str) -> np.ndarray:
    parts = (text or "").split(" ") if text else []
    try:
        found = np.array([float(p) for p in parts], dtype=np.float64)
    except ValueError:
        raise Refused(f"{what} are not numbers") from None
    return found
