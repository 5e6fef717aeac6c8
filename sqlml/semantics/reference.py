"""The attribute reference, generated from the schemas: ``python -m sqlml.semantics.reference``.

docs/attributes.md is this module's output; a test keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlml.semantics.attributes import Attr
from sqlml.semantics.estimators import ESTIMATORS
from sqlml.semantics.search_spaces import SEARCH_ATTRIBUTES
from sqlml.statements import KINDS, resolve


def attributes_markdown() -> str:
    """Markdown tables of every estimator's and statement's attributes."""
    parts = [
        "# Attribute reference\n",
        "Generated from sqlml's attribute schemas by `python -m sqlml.semantics.reference`;",
        "do not edit by hand. Bounds are inclusive unless marked with `>`. Attributes marked",
        "*(architecture)* define the model: TO TRAIN ... USING takes them from the base model.",
        "An attribute is also taken under the other names it lists (SQLFlow's, XGBoost's), and",
        "under SQLFlow's old names (*formerly*), with a warning naming the current one;",
        "one marked *not applied* is checked, then left out with a warning.\n",
    ]
    for estimator in ESTIMATORS.values():
        fixed = ", ".join(f"{k} = {v}" for k, v in estimator.fixed.items())
        parts.append(f"## {estimator.name}\n")
        parts.append(f"{estimator.doc} ({estimator.family}{'; ' + fixed if fixed else ''}).\n")
        kinds = [kind.upper() for kind in estimator.feature_kinds if kind != "auto"]
        parts.append(f"Feature columns (see [features.md](features.md)): {', '.join(kinds)}.\n")
        parts.append(_table(estimator.attributes))
    for kind in KINDS.values():
        if kind.attributes is not None and kind.grammar is not None:
            title = " / ".join(f"TO {word}" for word in kind.grammar.clauses)
            parts.append(f"## {title}\n")
            parts.append(_table(resolve(kind.attributes)))
    parts.append("## TO TRAIN: hyperparameter search\n")
    parts.append(_table(SEARCH_ATTRIBUTES))
    return "\n".join(parts)


def _table(schema: Mapping[str, Attr]) -> str:
    lines = [
        "| attribute | type | default | allowed | description |",
        "| --- | --- | --- | --- | --- |",
    ]
    for attr in schema.values():
        default = "" if attr.default is None else f"`{attr.default}`"
        doc = attr.doc.replace("; not applied:", "; *not applied*:")
        if attr.aliases:
            doc += f" (also {', '.join(f'`{alias}`' for alias in attr.aliases)})"
        if attr.former:
            doc += f" (formerly {', '.join(f'`{name}`' for name in attr.former)}: a warning)"
        if attr.architecture:
            doc += " *(architecture)*"
        lines.append(f"| `{attr.name}` | {attr.type} | {default} | {_allowed(attr)} | {doc} |")
    return "\n".join(lines) + "\n"


def _allowed(attr: Attr) -> str:
    if attr.choices:
        return ", ".join(f"`{choice}`" for choice in attr.choices)
    low = (
        "" if attr.minimum is None else f"{'>' if attr.exclusive_minimum else '≥'} {attr.minimum:g}"
    )
    high = "" if attr.maximum is None else f"≤ {attr.maximum:g}"
    return ", ".join(part for part in (low, high) if part)


if __name__ == "__main__":
    print(attributes_markdown(), end="")
