"""The estimator table: the estimators of the registered model families (:mod:`sqlml.models`),
looked up by name for analysis, check, completion and the attribute reference."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping

from sqlml.models.estimator import Estimator
from sqlml.models.registry import estimators, families
from sqlml.semantics.user_models import builder_kind

__all__ = [
    "ESTIMATORS",
    "Estimator",
    "closest_estimator",
    "find_estimator",
    "user_estimator",
]


class _Table(Mapping[str, Estimator]):
    """The estimators of the families registered at the time of each lookup, by name."""

    def __getitem__(self, name: str) -> Estimator:
        return estimators()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(estimators())

    def __len__(self) -> int:
        return len(estimators())


ESTIMATORS: Mapping[str, Estimator] = _Table()


def find_estimator(name: str) -> Estimator | None:
    """The estimator called ``name`` (case-insensitive), or None."""
    return estimators(casefold=True).get(name.lower())


def closest_estimator(name: str) -> str | None:
    """The known estimator name nearest to ``name``, for "did you mean" hints: one of the
    same task must be near without its task (not LinearClassifier for BoostedTreesClassifier)."""
    known = estimators(casefold=True)
    wanted = name.lower()
    found = difflib.get_close_matches(wanted, known, n=3, cutoff=0.5)
    return next((known[close].name for close in found if _alike(wanted, close)), None)


_TASK_WORDS = ("classifier", "regressor")


def _alike(wanted: str, known: str) -> bool:
    """Whether two lower-case estimator names are alike once their package (``xgboost.``,
    ``sqlflow_models.``) and, when both end in it, their task word are set aside."""
    wanted, known = wanted.rpartition(".")[2], known.rpartition(".")[2]
    for word in _TASK_WORDS:
        if wanted.endswith(word) and known.endswith(word):
            wanted, known = wanted.removesuffix(word), known.removesuffix(word)
    return difflib.SequenceMatcher(None, wanted, known).ratio() >= 0.5


def user_estimator(name: str) -> Estimator | None:
    """The estimator of the user's model builder a dotted ``module.function`` name names
    (from the first family that takes builders), or None if the module or the function does
    not exist, or no family takes builders.

    The module is read, not imported (:mod:`sqlml.semantics.user_models`): a name bound to
    something other than a function is a :class:`TypeError`.
    """
    if builder_kind(name) is None:
        return None
    found = (family.builder(name) for family in families().values())
    return next((estimator for estimator in found if estimator is not None), None)
