"""A model family's code stays in its folder: no module outside ``sqlml/models/<family>/``
imports ``sqlml.models.<family>`` or names the family or one of its estimators; the rest of
sqlml asks the family's declaration (``sqlml.models.family(name)``, an estimator's
``family``) instead.

Every module of ``sqlml/`` is read as tokens: its identifiers and its string literals
(f-strings' text too), but not its comments and docstrings, which explain. A family's name
counts as a word of an identifier or a string (``xgboost_metric``, ``"XGBoost's"``,
``XGBoostJob``), its estimators' names as they are written (``XGBClassifier``, not the
``KMeans`` of ``sklearn.cluster.KMeans``). The families and their estimators come from the
registry.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from sqlml.models import families

PACKAGE = Path(__file__).resolve().parent.parent / "sqlml"

# Family names that are ordinary words sqlml uses in other senses: for them only imports
# and their estimators' names are looked for.
ORDINARY_WORDS = {
    "cluster": "Kubernetes clusters, the clustering task and its metrics",
    "graph": "the dependency graph of a program's statements",
    "outlier": "the outlier detectors' task and metric (sklearn's detect outliers too)",
    "onnx": "ONNX, the format sqlml export --format onnx writes (Family.to_onnx) for several "
    "families",
}

# Where a module outside a family's folder may name it: (module path, family) -> why.
ALLOWED = {
    ("sqlml/models/attributes.py", "xgboost"): (
        "the shared train.* attributes' help (the attribute reference) says which families "
        "apply them"
    ),
    ("sqlml/models/attributes.py", "keras"): "the same help texts",
    ("sqlml/plugins.py", "xgboost"): (
        "the registry orders the built-in families (the estimator table's order: reference, "
        "completion); the folders are found by scanning"
    ),
    ("sqlml/plugins.py", "keras"): "the same order",
    ("sqlml/plugins.py", "timeseries"): "the same order",
    ("sqlml/plugins.py", "sklearn"): "the same order",
    ("sqlml/semantics/reference.py", "xgboost"): (
        "the attribute reference's preamble names the vocabularies an attribute's aliases come from"
    ),
    ("sqlml/semantics/search_spaces.py", "keras"): (
        "search.metric's help: Keras's metric names are a vocabulary of validation.metrics "
        "(sqlml.metrics), not the family"
    ),
    ("sqlml/statements/evaluate/analysis.py", "keras"): "validation.metrics' help, the same",
    ("sqlml/models/graph/estimators.py", "keras"): "validation.metrics' help, the same",
    ("sqlml/models/xgboost/__init__.py", "sklearn"): (
        "the scikit-learn library, which XGBoost's own modules import and sqlml hides from them "
        "(unused_imports), not the family"
    ),
}


@cache
def marks() -> dict[str, list[re.Pattern[str]]]:
    """The patterns that name each family: its name as a word (unless an ordinary one),
    ``sqlml.models.<name>``, and each of its estimators' names."""
    found: dict[str, list[re.Pattern[str]]] = {}
    for name, family in families().items():
        words = [rf"\bsqlml\.models\.{name}\b"]
        if name not in ORDINARY_WORDS:
            words.append(rf"(?<![A-Za-z0-9.])(?i:{name})(?![a-z0-9.])")
        words += [rf"(?<![\w.])(?i:{re.escape(e.name)})(?![\w.])" for e in family.estimators()]
        found[name] = [re.compile(word) for word in words]
    return found


def _docstrings(tree: ast.Module) -> set[int]:
    """The lines where a docstring (or another lone string statement) starts."""
    return {
        node.value.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def words(path: Path) -> Iterator[tuple[int, str]]:
    """The identifiers, imported module paths and string literals of ``path``, by line."""
    source = path.read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module + "".join(f" {a.name}" for a in node.names)
            yield from ((node.lineno, f"{node.module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
    skipped = _docstrings(tree)
    kinds = {tokenize.NAME, tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in kinds and not (
            token.type == tokenize.STRING and token.start[0] in skipped
        ):
            yield token.start[0], token.string


def _own_family(relative: str) -> str | None:
    parts = relative.split("/")
    return parts[2] if len(parts) > 3 and parts[:2] == ["sqlml", "models"] else None


def leaks(path: Path) -> list[str]:
    """Where ``path`` names a family it is not in, beyond :data:`ALLOWED`."""
    relative = path.relative_to(PACKAGE.parent).as_posix()
    own = _own_family(relative)
    found = []
    for line, text in words(path):
        for name, patterns in marks().items():
            if name == own or (relative, name) in ALLOWED:
                continue
            if any(pattern.search(text) for pattern in patterns):
                found.append(f"{relative}:{line}: names the {name} family: {text[:70]!r}")
    return sorted(set(found))


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_outside_a_family_names_it(path):
    assert leaks(path) == []


def test_the_allow_list_is_needed():
    """Each allowed entry still names its family (else it goes)."""
    for module, name in ALLOWED:
        path = PACKAGE.parent / module
        texts = [text for _, text in words(path)]
        assert any(p.search(t) for p in marks()[name] for t in texts), (module, name)


def test_the_scan_sees_what_it_must():
    """The patterns find an import, a string and an identifier naming a family, and not
    an estimator's name inside another's or an ordinary word."""
    xgboost = marks()["xgboost"]
    for text in (
        "sqlml.models.xgboost.objectives",
        "xgboost",
        "XGBoostExplainer",
        "xgboost_eval_metric_problem",
        "XGBClassifier",
    ):
        assert any(p.search(text) for p in xgboost), text
    for text in ("sklearn.cluster.KMeans", "a Kubernetes cluster"):
        assert not any(p.search(text) for p in marks()["cluster"]), text
