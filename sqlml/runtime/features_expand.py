"""COLUMN's patterns and ``*`` made into one feature per column they name, from the SELECT's
result (docs/features.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from sqlml.datasources import Columns
from sqlml.errors import ModelError
from sqlml.ir import FeatureColumn
from sqlml.semantics.column_patterns import STAR, is_pattern, matching


def expand(
    columns: Columns, features: list[FeatureColumn], excluded: Iterable[str | None]
) -> list[FeatureColumn]:
    """``features`` with each pattern repeated for every selected column it matches and
    ``*`` replaced by the selected columns no other feature of its target reads; neither
    takes a column in ``excluded`` (the label)."""
    skipped = set(excluded)
    selected = [name for name in columns if name not in skipped]
    expanded = [each for feature in features for each in _matches(feature, columns, selected)]
    twice = next((name for name, n in Counter(f.name for f in expanded).items() if n > 1), None)
    if twice is not None:
        raise ModelError(
            f"feature {twice} is listed twice: a column pattern repeats it",
            hint="narrow the pattern, or leave the column it matches out of COLUMN",
        )
    read: dict[str | None, set[str]] = {}
    for feature in expanded:
        read.setdefault(feature.target, set()).update(sources(feature))
    return [
        each
        for feature in expanded
        for each in (
            [
                FeatureColumn("auto", name, target=feature.target)
                for name in selected
                if name not in read[feature.target]
            ]
            if feature.kind == "auto" and feature.column == STAR
            else [feature]
        )
    ]


def sources(feature: FeatureColumn) -> list[str]:
    """The columns a feature reads, its inputs' included."""
    own = [feature.column] if feature.column else []
    return own + [name for item in feature.inputs for name in sources(item)]


def _matches(feature: FeatureColumn, columns: Columns, selected: list[str]) -> list[FeatureColumn]:
    """The feature once per column its pattern matches (as it is if it has none)."""
    patterns = list(
        dict.fromkeys(name for name in sources(feature) if name not in columns and is_pattern(name))
    )
    if not patterns:
        return [feature]
    if len(patterns) > 1:
        raise ModelError(
            f"feature {feature.name} holds more than one column pattern",
            hint="give each feature at most one pattern; name the other columns",
        )
    names = matching(patterns[0], selected)
    if not names:
        raise ModelError(
            f"the pattern {patterns[0]} matches no column of the SELECT but the label",
            hint=f"the SELECT returns: {', '.join(columns)}",
        )
    return [_renamed(feature, patterns[0], name) for name in names]


def _renamed(feature: FeatureColumn, old: str, new: str) -> FeatureColumn:
    return replace(
        feature,
        column=new if feature.column == old else feature.column,
        inputs=[_renamed(item, old, new) for item in feature.inputs],
    )


def check_columns(
    columns: Columns, features: list[FeatureColumn], source: str = "the SELECT"
) -> None:
    """A :class:`ModelError` if a feature reads a column that ``source`` did not return, or
    holds a pattern that matches none of them."""
    needed = dict.fromkeys(name for feature in features for name in sources(feature))
    for name in needed:
        if name not in columns and is_pattern(name) and not matching(name, columns):
            raise ModelError(
                f"the pattern {name} matches no column of the result of {source}",
                hint=f"{source} returns: {', '.join(columns)}",
            )
    missing = [name for name in needed if name not in columns and not is_pattern(name)]
    missing = [name for name in missing if name != STAR]
    if missing:
        raise ModelError(
            f"feature column {', '.join(missing)} is not in the result of {source}",
            hint=f"{source} returns: {', '.join(columns)}",
        )
